"""The Job controller (cf. pkg/controller/job/job_controller.go), NonIndexed Jobs.

Contract, per Job ``job``:
  * runs ``min(parallelism, completions - succeeded)`` active pods (``parallelism`` until
    the first success when ``completions`` is unset), created from the template with
    ``generateName: "<job>-"``, a controller reference and the tracking finalizer
    ``batch.kubernetes.io/job-tracking``; after pod failures new pods wait for the
    exponential backoff (10 s doubling, at most 10 min);
  * counts finished pods exactly once, as upstream: a finished (or deleted) pod's UID first
    goes to ``status.uncountedTerminatedPods``, then its finalizer is removed, then it moves
    to ``status.succeeded``/``status.failed``; deleted pods count as failed;
  * ``failed > backoffLimit`` → ``FailureTarget`` (BackoffLimitExceeded), active pods
    deleted, then ``Failed`` once none is left terminating; past
    ``activeDeadlineSeconds`` likewise (DeadlineExceeded); ``succeeded >= completions``
    with no active pod → ``SuccessCriteriaMet`` then ``Complete`` (CompletionsReached,
    "Reached expected number of succeeded pods") with ``completionTime``;
  * ``status.startTime`` is set on the first sync of a Job that is not suspended; a
    suspended Job has its active pods deleted and a ``Suspended`` condition;
  * pods whose Job is gone or finished get their tracking finalizer removed (the orphan
    queue), so the garbage collector can delete them.
Events: ``SuccessfulCreate`` "Created pod: x", ``SuccessfulDelete``, ``Completed`` "Job
completed", ``BackoffLimitExceeded`` …; component ``job-controller``. Each pod DELETE that
succeeded is handed to the ``DeletionSink`` with the rule that made it (the Job's condition
reason — ``BackoffLimitExceeded``, ``DeadlineExceeded``, ``CompletionsReached`` — or
``TooManyActivePods``, ``JobSuspended``), so ``kubegc why pod/x`` names the Job controller.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any

import kubegc.controllers.job.util as ju
from kubegc.api.errors import StatusError, is_not_found
from kubegc.api.meta import (
    controller_ref_of,
    is_being_deleted,
    name_of,
    namespace_of,
    uid_of,
)
from kubegc.api.pod import PODS
from kubegc.api.types import Obj
from kubegc.client.cache import DeletedFinalStateUnknown, FuncHandler, meta_namespace_key
from kubegc.client.workqueue import RateLimitingQueue
from kubegc.component.base_controller import BaseController, tombstone_object
from kubegc.component.context import ControllerContext
from kubegc.component.deletions import DeletionSink, NullDeletionSink
from kubegc.component.objects import JOB, POD
from kubegc.controllers.controller_ref_manager import (
    PodControllerRefManager,
    fresh_controller_getter,
    recheck_deletion_timestamp,
)
from kubegc.controllers.controller_utils import (
    CONTROLLER_UID_INDEX,
    PodControl,
    controller_uid_index_func,
    ensure_indexers,
    filter_by_owner,
    selector_of,
)
from kubegc.controllers.expectations import UIDTrackingControllerExpectations
from kubegc.controllers.job.sync import JobContext, sync_job

JOBS = ju.JOBS
log = logging.getLogger(__name__)


class JobController(BaseController):
    """Runs Jobs' pods to completion and keeps their status."""

    name = "job"
    component = "job-controller"

    def __init__(self, ctx: ControllerContext[None], deletions: DeletionSink | None = None
                 ) -> None:
        super().__init__(ctx)
        self.deletions = deletions if deletions is not None else NullDeletionSink()
        self.job_informer = self.informer_factory.for_resource(JOBS)
        self.pod_informer = self.informer_factory.for_resource(PODS)
        self.synced_informers = [self.job_informer, self.pod_informer]
        self.primary_informer = self.job_informer
        self.expectations = UIDTrackingControllerExpectations(self.clock)
        #: job key -> UIDs of pods whose finalizer removal is not yet observed
        self.finalizer_expectations: dict[str, set[str]] = {}
        self.backoff: dict[str, ju.BackoffRecord] = {}
        #: job key -> resourceVersion of our last status write the cache has not shown yet.
        #: The pod and Job informers are separate watches: a pod whose finalizer we removed
        #: may be seen before the status that counted it, and counting from a stale status
        #: would under-count (and create pods for completions already reached). While a
        #: write is unobserved, sync reads the Job from the API instead of the cache.
        self.written_status: dict[str, str] = {}
        self.pod_control = PodControl(self.client, self.recorder)
        self.orphan_queue: RateLimitingQueue[str] = RateLimitingQueue(
            name="job-orphan-pod", clock=self.clock)

    def register_handlers(self) -> None:
        ensure_indexers(self.pod_informer, {CONTROLLER_UID_INDEX: controller_uid_index_func})
        self.job_informer.add_event_handler(FuncHandler(
            add=lambda job, _initial: self.enqueue(job),
            update=self.update_job, delete=self.delete_job))
        self.pod_informer.add_event_handler(FuncHandler(
            add=self.add_pod, update=self.update_pod, delete=self.delete_pod))

    async def start(self) -> None:
        await super().start()
        self._tasks.append(asyncio.get_running_loop().create_task(
            self.run_orphan_worker(), name="job-orphan-pods"))

    async def stop(self) -> None:
        self.orphan_queue.shut_down()
        await super().stop()

    def is_idle(self) -> bool:
        return super().is_idle() and len(self.orphan_queue) == 0 and (
            self.orphan_queue.processing_count() == 0)

    # -- event handlers --------------------------------------------------------------------

    def resolve_controller_ref(self, namespace: str, ref: dict[str, Any]) -> Obj | None:
        if ref.get("kind") != "Job" or ref.get("apiVersion") != "batch/v1":
            return None
        job = self.job_informer.indexer.get_by_key(f"{namespace}/{ref.get('name')}")
        return job if job is not None and uid_of(job) == ref.get("uid") else None

    def update_job(self, _old: Obj, cur: Obj) -> None:
        key = meta_namespace_key(cur)
        if self.written_status.get(key) == (cur.get("metadata") or {}).get("resourceVersion"):
            del self.written_status[key]  # the cache caught up with our last status write
        self.enqueue_key(key)

    def delete_job(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        job = tombstone_object(obj)
        key = meta_namespace_key(job)
        self.expectations.delete_expectations(key)
        self.written_status.pop(key, None)
        self.queue.add(key)
        for pod in self.pod_informer.indexer.by_index(CONTROLLER_UID_INDEX, uid_of(job)):
            if ju.has_tracking_finalizer(pod):
                self.orphan_queue.add(meta_namespace_key(pod))

    def _job_of(self, pod: Obj) -> Obj | None:
        ref = controller_ref_of(pod)
        return self.resolve_controller_ref(namespace_of(pod), ref) if ref else None

    def _maybe_orphan(self, pod: Obj, job: Obj | None) -> None:
        if ju.has_tracking_finalizer(pod) and (job is None or ju.is_job_finished(job)):
            self.orphan_queue.add(meta_namespace_key(pod))

    def add_pod(self, pod: Obj, _initial: bool) -> None:
        if is_being_deleted(pod):
            self.delete_pod(pod, final=False)
            return
        job = self._job_of(pod)
        self._maybe_orphan(pod, job)
        if job is not None:
            self.expectations.creation_observed(meta_namespace_key(job))
            self.enqueue(job)

    def update_pod(self, old: Obj, cur: Obj) -> None:
        if (old.get("metadata") or {}).get("resourceVersion") == (
                (cur.get("metadata") or {}).get("resourceVersion")):
            return
        job = self._job_of(cur)
        if job is not None and ju.has_tracking_finalizer(old) and (
                not ju.has_tracking_finalizer(cur)):
            self._finalizer_removal_observed(meta_namespace_key(job), uid_of(cur))
        if is_being_deleted(cur):
            self.delete_pod(cur, final=False)
            return
        old_job = self._job_of(old)
        if old_job is not None and (job is None or uid_of(old_job) != uid_of(job)):
            self.enqueue(old_job)
        self._maybe_orphan(cur, job)
        if job is not None:
            self.enqueue(job)

    def delete_pod(self, obj: Obj | DeletedFinalStateUnknown, final: bool = True) -> None:
        pod = tombstone_object(obj)
        job = self._job_of(pod)
        if not final:
            self._maybe_orphan(pod, job)
        if job is None:
            return
        key = meta_namespace_key(job)
        self.expectations.deletion_observed(key, meta_namespace_key(pod))
        if final:
            self._finalizer_removal_observed(key, uid_of(pod))
        self.enqueue(job)

    def _finalizer_removal_observed(self, key: str, uid: str) -> None:
        expected = self.finalizer_expectations.get(key)
        if expected is not None:
            expected.discard(uid)

    # -- sync --------------------------------------------------------------------------------

    def satisfied_expectations(self, key: str) -> bool:
        return self.expectations.satisfied_expectations(key) and not (
            self.finalizer_expectations.get(key))

    async def sync(self, key: str) -> float | None:
        cached = self.job_informer.indexer.get_by_key(key)
        if cached is None:
            self.expectations.delete_expectations(key)
            self.finalizer_expectations.pop(key, None)
            self.backoff.pop(key, None)
            return None
        JOB.check(cached)
        if ju.is_job_finished(cached):
            self.backoff.pop(key, None)
            return None
        if key in self.written_status:
            try:
                cached = await self.client.get(JOBS, name_of(cached),
                                               namespace=namespace_of(cached))
            except StatusError as err:
                if is_not_found(err):
                    return None
                raise
            if ju.is_job_finished(cached):
                return None
        satisfied = self.satisfied_expectations(key)
        pods = await self.get_pods_for_job(cached)
        return await sync_job(JobContext(self, copy.deepcopy(cached), key, pods, satisfied))

    async def get_pods_for_job(self, job: Obj) -> list[Obj]:
        selector = selector_of(job)
        candidates = filter_by_owner(self.pod_informer, job, include_orphans=True,
                                     fields=POD)
        can_adopt = recheck_deletion_timestamp(
            fresh_controller_getter(self.client, JOBS, job, "Job"))
        manager = PodControllerRefManager(self.client, job, selector,
                                          controller_api_version="batch/v1",
                                          controller_kind="Job", can_adopt=can_adopt)
        return await manager.claim_pods(candidates)

    # -- orphan pods ---------------------------------------------------------------------------

    async def run_orphan_worker(self) -> None:
        await self.wait_for_cache_sync()
        while True:
            key, shutdown = await self.orphan_queue.get()
            if shutdown:
                return
            try:
                await self.sync_orphan_pod(key)
            except asyncio.CancelledError:
                self.orphan_queue.done(key)
                raise
            except Exception as err:
                log.info("job: error syncing orphan pod %r, requeuing: %s", key, err)
                self.orphan_queue.add_rate_limited(key)
            else:
                self.orphan_queue.forget(key)
            self.orphan_queue.done(key)

    async def sync_orphan_pod(self, key: str) -> None:
        """Remove the tracking finalizer of a pod whose Job is gone or finished."""
        pod = self.pod_informer.indexer.get_by_key(key)
        if pod is None or not ju.has_tracking_finalizer(pod):
            return
        ref = controller_ref_of(pod)
        if ref is not None:
            if ref.get("kind") != "Job" or ref.get("apiVersion") != "batch/v1":
                return
            job = self.resolve_controller_ref(namespace_of(pod), ref)
            if job is not None and not ju.is_job_finished(job):
                return
        patch = ju.remove_tracking_finalizer_patch(pod)
        if patch is None:
            return
        try:
            await self.pod_control.patch_pod(namespace_of(pod), name_of(pod), patch)
        except Exception as err:
            if not is_not_found(err):
                raise
