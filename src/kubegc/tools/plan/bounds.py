"""Bounds where the plan can only know a bound: a pod's graceful termination.

The plan's simulated kubelet stops a pod's containers as soon as they get TERM (no preStop
hook runs on the simulated nodes, unless a kubegc annotation says how long). On a real
cluster a preStop hook and the processes' exit take a time nobody can read from the
objects, bounded by the grace period: the kubelet kills the containers at the end of it
(upstream's ``killContainer``: preStop, TERM, then KILL at ``gracePeriod``, at least
``minimumGracePeriodInSeconds``, 2 s). So a pod's
deletion is said as "up to" its deletionTimestamp (``Step.latest``), never as a point,
and every later step may come that much later too: each step's ``latest`` is its time
plus the largest slack (bound minus simulated time) of the graceful pod deletions before
it — a conservative bound, as waiting for those pods is what could delay it.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from kubegc.api.clock import parse_time_or_none
from kubegc.api.meta import DELETED, deletion_timestamp_of, uid_of
from kubegc.tools.plan.recorder import Change
from kubegc.tools.plan.report import Step, StepAction

#: slack below this many seconds is not worth a range
EPSILON = 0.5
#: upstream kubelet's minimumGracePeriodInSeconds (killContainer): a container always gets
#: this long between TERM and KILL, even with a shorter grace period
MINIMUM_GRACE_PERIOD = 2


def pod_bounds(changes: list[Change], origin: datetime) -> dict[str, float]:
    """uid -> the latest time (seconds after ``origin``, the delete request) a graceful pod
    deleted in ``changes`` goes on a real cluster: its deletionTimestamp."""
    out: dict[str, float] = {}
    origin = origin.replace(microsecond=0)  # as the deletionTimestamp the server wrote
    for change in changes:
        obj = change.after
        if change.type != DELETED or obj.get("kind") != "Pod" or obj.get("apiVersion") != "v1":
            continue
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        when = parse_time_or_none(deletion_timestamp_of(obj))
        if not (spec or {}).get("nodeName") or when is None:
            continue
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        grace = meta.get("deletionGracePeriodSeconds") if isinstance(meta, dict) else None
        end = (when - origin).total_seconds()
        if isinstance(grace, int) and grace < MINIMUM_GRACE_PERIOD:  # the kubelet's floor
            end += MINIMUM_GRACE_PERIOD - grace
        out[uid_of(obj)] = max(0.0, end)
    return out


def bounded(steps: list[Step], bounds: dict[str, float]) -> list[Step]:
    """``steps`` with ``latest`` set where a graceful pod deletion may come later."""
    slack = 0.0
    out = []
    for step in sorted(steps, key=lambda s: (s.time, s.seq)):
        bound = bounds.get(step.object.uid) if step.action is StepAction.DELETED else None
        if bound is not None and bound - step.time > slack:
            slack = bound - step.time
        if slack >= EPSILON:
            detail = step.detail
            if bound is not None and bound - step.time >= EPSILON:
                grace = f"t+{bound:.1f}s" if bound < 60 else f"t+{bound / 60:.1f}m"
                detail = "; ".join(p for p in (detail, (
                    f"up to {grace}, the end of its grace period: preStop hooks and the "
                    "containers' exit take an unknown time up to it on a real cluster (the "
                    "simulated kubelet stops them at once)")) if p)
            step = dataclasses.replace(step, latest=step.time + slack, detail=detail)
        out.append(step)
    return sorted(out, key=lambda s: s.seq)


def latest_end(steps: list[Step]) -> float | None:
    """When the last step happens at the latest, if that is later than it simulated."""
    if not steps:
        return None
    last = max(steps, key=lambda s: s.latest if s.latest is not None else s.time)
    return last.latest
