"""The CronJob controller (cf. pkg/controller/cronjob/cronjob_controllerv2.go).

Contract, per CronJob ``cj`` (times from the injected clock):
  * at each activation of ``spec.schedule`` (in ``spec.timeZone``) it creates a Job named
    ``<cj>-<scheduled time in minutes since the epoch>`` from ``spec.jobTemplate`` with a
    controller reference, the ``batch.kubernetes.io/cronjob-scheduled-timestamp``
    annotation, and records it in ``status.active`` and ``status.lastScheduleTime``;
    the name makes a second create for the same activation fail harmlessly;
  * ``concurrencyPolicy``: Allow runs Jobs side by side, Forbid skips an activation while
    a Job is active (``JobAlreadyActive``), Replace deletes the active Jobs first;
  * activations older than ``startingDeadlineSeconds`` are missed (``MissSchedule``);
    suspended or deleting CronJobs create nothing;
  * finished Jobs leave ``status.active`` (``SawCompletedJob``) and set
    ``lastSuccessfulTime``; beyond ``successfulJobsHistoryLimit``/``failedJobsHistoryLimit``
    the oldest finished Jobs are deleted with propagation Background (``SuccessfulDelete``);
  * the key is requeued (delayed) for just after the next activation.
Component ``cronjob-controller``. Each Job DELETE that succeeded is handed to the
``DeletionSink`` with its rule (``SuccessfulJobsHistoryLimit``, ``FailedJobsHistoryLimit``,
``ConcurrencyPolicyReplace``), so ``kubegc why job/x`` names the CronJob controller.
"""

from __future__ import annotations

import contextlib
import copy
from datetime import datetime
from typing import Any

import kubegc.controllers.cronjob.utils as cu
from kubegc.api.clock import format_time, parse_time
from kubegc.api.errors import StatusError, is_already_exists, is_not_found
from kubegc.api.meta import (
    DeletionPropagation,
    controller_ref_of,
    is_being_deleted,
    name_of,
    namespace_of,
    uid_of,
)
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import DeletedFinalStateUnknown, FuncHandler
from kubegc.client.events import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING
from kubegc.client.interface import DeleteOptions, PatchType
from kubegc.component import objects
from kubegc.component.base_controller import BaseController, tombstone_object
from kubegc.component.context import ControllerContext
from kubegc.component.deletions import (
    Deletion,
    DeletionSink,
    NullDeletionSink,
    object_reference,
)
from kubegc.controllers.controller_utils import (
    CONTROLLER_UID_INDEX,
    NAMESPACE_TERMINATING_CAUSE,
    controller_uid_index_func,
    ensure_indexers,
    has_status_cause,
    is_controlled_by,
    omit_empty,
    status_patch,
)
from kubegc.controllers.job.util import JOBS, finished_condition, is_job_succeeded

CRONJOBS = GroupVersionResource("batch", "v1", "cronjobs")


def job_reference(job: Obj) -> dict[str, Any]:
    meta = job.get("metadata") or {}
    return {"kind": "Job", "namespace": meta.get("namespace"), "name": meta.get("name"),
            "uid": meta.get("uid"), "apiVersion": "batch/v1",
            "resourceVersion": meta.get("resourceVersion")}


