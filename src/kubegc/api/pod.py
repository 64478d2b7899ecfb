"""The pod vocabulary the kubelet, the scheduler and the controllers share: the pods and
nodes resources, pod predicates and the deletion ranking (cf. k8s.io/kubernetes/pkg/api/v1/pod
``IsPodReady``/``IsPodAvailable`` and pkg/controller/controller_utils.go ``IsPodActive``,
``ActivePodsWithRanks``). Pure functions over JSON-shaped pods.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from kubegc.api.clock import parse_time
from kubegc.api.meta import name_of, uid_of
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj

PODS = GroupVersionResource("", "v1", "pods")
NODES = GroupVersionResource("", "v1", "nodes")


def pod_phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def is_pod_active(pod: Obj) -> bool:
    """Not Succeeded, not Failed, not being deleted."""
    meta = pod.get("metadata") or {}
    return pod_phase(pod) not in ("Succeeded", "Failed") and not meta.get("deletionTimestamp")


def is_pod_terminal(pod: Obj) -> bool:
    return pod_phase(pod) in ("Succeeded", "Failed")


def is_pod_terminating(pod: Obj) -> bool:
    return not is_pod_terminal(pod) and bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def _ready_condition(pod: Obj) -> dict[str, Any] | None:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return dict(cond)
    return None


def update_pod_condition(status: dict[str, Any], condition: dict[str, Any],
                         now: str) -> bool:
    """``UpdatePodCondition`` (pkg/api/v1/pod/util.go): set ``condition`` (a dict with
    ``type``) in ``status`` (changed in place), its ``lastTransitionTime`` ``now`` unless
    its status did not change; returns whether anything changed."""
    new = {**condition, "lastTransitionTime": now}
    conditions = status.setdefault("conditions", [])
    for i, old in enumerate(conditions):
        if old.get("type") != condition["type"]:
            continue
        if new.get("status") == old.get("status"):
            new["lastTransitionTime"] = old.get("lastTransitionTime")
        conditions[i] = new
        return any(new.get(k) != old.get(k) for k in
                   ("status", "reason", "message", "lastProbeTime", "lastTransitionTime"))
    conditions.append(new)
    return True


def is_pod_ready(pod: Obj) -> bool:
    cond = _ready_condition(pod)
    return cond is not None and cond.get("status") == "True"


def pod_ready_time(pod: Obj) -> datetime | None:
    cond = _ready_condition(pod)
    if cond is None or cond.get("status") != "True" or not cond.get("lastTransitionTime"):
        return None
    return parse_time(str(cond["lastTransitionTime"]))


def is_pod_available(pod: Obj, min_ready_seconds: int, now: datetime) -> bool:
    """Ready for at least ``min_ready_seconds`` (cf. ``podutil.IsPodAvailable``)."""
    if not is_pod_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    since = pod_ready_time(pod)
    return since is not None and (now - since).total_seconds() >= min_ready_seconds


def creation_key(obj: Obj) -> tuple[str, str]:
    """Sort key of ``ReplicaSetsByCreationTimestamp`` & co: oldest first, then by name."""
    return (str((obj.get("metadata") or {}).get("creationTimestamp") or ""), name_of(obj))


def _creation_time(obj: Obj) -> datetime | None:
    text = (obj.get("metadata") or {}).get("creationTimestamp")
    return parse_time(str(text)) if text else None


def _max_restarts(pod: Obj) -> int:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return max((int(s.get("restartCount") or 0) for s in statuses), default=0)


def _deletion_cost(pod: Obj) -> int:
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    try:
        return int(annotations.get("controller.kubernetes.io/pod-deletion-cost", "0"))
    except ValueError:
        return 0


_PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


def _log_rank(t: datetime | None, now: datetime) -> int:
    if t is None:
        return -1
    nanos = (now - t).total_seconds() * 1e9
    return int(math.log2(nanos)) if nanos > 0 else -1


def _compare_time(t1: datetime | None, t2: datetime | None, uid1: str, uid2: str,
                  now: datetime) -> bool | None:
    """Newer first on a log2 scale, UID as tie-break (steps 6 and 8 of upstream's
    ``ActivePodsWithRanks.Less``); None if equal."""
    if t1 == t2:
        return None
    if t1 is None or t2 is None:
        return t1 is None  # afterOrZero: zero time sorts first
    diff = _log_rank(t1, now) - _log_rank(t2, now)
    if diff == 0:
        return uid1 < uid2
    return diff < 0


def _less_for_deletion(a: tuple[Obj, int], b: tuple[Obj, int], now: datetime) -> bool | None:
    (pa, ra), (pb, rb) = a, b
    na, nb = (pa.get("spec") or {}).get("nodeName"), (pb.get("spec") or {}).get("nodeName")
    if na != nb and (not na or not nb):
        return not na
    oa, ob = _PHASE_ORDINAL.get(pod_phase(pa), 0), _PHASE_ORDINAL.get(pod_phase(pb), 0)
    if oa != ob:
        return oa < ob
    if is_pod_ready(pa) != is_pod_ready(pb):
        return not is_pod_ready(pa)
    if _deletion_cost(pa) != _deletion_cost(pb):
        return _deletion_cost(pa) < _deletion_cost(pb)
    if ra != rb:
        return ra > rb
    if is_pod_ready(pa) and is_pod_ready(pb):
        result = _compare_time(pod_ready_time(pa), pod_ready_time(pb), uid_of(pa), uid_of(pb), now)
        if result is not None:
            return result
    if _max_restarts(pa) != _max_restarts(pb):
        return _max_restarts(pa) > _max_restarts(pb)
    return _compare_time(_creation_time(pa), _creation_time(pb), uid_of(pa), uid_of(pb), now)


def sort_pods_for_deletion(pods: Sequence[Obj], ranks: Sequence[int], now: datetime,
                           ) -> list[Obj]:
    """Pods ordered as ``ActivePodsWithRanks`` (preferred for deletion first): unassigned,
    pending, not ready, low deletion cost, doubled-up, recently ready, restarted, newest."""

    def cmp(a: tuple[Obj, int], b: tuple[Obj, int]) -> int:
        if _less_for_deletion(a, b, now):
            return -1
        if _less_for_deletion(b, a, now):
            return 1
        return 0

    pairs = sorted(zip(pods, ranks), key=functools.cmp_to_key(cmp))
    return [p for p, _ in pairs]


def rank_by_colocation(pods: Sequence[Obj], related: Sequence[Obj]) -> list[int]:
    """For each pod, how many ready related pods share its node
    (cf. ``getPodsRankedByRelatedPodsOnSameNode``)."""
    per_node: dict[str, int] = {}
    for pod in related:
        node = (pod.get("spec") or {}).get("nodeName")
        if node and is_pod_active(pod) and is_pod_ready(pod):
            per_node[node] = per_node.get(node, 0) + 1
    return [per_node.get(str((p.get("spec") or {}).get("nodeName") or ""), 0) for p in pods]
