"""An object's state at a glance, as ``kubectl get`` and kubectl-tree show it: READY,
STATUS (``Terminating`` once deletionTimestamp is set), AGE, and its finalizers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kubegc.api.clock import format_time
from kubegc.api.meta import deletion_timestamp_of, finalizers_of
from kubegc.api.types import Obj
from kubegc.tools.model import age, human_duration, timestamp

#: Seconds a deletion may seem to begin after ``now`` before it is called clock skew
#: (as ``cluster_clock.CLOCK_SKEW_TOLERANCE``).
SKEW_TOLERANCE = 5.0


@dataclass(frozen=True, slots=True)
class ObjectState:
    ready: str  # "True", "False", "2/3" or "-"
    status: str  # "Running", "Terminating", "Active", "-"
    age: str
    finalizers: tuple[str, ...]
    deletion_timestamp: str | None

    @property
    def terminating(self) -> bool:
        return self.deletion_timestamp is not None

    def to_dict(self) -> dict[str, Any]:
        return {"ready": self.ready, "status": self.status, "age": self.age,
                "finalizers": list(self.finalizers),
                "deletionTimestamp": self.deletion_timestamp}


def _condition(obj: Obj, kind: str) -> str | None:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == kind:
            return str(cond.get("status"))
    return None


def readiness(obj: Obj) -> str:
    kind = obj.get("kind")
    status = obj.get("status") or {}
    spec = obj.get("spec") or {}
    if kind in ("Deployment", "ReplicaSet", "StatefulSet", "ReplicationController"):
        return f"{int(status.get('readyReplicas') or 0)}/{int(spec.get('replicas', 1) or 0)}"
    if kind == "DaemonSet":
        return f"{int(status.get('numberReady') or 0)}/" \
               f"{int(status.get('desiredNumberScheduled') or 0)}"
    for cond in ("Ready", "Available", "Established"):
        value = _condition(obj, cond)
        if value is not None:
            return value
    return "-"


def phase(obj: Obj) -> str:
    if deletion_timestamp_of(obj):
        return "Terminating"
    status = obj.get("status") or {}
    if obj.get("kind") == "Pod":
        return str(status.get("phase") or "Pending")
    if isinstance(status.get("phase"), str):
        return str(status["phase"])
    return "-"


def state_of(obj: Obj, now: datetime) -> ObjectState:
    created = age((obj.get("metadata") or {}).get("creationTimestamp"), now)
    return ObjectState(ready=readiness(obj), status=phase(obj),
                       age=human_duration(created) if created is not None else "-",
                       finalizers=tuple(finalizers_of(obj)),
                       deletion_timestamp=deletion_timestamp_of(obj))


@dataclass(frozen=True, slots=True)
class DeletionTiming:
    """When deletion was asked for and how long it has been going on.

    For graceful objects (pods) ``deletionTimestamp`` is the *end* of the grace period;
    the request time is that minus ``deletionGracePeriodSeconds``."""

    deletion_timestamp: str
    requested: datetime
    grace_seconds: int
    deleting_for: float  # seconds since the request
    overdue: float  # seconds past deletionTimestamp (negative: grace still running)


def deletion_timing(obj: Obj, now: datetime) -> DeletionTiming | None:
    stamp = deletion_timestamp_of(obj)
    when = timestamp(stamp)
    if stamp is None or when is None:
        return None
    grace = int((obj.get("metadata") or {}).get("deletionGracePeriodSeconds") or 0)
    requested = when - timedelta(seconds=max(grace, 0))
    return DeletionTiming(stamp, requested, grace, (now - requested).total_seconds(),
                          (now - when).total_seconds())



def terminating_since(obj: Obj, now: datetime) -> str:
    """Since when ``obj`` is Terminating, in words, never a time after ``now``: a pod in its
    grace period says when the delete was asked for and when the period ends; a deletion
    that seems to begin after ``now`` is said to be in the future (clock skew)."""
    timing = deletion_timing(obj, now)
    stamp = deletion_timestamp_of(obj)
    if timing is None:
        return f"Terminating (deletionTimestamp {stamp})"
    ahead = -timing.deleting_for
    if ahead > SKEW_TOLERANCE:
        return (f"Terminating, but its deletion begins {human_duration(ahead)} in the future "
                f"(deletionTimestamp {stamp}, now {format_time(now)}): the cluster's clock is "
                "ahead of this one's, or --now is too early")
    if timing.overdue < 0:
        return (f"Terminating since {format_time(timing.requested)} (grace period of "
                f"{timing.grace_seconds}s, ends at {stamp})")
    return f"Terminating since {stamp}"


def deleting_for(timing: DeletionTiming) -> str:
    """``deleting for 3m``, or, for a deletion that begins after the judging time, that
    it does (never "for 0s")."""
    ahead = -timing.deleting_for
    if ahead > SKEW_TOLERANCE:
        return (f"its deletion begins {human_duration(ahead)} after the time judged at (the "
                "cluster's clock is ahead, or --now is too early)")
    return f"deleting for {human_duration(timing.deleting_for)}"


def future_deletions_note(objects: list[Obj], now: datetime) -> str:
    """A note about the objects whose deletion begins after ``now`` (empty: none)."""
    ahead = [o for o in objects if (o.get("metadata") or {}).get("deletionTimestamp")
             and (t := deletion_timing(o, now)) is not None and -t.deleting_for > SKEW_TOLERANCE]
    if not ahead:
        return ""
    first = ahead[0]
    meta = first.get("metadata") or {}
    return (f"{len(ahead)} object{'s' if len(ahead) > 1 else ''} being deleted "
            f"{'have' if len(ahead) > 1 else 'has'} a deletion that begins after the time "
            f"judged at, {format_time(now)} (e.g. {first.get('kind')}/{meta.get('name')}, "
            f"deletionTimestamp {meta.get('deletionTimestamp')}): the cluster's clock is ahead "
            "of this machine's, or --now is too early; they are not judged stuck")
