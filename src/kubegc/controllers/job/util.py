"""Pure helpers of the Job controller (cf. pkg/controller/job/{job_controller,backoff_utils,
tracking_utils}.go and pkg/controller/job/util): finished-ness, conditions, which pods
count as failed, the pod failure backoff, and the tracking finalizer patch.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kubegc.api.clock import format_time, parse_time
from kubegc.api.meta import finalizers_of, uid_of
from kubegc.api.pod import (
    pod_phase,
)
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.component.deletions import Deletion, DeletionSink, pod_reference

JOBS = GroupVersionResource("batch", "v1", "jobs")
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
DEFAULT_JOB_POD_FAILURE_BACKOFF = 10.0  # seconds
MAX_JOB_POD_FAILURE_BACKOFF = 600.0  # seconds

JOB_COMPLETE = "Complete"
JOB_FAILED = "Failed"
JOB_SUSPENDED = "Suspended"
JOB_SUCCESS_CRITERIA_MET = "SuccessCriteriaMet"
JOB_FAILURE_TARGET = "FailureTarget"
REASON_COMPLETIONS_REACHED = "CompletionsReached"
REASON_BACKOFF_LIMIT_EXCEEDED = "BackoffLimitExceeded"
REASON_DEADLINE_EXCEEDED = "DeadlineExceeded"
#: the rules of the Job controller's other pod deletions (DeletionRecord reasons)
REASON_TOO_MANY_ACTIVE_PODS = "TooManyActivePods"
REASON_JOB_SUSPENDED = "JobSuspended"
MSG_COMPLETIONS_REACHED = "Reached expected number of succeeded pods"
MSG_BACKOFF_LIMIT_EXCEEDED = "Job has reached the specified backoff limit"
MSG_DEADLINE_EXCEEDED = "Job was active longer than specified deadline"

#: The interim condition of a finishing Job and the terminal one it becomes.
TERMINAL_OF = {JOB_SUCCESS_CRITERIA_MET: JOB_COMPLETE, JOB_FAILURE_TARGET: JOB_FAILED}


def conditions_of(job: Obj) -> list[dict[str, Any]]:
    return list((job.get("status") or {}).get("conditions") or [])


def finished_condition(job: Obj) -> str | None:
    """``Complete`` or ``Failed`` if the Job has that condition True (cf. ``FinishedCondition``)."""
    for cond in conditions_of(job):
        if cond.get("type") in (JOB_COMPLETE, JOB_FAILED) and cond.get("status") == "True":
            return str(cond["type"])
    return None


def is_job_finished(job: Obj) -> bool:
    return finished_condition(job) is not None


def is_job_succeeded(job: Obj) -> bool:
    return finished_condition(job) == JOB_COMPLETE


def interim_condition(job: Obj) -> dict[str, Any] | None:
    """A True ``SuccessCriteriaMet`` or ``FailureTarget`` condition, if any."""
    for wanted in (JOB_SUCCESS_CRITERIA_MET, JOB_FAILURE_TARGET):
        for cond in conditions_of(job):
            if cond.get("type") == wanted and cond.get("status") == "True":
                return dict(cond)
    return None


def new_condition(cond_type: str, status: str, reason: str, message: str, now: datetime,
                  ) -> dict[str, Any]:
    stamp = format_time(now)
    return {"type": cond_type, "status": status, "lastProbeTime": stamp,
            "lastTransitionTime": stamp, "reason": reason, "message": message}


def ensure_condition(status: dict[str, Any], cond_type: str, value: str, reason: str,
                     message: str, now: datetime) -> bool:
    """``ensureJobConditionStatus``: set or update a condition; a False condition that does
    not exist is not added. Returns whether anything changed."""
    conditions = status.setdefault("conditions", [])
    for cond in conditions:
        if cond.get("type") != cond_type:
            continue
        if cond.get("status") == value and (cond.get("reason"), cond.get("message")) == (
                reason, message):
            return False
        if cond.get("status") != value:
            cond["lastTransitionTime"] = format_time(now)
        cond.update(status=value, reason=reason, message=message,
                    lastProbeTime=format_time(now))
        return True
    if value != "True":
        return False
    conditions.append(new_condition(cond_type, value, reason, message, now))
    return True


def has_tracking_finalizer(pod: Obj) -> bool:
    return JOB_TRACKING_FINALIZER in finalizers_of(pod)


def remove_tracking_finalizer_patch(pod: Obj) -> Obj | None:
    """Strategic merge patch dropping the tracking finalizer (None if it has none), from
    this pod only (its uid: a precondition)."""
    if not has_tracking_finalizer(pod):
        return None
    return {"metadata": {"$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER],
                         "uid": uid_of(pod)}}


def is_pod_failed(pod: Obj, job: Obj) -> bool:
    """Failed, or deleted before succeeding (unless ``podReplacementPolicy: Failed``),
    since an orphaned pod may never reach the Failed phase."""
    if pod_phase(pod) == "Failed":
        return True
    if (job.get("spec") or {}).get("podReplacementPolicy") == "Failed":
        return False
    return bool((pod.get("metadata") or {}).get("deletionTimestamp")) and (
        pod_phase(pod) != "Succeeded")


def finished_time(pod: Obj, now: datetime) -> datetime:
    """When a pod finished: its last container's ``finishedAt``, else its deletion time."""
    status = pod.get("status") or {}
    times = [parse_time(str(t["finishedAt"])) for s in status.get("containerStatuses") or []
             if (t := (s.get("state") or {}).get("terminated")) and t.get("finishedAt")]
    if times:
        return max(times)
    deleted = (pod.get("metadata") or {}).get("deletionTimestamp")
    return parse_time(str(deleted)) if deleted else now


