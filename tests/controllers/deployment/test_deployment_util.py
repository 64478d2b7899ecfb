"""deployment_util and deployment_conditions: fenceposts, how far a new ReplicaSet may
scale, proportional scaling, finding the new ReplicaSet, revision annotations, and the
condition bookkeeping."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import kubegc.controllers.deployment.conditions as dcond
import kubegc.controllers.deployment.util as du
from kubegc.api.types import Obj

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def deployment(replicas: int, surge: object = "25%", unavailable: object = "25%") -> Obj:
    return {"metadata": {"name": "web", "generation": 1}, "spec": {
        "replicas": replicas, "progressDeadlineSeconds": 600,
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}},
        "strategy": {"type": "RollingUpdate",
                     "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}}}


def rs(name: str, replicas: int, *, available: int = 0, created: str = "2026-01-01T00:00:00Z",
       annotations: dict[str, str] | None = None, image: str = "nginx") -> Obj:
    return {"metadata": {"name": name, "uid": name, "creationTimestamp": created,
                         "annotations": dict(annotations or {})},
            "spec": {"replicas": replicas, "template": {
                "metadata": {"labels": {"app": "web", "pod-template-hash": name}},
                "spec": {"containers": [{"image": image}] if image != "nginx" else []}}},
            "status": {"replicas": replicas, "availableReplicas": available}}


@pytest.mark.parametrize(("surge", "unavailable", "desired", "expected"), [
    pytest.param("25%", "25%", 10, (3, 2), id="percent-rounding"),
    pytest.param(1, 0, 3, (1, 0), id="ints"),
    pytest.param("0%", "10%", 3, (0, 1), id="both-zero-means-one-unavailable"),
    pytest.param(None, None, 4, (0, 1), id="unset"),
])
def test_resolve_fenceposts(surge: object, unavailable: object, desired: int,
                            expected: tuple[int, int]) -> None:
    assert du.resolve_fenceposts(surge, unavailable, desired) == expected


@pytest.mark.parametrize(("old_replicas", "new_replicas", "expected"), [
    pytest.param(0, 0, 4, id="fresh"),
    pytest.param(4, 0, 1, id="surge-of-one"),
    pytest.param(4, 1, 1, id="at-max-surge"),
    pytest.param(2, 2, 3, id="room-again"),
])
def test_new_rs_new_replicas(old_replicas: int, new_replicas: int, expected: int) -> None:
    d = deployment(4)
    new = rs("new", new_replicas)
    assert du.new_rs_new_replicas(d, [rs("old", old_replicas), new], new) == expected


def test_proportional_scaling_shares() -> None:
    d = deployment(20)  # scaled from 10 (max 13) to 20 (max 25): +12 to distribute
    annotations = {du.MAX_REPLICAS_ANNOTATION: "13"}
    big, small = rs("big", 8, annotations=annotations), rs("small", 5, annotations=annotations)
    first = du.get_proportion(big, d, 12, 0)
    second = du.get_proportion(small, d, 12, first)
    assert (first, second) == (7, 5)


def test_find_new_replica_set_ignores_the_hash_and_prefers_the_oldest() -> None:
    d = deployment(1)
    a = rs("a", 1, created="2026-01-02T00:00:00Z")
    b = rs("b", 1, created="2026-01-01T00:00:00Z")
    other = rs("c", 1, image="nginx:2")
    assert du.find_new_replica_set(d, [a, other, b]) is b
    a["spec"]["replicas"] = 0
    requiring, every = du.find_old_replica_sets(d, [a, other, b])
    assert [r["metadata"]["name"] for r in every] == ["a", "c"]
    assert [r["metadata"]["name"] for r in requiring] == ["c"]


def test_rolling_back_to_a_replica_set_records_its_old_revision() -> None:
    d = deployment(1)
    d["metadata"]["annotations"] = {"team": "a", du.REVISION_ANNOTATION: "7",
                                    "kubectl.kubernetes.io/last-applied-configuration": "{}"}
    old = rs("old", 0, annotations={du.REVISION_ANNOTATION: "1",
                                    du.REVISION_HISTORY_ANNOTATION: "0"})
    assert du.set_new_replica_set_annotations(d, old, "3", exists=True)
    assert old["metadata"]["annotations"] == {du.REVISION_ANNOTATION: "3",
                                              du.REVISION_HISTORY_ANNOTATION: "0,1",
                                              "team": "a"}
    fresh = rs("fresh", 0)
    du.set_new_replica_set_annotations(d, fresh, "4", exists=False)
    assert fresh["metadata"]["annotations"][du.DESIRED_REPLICAS_ANNOTATION] == "1"
    assert fresh["metadata"]["annotations"][du.MAX_REPLICAS_ANNOTATION] == "2"


def test_set_condition_keeps_transition_time_unless_status_changes() -> None:
    status: Obj = {}
    first = dcond.new_condition("Progressing", "True", "A", "m1", NOW)
    dcond.set_condition(status, first)
    later = datetime(2026, 1, 2, tzinfo=UTC)
    dcond.set_condition(status, dcond.new_condition("Progressing", "True", "A", "m2", later))
    assert status["conditions"] == [first]  # same status and reason: nothing changes
    dcond.set_condition(status, dcond.new_condition("Progressing", "True", "B", "m3", later))
    [cond] = status["conditions"]
    assert (cond["reason"], cond["lastTransitionTime"], cond["lastUpdateTime"]) == (
        "B", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")


@pytest.mark.parametrize(("status", "complete"), [
    pytest.param({"updatedReplicas": 2, "replicas": 2, "availableReplicas": 2,
                  "observedGeneration": 1}, True, id="complete"),
    pytest.param({"updatedReplicas": 2, "replicas": 3, "availableReplicas": 2,
                  "observedGeneration": 1}, False, id="old-replicas-left"),
    pytest.param({"updatedReplicas": 2, "replicas": 2, "availableReplicas": 2,
                  "observedGeneration": 0}, False, id="not-observed"),
])
def test_deployment_complete(status: Obj, complete: bool) -> None:
    assert dcond.deployment_complete(deployment(2), status) is complete


def test_deployment_timed_out() -> None:
    d = deployment(2)
    status = {"conditions": [dcond.new_condition("Progressing", "True", "ReplicaSetUpdated",
                                                 "", NOW)]}
    assert not dcond.deployment_timed_out(d, status, NOW.replace(minute=10))
    assert dcond.deployment_timed_out(d, status, NOW.replace(minute=10, second=1))