class CronJobController(BaseController):
    """Creates Jobs on schedule and prunes their history."""

    name = "cronjob"
    component = "cronjob-controller"

    def __init__(self, ctx: ControllerContext[None], deletions: DeletionSink | None = None
                 ) -> None:
        super().__init__(ctx)
        self.deletions = deletions if deletions is not None else NullDeletionSink()
        self.cj_informer = self.informer_factory.for_resource(CRONJOBS)
        self.job_informer = self.informer_factory.for_resource(JOBS)
        self.synced_informers = [self.cj_informer, self.job_informer]
        self.primary_informer = self.cj_informer

    def register_handlers(self) -> None:
        ensure_indexers(self.job_informer, {CONTROLLER_UID_INDEX: controller_uid_index_func})
        self.cj_informer.add_event_handler(FuncHandler(
            add=lambda cj, _initial: self.enqueue(cj), update=self.update_cron_job,
            delete=self.enqueue))
        self.job_informer.add_event_handler(FuncHandler(
            add=lambda job, _initial: self.job_changed(job),
            update=self.update_job, delete=self.job_changed))

    def update_cron_job(self, old: Obj, cur: Obj) -> None:
        """A new schedule moves the requeue; any other change is looked at now."""
        old_spec, cur_spec = old.get("spec") or {}, cur.get("spec") or {}
        if (old_spec.get("schedule"), old_spec.get("timeZone")) != (
                cur_spec.get("schedule"), cur_spec.get("timeZone")):
            try:
                schedule = cu.Schedule.parse(str(cur_spec.get("schedule") or ""),
                                             cur_spec.get("timeZone"))
            except cu.ScheduleError:
                self.recorder.event(cur, EVENT_TYPE_WARNING, "UnParseableCronJobSchedule",
                                    f"unparseable schedule for cronjob: {cur_spec.get('schedule')}")
                return
            delay = cu.next_schedule_delay(cur, self.clock.now(), schedule)
            if delay is not None:
                self.enqueue_after(cur, delay)
            return
        self.enqueue(cur)

    def resolve_controller_ref(self, namespace: str, ref: dict[str, Any]) -> Obj | None:
        if ref.get("kind") != "CronJob":
            return None
        cj = self.cj_informer.indexer.get_by_key(f"{namespace}/{ref.get('name')}")
        return cj if cj is not None and uid_of(cj) == ref.get("uid") else None

    def job_changed(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        job = tombstone_object(obj)
        ref = controller_ref_of(job)
        cj = self.resolve_controller_ref(namespace_of(job), ref) if ref else None
        if cj is not None:
            self.enqueue(cj)

    def update_job(self, old: Obj, cur: Obj) -> None:
        if (old.get("metadata") or {}).get("resourceVersion") == (
                (cur.get("metadata") or {}).get("resourceVersion")):
            return
        if controller_ref_of(old) != controller_ref_of(cur):
            self.job_changed(old)
        self.job_changed(cur)

    # -- sync --------------------------------------------------------------------------------

    async def sync(self, key: str) -> float | None:
        cached = self.cj_informer.indexer.get_by_key(key)
        if cached is None:
            return None
        objects.CRON_JOB.check(cached)
        cj = copy.deepcopy(cached)
        stored_status = copy.deepcopy(cj.get("status") or {})
        jobs = [j for j in self.job_informer.indexer.by_index(CONTROLLER_UID_INDEX, uid_of(cj))
                if objects.JOB.understood(j)]
        await self.cleanup_finished_jobs(cj, jobs)
        sync_err: Exception | None = None
        requeue: float | None = None
        try:
            requeue = await self.sync_cron_job(cj, jobs)
        except Exception as err:
            sync_err = err
        new = omit_empty(cj.get("status") or {})
        if new != stored_status:
            await self.client.patch(CRONJOBS, name_of(cj),
                                    status_patch(cj, stored_status, new),
                                    namespace=namespace_of(cj), patch_type=PatchType.MERGE,
                                    subresource="status")
        if requeue is not None:
            return requeue
        if sync_err is not None:
            raise sync_err
        return None

    def _active(self, cj: Obj) -> list[dict[str, Any]]:
        return list((cj.setdefault("status", {})).get("active") or [])

    def _set_active(self, cj: Obj, active: list[dict[str, Any]]) -> None:
        cj.setdefault("status", {})["active"] = active

    def _delete_from_active(self, cj: Obj, uid: str) -> None:
        self._set_active(cj, [r for r in self._active(cj) if r.get("uid") != uid])

    async def _reconcile_jobs(self, cj: Obj, jobs: list[Obj]) -> None:
        """Move finished Jobs out of ``status.active``; forget Jobs that went missing."""
        for job in jobs:
            found = any(r.get("uid") == uid_of(job) for r in self._active(cj))
            finished = finished_condition(job)
            if not found and finished is None:
                fresh = await self.client.get(CRONJOBS, name_of(cj), namespace=namespace_of(cj))
                if any(r.get("uid") == uid_of(job) for r in self._active(fresh)):
                    cj["status"] = copy.deepcopy(fresh.get("status") or {})
                    continue
                self.recorder.event(cj, EVENT_TYPE_WARNING, "UnexpectedJob",
                                    "Saw a job that the controller did not create or forgot: "
                                    f"{name_of(job)}")
            elif finished is not None:
                if found:
                    self._delete_from_active(cj, uid_of(job))
                    self.recorder.event(cj, EVENT_TYPE_NORMAL, "SawCompletedJob",
                                        f"Saw completed job: {name_of(job)}, condition: "
                                        f"{finished}")
                self._note_success(cj, job)
        children = {uid_of(j) for j in jobs}
        for ref in self._active(cj):
            if ref.get("uid") in children:
                continue
            try:
                await self.client.get(JOBS, str(ref.get("name")), namespace=namespace_of(cj))
            except StatusError as err:
                if not is_not_found(err):
                    raise
                self.recorder.event(cj, EVENT_TYPE_NORMAL, "MissingJob",
                                    f"Active job went missing: {ref.get('name')}")
                self._delete_from_active(cj, str(ref.get("uid")))

    @staticmethod
    def _note_success(cj: Obj, job: Obj) -> None:
        completion = (job.get("status") or {}).get("completionTime")
        if not is_job_succeeded(job) or not completion:
            return
        status = cj.setdefault("status", {})
        last = status.get("lastSuccessfulTime")
        if not last or parse_time(str(completion)) > parse_time(str(last)):
            status["lastSuccessfulTime"] = completion

    async def sync_cron_job(self, cj: Obj, jobs: list[Obj]) -> float | None:
        await self._reconcile_jobs(cj, jobs)
        spec = cj.get("spec") or {}
        if is_being_deleted(cj) or spec.get("suspend"):
            return None
        schedule_text = str(spec.get("schedule") or "")
        if "TZ" in schedule_text:
            self.recorder.event(cj, EVENT_TYPE_WARNING, "UnsupportedSchedule",
                                f'CRON_TZ or TZ used in schedule "{schedule_text}" is not '
                                "officially supported, see https://kubernetes.io/docs/concepts"
                                "/workloads/controllers/cron-jobs/ for more details")
        if spec.get("timeZone"):
            try:
                cu.load_time_zone(str(spec["timeZone"]))
            except ValueError as err:
                self.recorder.event(cj, EVENT_TYPE_WARNING, "UnknownTimeZone",
                                    f'invalid timeZone: "{spec["timeZone"]}": {err}')
                return None
        try:
            schedule = cu.Schedule.parse(schedule_text, spec.get("timeZone"))
        except cu.ScheduleError as err:
            self.recorder.event(cj, EVENT_TYPE_WARNING, "UnparseableSchedule",
                                f'unparseable schedule: "{schedule_text}" : {err}')
            return None
        return await self._start_due_job(cj, schedule, self.clock.now())

    async def _start_due_job(self, cj: Obj, schedule: cu.Schedule, now: datetime,
                             ) -> float | None:
        spec = cj.get("spec") or {}
        try:
            recent = cu.most_recent_schedule_time(cj, now, schedule,
                                                  include_starting_deadline=True)
        except cu.ScheduleError as err:
            self.recorder.event(cj, EVENT_TYPE_WARNING, "InvalidSchedule",
                                f"invalid schedule: {spec.get('schedule')} : {err}")
            return None
        next_delay = cu.next_schedule_delay(cj, now, schedule)
        scheduled = recent.most_recent
        if scheduled is None or scheduled > now:
            return next_delay
        if recent.many_missed:
            self.recorder.event(cj, EVENT_TYPE_WARNING, "TooManyMissedTimes",
                                "too many missed start times. Set or decrease "
                                ".spec.startingDeadlineSeconds or check clock skew")
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None and (now - scheduled).total_seconds() > int(deadline):
            self.recorder.event(cj, EVENT_TYPE_WARNING, "MissSchedule",
                                "Missed scheduled time to start a job: "
                                f"{scheduled.strftime('%a, %d %b %Y %H:%M:%S +0000')}")
            return next_delay
        name = cu.job_name(cj, scheduled)
        last = (cj.get("status") or {}).get("lastScheduleTime")
        if any(r.get("name") == name for r in self._active(cj)) or (
                last and parse_time(str(last)) == scheduled):
            return next_delay
        policy = spec.get("concurrencyPolicy") or "Allow"
        if policy == "Forbid" and self._active(cj):
            self.recorder.event(cj, EVENT_TYPE_NORMAL, "JobAlreadyActive",
                                "Not starting job because prior execution is running and "
                                "concurrency policy is Forbid")
            return next_delay
        if policy == "Replace":
            await self._replace_active(cj)
        created = await self._create_job(cj, scheduled, schedule)
        if created is None:
            return None
        self._set_active(cj, [*self._active(cj), job_reference(created)])
        cj["status"]["lastScheduleTime"] = format_time(scheduled)
        return cu.next_schedule_delay(cj, now, schedule)

    async def _replace_active(self, cj: Obj) -> None:
        for ref in self._active(cj):
            try:
                job = await self.client.get(JOBS, str(ref.get("name")),
                                            namespace=namespace_of(cj))
            except Exception as err:
                self.recorder.event(cj, EVENT_TYPE_WARNING, "FailedGet", f"Get job: {err}")
                raise
            if not await self.delete_job(cj, job, "ConcurrencyPolicyReplace",
                                         f"CronJob {name_of(cj)}: concurrencyPolicy Replace; "
                                         f"job {name_of(job)} was still active at the next "
                                         "scheduled time"):
                raise RuntimeError(f"could not replace job {namespace_of(job)}/{name_of(job)}")

    async def _create_job(self, cj: Obj, scheduled: datetime, schedule: cu.Schedule,
                          ) -> Obj | None:
        """The created Job; an already existing one of ours not yet in ``status.active``;
        None when there is nothing to record."""
        request = cu.job_from_template(cj, scheduled, schedule)
        try:
            job = await self.client.create(JOBS, request, namespace=namespace_of(cj))
        except Exception as err:
            if has_status_cause(err, NAMESPACE_TERMINATING_CAUSE):
                raise
            if not is_already_exists(err):
                self.recorder.event(cj, EVENT_TYPE_WARNING, "FailedCreate",
                                    f"Error creating job: {err}")
                raise
            existing = await self.client.get(JOBS, name_of(request), namespace=namespace_of(cj))
            if not is_controlled_by(existing, cj) or any(
                    r.get("uid") == uid_of(existing) for r in self._active(cj)):
                return None
            return existing
        self.recorder.event(cj, EVENT_TYPE_NORMAL, "SuccessfulCreate",
                            f"Created job {name_of(job)}")
        return job

    async def delete_job(self, cj: Obj, job: Obj, reason: str, message: str) -> bool:
        """Delete a Job and its pods (propagation Background) and drop it from ``active``;
        the DELETE is recorded with ``reason`` and ``message``."""
        try:
            await self.client.delete(JOBS, name_of(job), namespace=namespace_of(job),
                                     options=DeleteOptions(
                                         propagation_policy=DeletionPropagation.BACKGROUND,
                                         preconditions_uid=uid_of(job)))
        except Exception as err:
            if is_not_found(err):  # already gone (a stale cache): nothing to report
                self._delete_from_active(cj, uid_of(job))
                return True
            self.recorder.event(cj, EVENT_TYPE_WARNING, "FailedDelete", f"Deleted job: {err}")
            return False
        self._delete_from_active(cj, uid_of(job))
        self.recorder.event(cj, EVENT_TYPE_NORMAL, "SuccessfulDelete",
                            f"Deleted job {name_of(job)}")
        with contextlib.suppress(Exception):  # a record never fails a deletion
            self.deletions.record_deletion(Deletion(
                self.clock.now(), self.component, object_reference(job, "batch/v1", "Job"),
                reason, message, propagation_policy=str(DeletionPropagation.BACKGROUND)))
        return True

    async def cleanup_finished_jobs(self, cj: Obj, jobs: list[Obj]) -> None:
        """Delete the oldest finished Jobs beyond the history limits."""
        spec = cj.get("spec") or {}
        for wanted, limit_key, reason in (
                ("Complete", "successfulJobsHistoryLimit", "SuccessfulJobsHistoryLimit"),
                ("Failed", "failedJobsHistoryLimit", "FailedJobsHistoryLimit")):
            limit = spec.get(limit_key)
            if limit is None:
                continue
            finished = [j for j in jobs
                        if finished_condition(j) == wanted and not is_being_deleted(j)]
            excess = len(finished) - int(limit)
            if excess <= 0:
                continue
            for job in sorted(finished, key=cu.job_start_key)[:excess]:
                await self.delete_job(cj, job, reason, (
                    f"CronJob {name_of(cj)} keeps {limit_key} {limit}: {len(finished)} "
                    f"{wanted} Jobs, the {excess} oldest deleted"))