@dataclass(frozen=True)
class BackoffRecord:
    """Failures since the last success and when the last one happened (cf. ``backoffRecord``)."""

    failures_after_last_success: int = 0
    last_failure_time: datetime | None = None

    def updated(self, succeeded: list[Obj], failed: list[Obj], now: datetime) -> BackoffRecord:
        if not failed:
            return self if not succeeded else BackoffRecord()
        failed_times = sorted(finished_time(p, now) for p in failed)
        if not succeeded:
            return BackoffRecord(self.failures_after_last_success + len(failed_times),
                                 failed_times[-1])
        last_success = max(finished_time(p, now) for p in succeeded)
        after = [t for t in failed_times if t > last_success]
        return BackoffRecord(len(after), after[-1] if after else None)

    def remaining(self, now: datetime) -> float:
        """Seconds until a new pod may be created (cf. ``getRemainingTimeWithFailureCount``)."""
        if self.failures_after_last_success == 0 or self.last_failure_time is None:
            return 0.0
        backoff = min(DEFAULT_JOB_POD_FAILURE_BACKOFF * 2 ** (
            self.failures_after_last_success - 1), MAX_JOB_POD_FAILURE_BACKOFF)
        elapsed = (now - self.last_failure_time).total_seconds()
        return 0.0 if backoff < elapsed else backoff - elapsed


def past_active_deadline(job: Obj, now: datetime) -> bool:
    spec, status = job.get("spec") or {}, job.get("status") or {}
    deadline, start = spec.get("activeDeadlineSeconds"), status.get("startTime")
    if deadline is None or not start:
        return False
    return (now - parse_time(str(start))).total_seconds() >= int(deadline)


def active_deadline_remaining(job: Obj, now: datetime) -> float | None:
    spec, status = job.get("spec") or {}, job.get("status") or {}
    deadline, start = spec.get("activeDeadlineSeconds"), status.get("startTime")
    if deadline is None or not start or spec.get("suspend"):
        return None
    return int(deadline) - (now - parse_time(str(start))).total_seconds()


def record_pod_deletion(sink: DeletionSink, pod: Obj, reason: str, message: str,
                        now: datetime) -> None:
    """Hand a pod DELETE that succeeded to the sink (never fails the deletion)."""
    with contextlib.suppress(Exception):
        sink.record_deletion(Deletion(now, "job-controller", pod_reference(pod), reason,
                                      message))
