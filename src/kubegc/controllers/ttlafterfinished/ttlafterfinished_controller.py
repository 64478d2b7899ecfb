"""The TTL-after-finished controller (cf. pkg/controller/ttlafterfinished/
ttlafterfinished_controller.go).

Contract, per Job (times from the injected clock, so ``--time-scale`` speeds TTLs up):
  * a Job is queued when it is added or updated, not being deleted, and ``needs_cleanup``:
    ``spec.ttlSecondsAfterFinished`` is set and it is finished (a ``Complete`` or
    ``Failed`` condition True; cf. ``needsCleanup``, ``jobutil.IsJobFinished``);
  * it expires ``ttlSecondsAfterFinished`` seconds after it finished, the
    ``lastTransitionTime`` of that condition (``jobFinishTime``); before then its key is
    requeued for the time left (``processTTL``'s ``enqueueAfter``);
  * once expired in the informer's copy, the Job is read afresh (the cached TTL may be
    stale) and judged again; if the fresh Job has expired too it is deleted with
    propagation ``Foreground`` and a uid precondition (``processJob``), so its pods go
    first and a Job re-created under the same name is not touched;
  * each DELETE that succeeded is handed to the ``DeletionSink`` (kubegc's own: ``kubegc
    why job/x`` names this controller, the finish time, the TTL and the expiry).
A finished Job without a finish time, or whose fields cannot be understood, is skipped
(logged, or a Warning event) rather than retried in a loop: a retry cannot mend it, and
an update queues it again. Upstream records no events of its own; neither does this.
Component and ServiceAccount ``ttl-after-finished-controller``.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from kubegc.api.clock import format_time, parse_time
from kubegc.api.errors import StatusError, is_not_found
from kubegc.api.meta import DeletionPropagation, is_being_deleted, uid_of
from kubegc.api.types import Obj
from kubegc.client.cache import FuncHandler, split_meta_namespace_key
from kubegc.client.interface import DeleteOptions
from kubegc.component.base_controller import BaseController
from kubegc.component.config import TTLAfterFinishedControllerConfiguration
from kubegc.component.context import ControllerContext
from kubegc.component.deletions import (
    Deletion,
    DeletionSink,
    NullDeletionSink,
    object_reference,
)
from kubegc.component.objects import JOB
from kubegc.controllers.job.util import JOB_COMPLETE, JOB_FAILED, JOBS, is_job_finished

log = logging.getLogger(__name__)

#: the DeletionRecord reason of a TTL deletion (``kubegc.component.deletions``)
REASON_TTL_AFTER_FINISHED = "TTLAfterFinished"


class FinishTimeError(ValueError):
    """A finished Job whose finishing condition has no time (upstream: "unable to find the
    time when the Job finished")."""


@dataclass(frozen=True, slots=True)
class Expiry:
    """When a finished Job finished (``condition`` says how) and when its TTL runs out."""

    condition: str
    finish_at: datetime
    ttl: int
    expire_at: datetime

    def describe(self) -> str:
        return (f"finished ({self.condition}) at {format_time(self.finish_at)}, "
                f"ttlSecondsAfterFinished {self.ttl}, expired at {format_time(self.expire_at)}")


def needs_cleanup(job: Obj) -> bool:
    """``needsCleanup``: a TTL is set and the Job has finished."""
    return (job.get("spec") or {}).get("ttlSecondsAfterFinished") is not None and (
        is_job_finished(job))


def finish_and_expire_time(job: Obj) -> Expiry:
    """``getFinishAndExpireTime`` (with ``jobFinishTime``): the first ``Complete`` or
    ``Failed`` condition that is True gives the finish time. Raises ``FinishTimeError``
    when it has none (or the Job needs no clean-up)."""
    if not needs_cleanup(job):
        raise FinishTimeError("the Job should not be cleaned up")
    ttl = int(job["spec"]["ttlSecondsAfterFinished"])
    for cond in (job.get("status") or {}).get("conditions") or []:
        if cond.get("type") in (JOB_COMPLETE, JOB_FAILED) and cond.get("status") == "True":
            stamp = cond.get("lastTransitionTime")
            if not stamp:
                raise FinishTimeError("unable to find the time when the Job finished")
            finish_at = parse_time(str(stamp))
            try:
                expire_at = finish_at + timedelta(seconds=ttl)
            except OverflowError:  # a TTL past year 9999 (stored below validation): never
                expire_at = datetime.max.replace(tzinfo=UTC)
            return Expiry(str(cond["type"]), finish_at, ttl, expire_at)
    raise FinishTimeError("unable to find the status of the finished Job")


def time_left(job: Obj, since: datetime) -> tuple[float, Expiry]:
    """``timeLeft``: seconds until the Job expires (<= 0: expired), and its expiry."""
    expiry = finish_and_expire_time(job)
    if expiry.finish_at > since:
        log.info("Warning: Found Job finished in the future. This is likely due to time skew "
                 "in the cluster. Job cleanup will be deferred. job=%s/%s",
                 job["metadata"].get("namespace"), job["metadata"].get("name"))
    return (expiry.expire_at - since).total_seconds(), expiry


@dataclass(frozen=True, slots=True)
class _Judged:
    """``processTTL``'s answer: the expiry if the TTL ran out, else the seconds until
    it does (None: nothing to wait for)."""

    expired: Expiry | None = None
    requeue: float | None = None


class TTLAfterFinishedController(BaseController):
    """Deletes finished Jobs whose TTL ran out (cf. ``ttlafterfinished.Controller``).

    Ownership: handlers only queue keys; ``sync`` (one worker per key at a time, as the
    queue guarantees) is the only writer; the DeletionSink is called after each DELETE.
    """

    name = "ttl-after-finished-controller"
    component = "ttl-after-finished-controller"

    def __init__(self, ctx: ControllerContext[TTLAfterFinishedControllerConfiguration],
                 deletions: DeletionSink | None = None) -> None:
        super().__init__(ctx, workers=ctx.options.concurrent_ttl_syncs)
        self.deletions = deletions if deletions is not None else NullDeletionSink()
        self.job_informer = self.informer_factory.for_resource(JOBS)
        self.synced_informers = [self.job_informer]
        self.primary_informer = self.job_informer

    def register_handlers(self) -> None:
        self.job_informer.add_event_handler(FuncHandler(
            add=lambda job, _initial: self.add_job(job),
            update=lambda _old, cur: self.add_job(cur)))

    def add_job(self, job: Obj) -> None:
        """``addJob``/``updateJob``: queue a finished Job with a TTL."""
        if not is_being_deleted(job) and JOB.understood(job) and needs_cleanup(job):
            self.enqueue(job)

    def process_ttl(self, job: Obj) -> _Judged:
        """``processTTL``: whether the Job expired; if not, when to look again."""
        if is_being_deleted(job) or not needs_cleanup(job):
            return _Judged()
        left, expiry = time_left(job, self.clock.now())
        if left <= 0:
            return _Judged(expired=expiry)
        return _Judged(requeue=left)

    async def sync(self, key: str) -> float | None:
        """``processJob``: judge the cached Job, then the fresh one, then delete."""
        cached = self.job_informer.indexer.get_by_key(key)
        if cached is None:
            return None
        JOB.check(cached)
        try:
            judged = self.process_ttl(cached)
            if judged.expired is None:
                return judged.requeue
            namespace, name = split_meta_namespace_key(key)
            try:
                fresh = await self.client.get(JOBS, name, namespace=namespace)
            except StatusError as err:
                if is_not_found(err):
                    return None
                raise
            JOB.check(fresh)
            judged = self.process_ttl(fresh)
        except FinishTimeError as err:
            log.error("ttl-after-finished: job %s: %s; not cleaned up", key, err)
            return None
        if judged.expired is None:
            return judged.requeue
        await self.delete_job(fresh, judged.expired)
        return None

    async def delete_job(self, job: Obj, expiry: Expiry) -> None:
        """Cascade-delete the Job (Foreground, uid precondition) and record it."""
        namespace, name = job["metadata"].get("namespace"), job["metadata"].get("name")
        log.info("Cleaning up Job %s/%s", namespace, name)
        try:
            await self.client.delete(JOBS, str(name), namespace=str(namespace),
                                     options=DeleteOptions(
                                         propagation_policy=DeletionPropagation.FOREGROUND,
                                         preconditions_uid=uid_of(job)))
        except StatusError as err:
            if is_not_found(err):  # gone, or re-created with another uid: nothing to do
                return
            raise
        with contextlib.suppress(Exception):  # a record never fails a deletion
            self.deletions.record_deletion(Deletion(
                self.clock.now(), self.component, object_reference(job, "batch/v1", "Job"),
                REASON_TTL_AFTER_FINISHED, f"the Job {expiry.describe()}",
                propagation_policy=str(DeletionPropagation.FOREGROUND)))
