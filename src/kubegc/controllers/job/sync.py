"""One sync of one Job (cf. ``Controller.syncJob``, ``manageJob`` and
``trackJobStatusAndRemoveFinalizers`` in pkg/controller/job/job_controller.go).

Order, as upstream: (1) decide whether the Job is finishing (an earlier
``SuccessCriteriaMet``/``FailureTarget``, the backoff limit, the active deadline); (2) if
so delete its active pods, otherwise create or delete pods toward the wanted parallelism
and check for completion; (3) account finished pods: record their UIDs in
``uncountedTerminatedPods``, remove their tracking finalizers, then move them to the
counters; (4) once nothing is uncounted or terminating, turn the interim condition into
``Complete``/``Failed`` and record the event.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any, Protocol

import kubegc.controllers.job.util as ju
from kubegc.api.clock import format_time
from kubegc.api.errors import is_not_found
from kubegc.api.meta import is_being_deleted, name_of, namespace_of, uid_of
from kubegc.api.pod import (
    is_pod_active,
    is_pod_ready,
    is_pod_terminating,
    pod_phase,
    sort_pods_for_deletion,
)
from kubegc.api.types import Obj
from kubegc.client.cache import meta_namespace_key
from kubegc.client.events import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING
from kubegc.client.interface import PatchType
from kubegc.component.base_controller import ControllerView
from kubegc.component.deletions import DeletionSink
from kubegc.controllers.controller_utils import (
    SLOW_START_INITIAL_BATCH_SIZE,
    PodControl,
    new_controller_ref,
    omit_empty,
    slow_start_batch,
    status_patch,
)
from kubegc.controllers.expectations import UIDTrackingControllerExpectations


class JobControllerLike(ControllerView, Protocol):
    """What one sync uses of the ``JobController`` that runs it (a protocol: the sync is
    upstream's methods of that controller, in a module that must not import it back)."""

    @property
    def pod_control(self) -> PodControl: ...

    @property
    def expectations(self) -> UIDTrackingControllerExpectations: ...

    @property
    def finalizer_expectations(self) -> dict[str, set[str]]: ...

    @property
    def backoff(self) -> dict[str, ju.BackoffRecord]: ...

    @property
    def written_status(self) -> dict[str, str]: ...

    @property
    def deletions(self) -> DeletionSink: ...


#: Most pods created or deleted by one sync (upstream ``MaxPodCreateDeletePerSync``).
MAX_POD_CREATE_DELETE_PER_SYNC = 500


class JobContext:
    """What one sync of one Job knows and decides (cf. ``syncJobCtx``).

    Ownership: built and used by a single ``JobController.sync`` call; ``status`` is the
    status being built, ``stored_status`` what the server has after our last write.
    """

    def __init__(self, jm: JobControllerLike, job: Obj, key: str, pods: list[Obj],
                 satisfied: bool) -> None:
        self.jm, self.job, self.key, self.pods, self.satisfied = jm, job, key, pods, satisfied
        self.now = jm.clock.now()
        self.stored_status: dict[str, Any] = copy.deepcopy(job.get("status") or {})
        self.status: dict[str, Any] = copy.deepcopy(self.stored_status)
        self.active_pods = [p for p in pods if is_pod_active(p)]
        self.active = len(self.active_pods)
        self.ready = sum(1 for p in self.active_pods if is_pod_ready(p))
        self.terminating = sum(1 for p in pods if is_pod_terminating(p))
        self.expected_rm = set(jm.finalizer_expectations.get(key, set()))
        uncounted = self.status.get("uncountedTerminatedPods") or {}
        self.uncounted_succeeded: list[str] = list(uncounted.get("succeeded") or [])
        self.uncounted_failed: list[str] = list(uncounted.get("failed") or [])
        seen = set(self.uncounted_succeeded) | set(self.uncounted_failed) | self.expected_rm
        fresh = [p for p in pods if ju.has_tracking_finalizer(p) and uid_of(p) not in seen]
        new_succeeded = [p for p in fresh if pod_phase(p) == "Succeeded"]
        new_failed = [p for p in fresh if pod_phase(p) != "Succeeded" and ju.is_pod_failed(p, job)]
        self.succeeded = int(self.status.get("succeeded") or 0) + len(new_succeeded) + len(
            self.uncounted_succeeded)
        self.failed = int(self.status.get("failed") or 0) + len(new_failed) + len(
            self.uncounted_failed)
        self.new_backoff = jm.backoff.get(key, ju.BackoffRecord()).updated(
            new_succeeded, new_failed, self.now)
        self.finished = ju.interim_condition(job)
        self.requeue: float | None = None
        self.errors: list[BaseException] = []

    @property
    def spec(self) -> dict[str, Any]:
        return self.job.get("spec") or {}

    def decide_failure(self) -> None:
        if self.finished is not None:
            return
        if self.failed > int(self.spec.get("backoffLimit", 6)):
            self.finished = ju.new_condition(ju.JOB_FAILURE_TARGET, "True",
                                             ju.REASON_BACKOFF_LIMIT_EXCEEDED,
                                             ju.MSG_BACKOFF_LIMIT_EXCEEDED, self.now)
        elif ju.past_active_deadline(self.job, self.now):
            self.finished = ju.new_condition(ju.JOB_FAILURE_TARGET, "True",
                                             ju.REASON_DEADLINE_EXCEEDED,
                                             ju.MSG_DEADLINE_EXCEEDED, self.now)
        else:
            remaining = ju.active_deadline_remaining(self.job, self.now)
            if remaining is not None:
                self.requeue = max(remaining, 0.0)

    def complete(self) -> bool:
        completions = self.spec.get("completions")
        if completions is None:
            return self.succeeded > 0 and self.active == 0
        return self.succeeded >= int(completions) and self.active == 0

    async def flush(self) -> None:
        """Write ``status`` if it differs from what the server has."""
        new = omit_empty(self.status, keep=("ready", "terminating", "uncountedTerminatedPods"))
        if new == self.stored_status:
            return
        stored = await self.jm.client.patch(
            ju.JOBS, name_of(self.job), status_patch(self.job, self.stored_status, new),
            namespace=namespace_of(self.job), patch_type=PatchType.MERGE, subresource="status")
        self.stored_status = copy.deepcopy(stored.get("status") or {})
        self.job["metadata"]["resourceVersion"] = stored["metadata"].get("resourceVersion")
        self.jm.written_status[self.key] = str(stored["metadata"].get("resourceVersion"))


async def sync_job(ctx: JobContext) -> float | None:
    if not ctx.status.get("startTime") and not ctx.spec.get("suspend"):
        ctx.status["startTime"] = format_time(ctx.now)
    ctx.decide_failure()
    if ctx.finished is not None:
        deleted, deleted_ready = await delete_active_pods(ctx, ctx.active_pods)
        if deleted != ctx.active or not ctx.satisfied:
            ctx.finished = None  # pods may still appear, or keep finalizers: decide later
        ctx.active -= deleted
        ctx.terminating += deleted
        ctx.ready -= deleted_ready
    else:
        if ctx.satisfied and not is_being_deleted(ctx.job):
            await manage_job(ctx)
        if ctx.complete():
            ctx.finished = ju.new_condition(ju.JOB_SUCCESS_CRITERIA_MET, "True",
                                            ju.REASON_COMPLETIONS_REACHED,
                                            ju.MSG_COMPLETIONS_REACHED, ctx.now)
    ctx.status.update(active=ctx.active, ready=ctx.ready, terminating=ctx.terminating)
    await track_job_status_and_remove_finalizers(ctx)
    if ctx.errors:
        raise ctx.errors[0]
    return ctx.requeue


# --- managing pods ---------------------------------------------------------------------------


def wanted_active(ctx: JobContext) -> int:
    parallelism = int(ctx.spec.get("parallelism", 1))
    completions = ctx.spec.get("completions")
    if completions is None:
        return ctx.active if ctx.succeeded > 0 else parallelism
    return max(0, min(int(completions) - ctx.succeeded, parallelism))


async def manage_job(ctx: JobContext) -> None:
    jm = ctx.jm
    if ctx.spec.get("suspend"):
        ctx.active -= await delete_job_pods(ctx, ctx.active_pods, ju.REASON_JOB_SUSPENDED,
                                            f"Job {name_of(ctx.job)} is suspended")
        if ju.ensure_condition(ctx.status, ju.JOB_SUSPENDED, "True", "JobSuspended",
                               "Job suspended", ctx.now):
            jm.recorder.event(ctx.job, EVENT_TYPE_NORMAL, "Suspended", "Job suspended")
        return
    if ju.ensure_condition(ctx.status, ju.JOB_SUSPENDED, "False", "JobResumed", "Job resumed",
                           ctx.now):
        jm.recorder.event(ctx.job, EVENT_TYPE_NORMAL, "Resumed", "Job resumed")
        ctx.status["startTime"] = format_time(ctx.now)
    want = wanted_active(ctx)
    if ctx.active > want:
        count = min(ctx.active - want, MAX_POD_CREATE_DELETE_PER_SYNC)
        victims = sort_pods_for_deletion(ctx.active_pods, [0] * ctx.active, ctx.now)[:count]
        jm.expectations.expect_deletions(ctx.key, [meta_namespace_key(p) for p in victims])
        ctx.active -= await delete_job_pods(
            ctx, victims, ju.REASON_TOO_MANY_ACTIVE_PODS,
            f"Job {name_of(ctx.job)} wants {want} active pods (parallelism "
            f"{ctx.spec.get('parallelism', 1)}, completions {ctx.spec.get('completions')}, "
            f"{ctx.succeeded} succeeded); {ctx.active} were active")
    elif ctx.active < want:
        remaining = ctx.new_backoff.remaining(ctx.now)
        if remaining > 0:
            ctx.requeue = remaining if ctx.requeue is None else min(ctx.requeue, remaining)
            return
        await create_pods(ctx, min(want - ctx.active, MAX_POD_CREATE_DELETE_PER_SYNC))


async def create_pods(ctx: JobContext, count: int) -> None:
    jm = ctx.jm
    jm.expectations.expect_creations(ctx.key, count)
    template = copy.deepcopy(ctx.spec.get("template") or {})
    meta = template.setdefault("metadata", {})
    meta["finalizers"] = [*(meta.get("finalizers") or []), ju.JOB_TRACKING_FINALIZER]
    ref = new_controller_ref(ctx.job, "batch/v1", "Job")

    async def create() -> None:
        await jm.pod_control.create_pods(namespace_of(ctx.job), template, ctx.job, ref)

    successes, err = await slow_start_batch(count, SLOW_START_INITIAL_BATCH_SIZE, create)
    if count - successes > 0:
        jm.expectations.lower_expectations(ctx.key, add=count - successes)
    ctx.active += successes
    if err is not None:
        ctx.errors.append(err)


async def delete_job_pods(ctx: JobContext, pods: list[Obj], reason: str, message: str
                          ) -> int:
    """Remove the finalizer, then delete (scale-down, suspend): such pods are not failures."""
    jm = ctx.jm

    async def delete(pod: Obj) -> bool:
        try:
            patch = ju.remove_tracking_finalizer_patch(pod)
            if patch is not None:
                await jm.pod_control.patch_pod(namespace_of(pod), name_of(pod), patch)
            await jm.pod_control.delete_pod(pod, ctx.job)
            ju.record_pod_deletion(jm.deletions, pod, reason, message, jm.clock.now())
        except Exception as err:
            jm.expectations.deletion_observed(ctx.key, meta_namespace_key(pod))
            if not is_not_found(err):
                ctx.errors.append(err)
                return False
        return True

    return sum(await asyncio.gather(*(delete(p) for p in pods)))


async def delete_active_pods(ctx: JobContext, pods: list[Obj]) -> tuple[int, int]:
    """Delete keeping finalizers (the Job is finishing): (deleted, deleted ready)."""

    reason, message = _finishing_rule(ctx)

    async def delete(pod: Obj) -> bool:
        try:
            await ctx.jm.pod_control.delete_pod(pod, ctx.job)
            ju.record_pod_deletion(ctx.jm.deletions, pod, reason, message, ctx.now)
        except Exception as err:
            if not is_not_found(err):
                ctx.errors.append(err)
                return False
        return True

    results = await asyncio.gather(*(delete(p) for p in pods))
    return sum(results), sum(1 for ok, p in zip(results, pods) if ok and is_pod_ready(p))


def _finishing_rule(ctx: JobContext) -> tuple[str, str]:
    """Why a finishing Job's active pods are deleted: its condition's reason, and the
    numbers behind it."""
    finished = ctx.finished or {}
    reason = str(finished.get("reason") or "")
    detail = {ju.REASON_BACKOFF_LIMIT_EXCEEDED:
              f"{ctx.failed} failed pods, backoffLimit {ctx.spec.get('backoffLimit', 6)}",
              ju.REASON_DEADLINE_EXCEEDED:
              f"activeDeadlineSeconds {ctx.spec.get('activeDeadlineSeconds')}",
              ju.REASON_COMPLETIONS_REACHED:
              f"{ctx.succeeded} succeeded, completions {ctx.spec.get('completions')}"}
    return reason, (f"Job {name_of(ctx.job)}: {finished.get('message')} "
                    f"({detail.get(reason, finished.get('type'))})")


# --- accounting finished pods ---------------------------------------------------------------


def _pods_to_account(ctx: JobContext) -> list[Obj]:
    """Pods whose finalizer may go now, their UIDs added to the uncounted lists."""
    deleting = is_being_deleted(ctx.job)
    failing = ctx.finished is not None and ctx.finished["type"] != ju.JOB_SUCCESS_CRITERIA_MET
    out = []
    for pod in ctx.pods:
        uid = uid_of(pod)
        if not ju.has_tracking_finalizer(pod) or uid in ctx.expected_rm:
            continue
        failed = ju.is_pod_failed(pod, ctx.job)
        succeeded = pod_phase(pod) == "Succeeded"
        if not (deleting or ctx.finished is not None or succeeded or failed):
            continue
        out.append(pod)
        if succeeded and uid not in ctx.uncounted_failed:
            if uid not in ctx.uncounted_succeeded:
                ctx.uncounted_succeeded.append(uid)
        elif (failed or failing) and uid not in ctx.uncounted_failed:
            ctx.uncounted_failed.append(uid)
    return out


def _set_uncounted(ctx: JobContext) -> None:
    ctx.status["uncountedTerminatedPods"] = omit_empty(
        {"succeeded": ctx.uncounted_succeeded, "failed": ctx.uncounted_failed})


async def _remove_finalizers(ctx: JobContext, pods: list[Obj]) -> set[str]:
    """UIDs of the pods that no longer have the finalizer (or are gone)."""
    expected = ctx.jm.finalizer_expectations.setdefault(ctx.key, set())
    expected.update(uid_of(p) for p in pods)

    async def remove(pod: Obj) -> bool:
        patch = ju.remove_tracking_finalizer_patch(pod)
        try:
            if patch is not None:
                await ctx.jm.pod_control.patch_pod(namespace_of(pod), name_of(pod), patch)
        except Exception as err:
            if not is_not_found(err):
                expected.discard(uid_of(pod))
                ctx.errors.append(err)
                return False
        return True

    results = await asyncio.gather(*(remove(p) for p in pods))
    return {uid_of(p) for ok, p in zip(results, pods) if ok}


async def track_job_status_and_remove_finalizers(ctx: JobContext) -> None:
    with_finalizer = {uid_of(p) for p in ctx.pods
                      if ju.has_tracking_finalizer(p) and uid_of(p) not in ctx.expected_rm}
    to_remove = _pods_to_account(ctx)
    if ctx.finished is not None:
        ju.ensure_condition(ctx.status, ctx.finished["type"], "True", ctx.finished["reason"],
                            ctx.finished["message"], ctx.now)
    _set_uncounted(ctx)
    await ctx.flush()
    ctx.jm.backoff[ctx.key] = ctx.new_backoff
    with_finalizer -= await _remove_finalizers(ctx, to_remove)
    counted_s = [u for u in ctx.uncounted_succeeded if u not in with_finalizer]
    counted_f = [u for u in ctx.uncounted_failed if u not in with_finalizer]
    ctx.status["succeeded"] = int(ctx.status.get("succeeded") or 0) + len(counted_s)
    ctx.status["failed"] = int(ctx.status.get("failed") or 0) + len(counted_f)
    ctx.uncounted_succeeded = [u for u in ctx.uncounted_succeeded if u in with_finalizer]
    ctx.uncounted_failed = [u for u in ctx.uncounted_failed if u in with_finalizer]
    _set_uncounted(ctx)
    finished_now = enact_job_finished(ctx)
    await ctx.flush()
    if finished_now and ctx.finished is not None:
        record_job_finished(ctx)


def enact_job_finished(ctx: JobContext) -> bool:
    """Turn the interim condition into the terminal one once every pod is accounted."""
    if ctx.finished is None or ctx.uncounted_succeeded or ctx.uncounted_failed:
        return False
    if ctx.terminating > 0:
        return False
    terminal = ju.TERMINAL_OF.get(ctx.finished["type"], ctx.finished["type"])
    ju.ensure_condition(ctx.status, terminal, "True", ctx.finished["reason"],
                        ctx.finished["message"], ctx.now)
    if terminal == ju.JOB_COMPLETE:
        ctx.status["completionTime"] = format_time(ctx.now)
    ctx.finished = {**ctx.finished, "type": terminal}
    return True


def record_job_finished(ctx: JobContext) -> None:
    finished = ctx.finished or {}
    if finished.get("type") == ju.JOB_COMPLETE:
        ctx.jm.recorder.event(ctx.job, EVENT_TYPE_NORMAL, "Completed", "Job completed")
    else:
        ctx.jm.recorder.event(ctx.job, EVENT_TYPE_WARNING, str(finished.get("reason")),
                              str(finished.get("message")))
