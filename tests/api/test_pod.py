"""pod_util: which pods count as active, ready and available, and the order in which a
controller prefers to delete pods (``ActivePodsWithRanks``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kubegc.api.pod import (
    is_pod_active,
    is_pod_available,
    sort_pods_for_deletion,
)
from kubegc.api.types import Obj

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def pod(name: str, *, node: str = "n1", phase: str = "Running", ready: bool = True,
        ready_since: str = "2026-01-01T10:00:00Z", created: str = "2026-01-01T09:00:00Z",
        cost: int | None = None, restarts: int = 0, deleting: bool = False) -> Obj:
    meta: Obj = {"name": name, "uid": name, "creationTimestamp": created}
    if cost is not None:
        meta["annotations"] = {"controller.kubernetes.io/pod-deletion-cost": str(cost)}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T11:00:00Z"
    return {"metadata": meta, "spec": {"nodeName": node} if node else {}, "status": {
        "phase": phase, "containerStatuses": [{"restartCount": restarts}],
        "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                        "lastTransitionTime": ready_since}]}}


@pytest.mark.parametrize(("first", "second"), [
    pytest.param(pod("a", node=""), pod("b"), id="unscheduled-first"),
    pytest.param(pod("a", phase="Pending"), pod("b"), id="pending-before-running"),
    pytest.param(pod("a", ready=False), pod("b"), id="not-ready-first"),
    pytest.param(pod("a", cost=-10), pod("b", cost=10), id="lower-deletion-cost-first"),
    pytest.param(pod("a", ready_since="2026-01-01T11:59:00Z"), pod("b"),
                 id="ready-more-recently-first"),
    pytest.param(pod("a", restarts=5), pod("b"), id="more-restarts-first"),
    pytest.param(pod("a", created="2026-01-01T11:59:00Z"), pod("b"), id="newer-first"),
])
def test_deletion_order(first: Obj, second: Obj) -> None:
    assert sort_pods_for_deletion([second, first], [0, 0], NOW) == [first, second]
    assert sort_pods_for_deletion([first, second], [0, 0], NOW) == [first, second]


def test_doubled_up_pods_go_first() -> None:
    a, b = pod("a"), pod("b")
    assert sort_pods_for_deletion([a, b], [0, 2], NOW) == [b, a]


@pytest.mark.parametrize(("candidate", "active"), [
    pytest.param(pod("a"), True, id="running"),
    pytest.param(pod("a", phase="Succeeded"), False, id="succeeded"),
    pytest.param(pod("a", phase="Failed"), False, id="failed"),
    pytest.param(pod("a", deleting=True), False, id="terminating"),
])
def test_is_pod_active(candidate: Obj, active: bool) -> None:
    assert is_pod_active(candidate) is active


@pytest.mark.parametrize(("min_ready", "available"), [(0, True), (7200, True), (7201, False)])
def test_is_pod_available(min_ready: int, available: bool) -> None:
    assert is_pod_available(pod("a"), min_ready, NOW) is available
