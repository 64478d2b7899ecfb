"""``processPodOnNode``'s decision (cf. upstream's taint_eviction_test.go
``TestCreatePod``/``TestUpdateNode`` tables and ``TestGetMinTolerationTime``)."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api.taints import get_matching_tolerations, min_toleration_seconds, tolerates_taint
from kubegc.controllers.tainteviction import process_pod_on_node

TAINT = {"key": "maint", "value": "now", "effect": "NoExecute"}
OTHER = {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}


def tol(key: str = "maint", seconds: int | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": "Exists", "effect": "NoExecute", **extra}
    if seconds is not None:
        out["tolerationSeconds"] = seconds
    return out


@pytest.mark.parametrize(("tolerations", "taints", "after", "reason"), [
    pytest.param([], [], None, None, id="no-taints-keep"),
    pytest.param([], [TAINT], 0.0, "UntoleratedTaint", id="untolerated-now"),
    pytest.param([tol()], [TAINT], None, None, id="tolerated-forever"),
    pytest.param([tol(seconds=60)], [TAINT], 60.0, "TolerationExpired", id="tolerated-60s"),
    pytest.param([tol(seconds=60), tol(OTHER["key"], seconds=300)], [TAINT, OTHER], 60.0,
                 "TolerationExpired", id="smallest-of-two"),
    pytest.param([tol(seconds=60)], [TAINT, OTHER], 0.0, "UntoleratedTaint",
                 id="one-of-two-untolerated"),
    pytest.param([tol(seconds=-5)], [TAINT], 0.0, "TolerationExpired", id="negative-is-now"),
    pytest.param([{"key": "maint", "operator": "Equal", "value": "later",
                   "effect": "NoExecute"}], [TAINT], 0.0, "UntoleratedTaint",
                 id="value-mismatch"),
])
def test_process_pod_on_node(tolerations: list[dict[str, Any]], taints: list[dict[str, Any]],
                             after: float | None, reason: str | None) -> None:
    eviction = process_pod_on_node(tolerations, taints)
    if after is None:
        assert eviction is None
        return
    assert eviction is not None
    assert (eviction.after, eviction.reason) == (after, reason)


def test_the_untolerated_taint_and_the_deciding_toleration_are_named() -> None:
    untolerated = process_pod_on_node([tol(seconds=60)], [TAINT, OTHER])
    assert untolerated is not None and untolerated.taint == OTHER
    assert "no toleration" in untolerated.describe("n1")
    expiring = process_pod_on_node([tol(seconds=300), tol(OTHER["key"], seconds=30)],
                                   [TAINT, OTHER])
    assert expiring is not None and expiring.taint == OTHER
    assert expiring.toleration == tol(OTHER["key"], seconds=30)


def test_tolerations_match_as_upstream() -> None:
    assert tolerates_taint({"operator": "Exists"}, TAINT)  # empty key and effect: all
    assert not tolerates_taint({"key": "maint", "operator": "Exists", "effect": "NoSchedule"},
                               TAINT)
    assert tolerates_taint({"key": "maint", "value": "now"}, TAINT)  # empty operator: Equal
    assert not tolerates_taint({"key": "maint", "operator": "Lt", "value": "now"}, TAINT)
    assert get_matching_tolerations([], []) == (True, [])
    assert min_toleration_seconds([]) == 0.0
    assert min_toleration_seconds([tol()]) is None
