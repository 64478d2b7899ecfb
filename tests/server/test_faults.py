"""The fault object parsed at the edge (``server.faults.model``) and the registry's
counting (``count``, ``afterRequests``, ``probability`` with a ``seed``), in process;
tests/e2e/test_faults.py drives every action over HTTP."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api.auth import ADMIN, Attributes, UserInfo
from kubegc.api.errors import StatusError
from kubegc.server.faults import FaultRegistry
from kubegc.server.faults.model import parse_fault


def registry() -> FaultRegistry:
    return FaultRegistry(now=lambda: None, revision=lambda: 7)  # type: ignore[arg-type,return-value]


def attrs(verb: str = "update", resource: str = "configmaps", user: UserInfo = ADMIN,
          **extra: str) -> Attributes:
    return Attributes(user=user, verb=verb, resource=resource, api_version="v1", **extra)


@pytest.mark.parametrize("doc", [
    None, [], {"action": {"type": "error", "code": 418}}, {"action": {"type": "boom"}},
    {"action": {"type": "delay"}}, {"action": {"type": "delay", "seconds": -1}},
    {"action": {"type": "hang"}, "probability": 1.5},
    {"action": {"type": "hang"}, "probability": True},
    {"action": {"type": "hang"}, "count": -1}, {"action": {"type": "hang"}, "count": 1.5},
    {"action": {"type": "hang"}, "match": {"verb": 3}},
    {"action": {"type": "hang"}, "match": {"colour": "red"}},
    {"action": {"type": "hang"}, "match": {"userAgent": "("}},
    {"action": {"type": "hang"}, "match": {"verbs": "get"}},
    {"action": {"type": "staleReads"}},
    {"action": {"type": "staleReads", "seconds": 1, "revisionsBehind": 2}},
    {"action": {"type": "hang"}, "surprise": 1},
])
def test_bad_faults_are_400(doc: Any) -> None:
    with pytest.raises(StatusError) as raised:
        parse_fault(doc, "1", 0)
    assert raised.value.code == 400


def test_a_fault_answers_itself_with_id_and_fired() -> None:
    f = registry().add({"match": {"verb": "update", "userAgent": "^kopf", "group": ""},
                        "action": {"type": "error", "code": 429, "retryAfterSeconds": 2},
                        "count": 2, "afterRequests": 1})
    assert f.to_dict() == {
        "id": "1", "match": {"userAgent": "^kopf", "verb": "update", "group": ""},
        "action": {"type": "error", "code": 429, "retryAfterSeconds": 2},
        "probability": 1.0, "count": 2, "afterRequests": 1, "fired": 0}
    assert f.revision == 7


def test_match_fields() -> None:
    f = parse_fault({"match": {"user": "jane", "userAgent": "kopf/", "namespace": "a",
                               "name": "x", "subresource": "status", "verbs": ["patch"]},
                     "action": {"type": "hang"}}, "1", 0)
    jane = UserInfo("jane")
    ok = attrs("patch", user=jane, namespace="a", name="x", subresource="status")
    assert f.match.matches(ok, "python kopf/1.37")
    assert not f.match.matches(ok, "kubectl/v1.33")
    assert not f.match.matches(attrs("update", user=jane, namespace="a", name="x",
                                     subresource="status"), "kopf/1")
    assert not f.match.matches(attrs("patch", namespace="a", name="x",
                                     subresource="status"), "kopf/1")


def test_count_after_requests_and_a_seeded_probability() -> None:
    faults = registry()
    f = faults.add({"action": {"type": "error", "code": 500}, "count": 2,
                    "afterRequests": 1})
    answered = []
    for _ in range(5):
        hit = next((x for x in faults.matching(attrs(), "", frozenset({"error"}))
                    if x.admits()), None)
        if hit is not None:
            faults.fire(hit)
        answered.append(hit is not None)
    assert answered == [False, True, True, False, False]
    assert list(faults) == [] and f.fired == 2 and f.cleared.is_set()

    def draws(seed: int) -> list[bool]:
        g = parse_fault({"action": {"type": "hang"}, "probability": 0.5, "seed": seed},
                        "1", 0)
        return [g.admits() for _ in range(20)]
    assert draws(3) == draws(3) and 0 < sum(draws(3)) < 20


def test_an_exhausted_hang_stays_until_cleared() -> None:
    faults = registry()
    f = faults.add({"action": {"type": "hang"}, "count": 1})
    faults.fire(f)
    assert [x.id for x in faults] == ["1"] and not f.cleared.is_set()
    assert list(faults.matching(attrs(), "", frozenset({"hang"}))) == []
    faults.clear()
    assert f.cleared.is_set() and list(faults) == []
