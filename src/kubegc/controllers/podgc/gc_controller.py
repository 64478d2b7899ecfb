"""The pod garbage collector (cf. pkg/controller/podgc/gc_controller.go).

Every ``gc_check_period`` seconds (upstream ``gcCheckPeriod``, 20 s) of the injected clock,
upstream's four passes in upstream's order:

* terminated pods (Succeeded/Failed) beyond ``terminated_pod_gc_threshold`` (0 = off;
  upstream's default 12500) are deleted, evicted ones first, then oldest first
  (``byEvictionAndCreationTimestamp``);
* terminating pods on a node that is not Ready and tainted
  ``node.kubernetes.io/out-of-service`` (``gcTerminating``, KEP-2268) are marked Failed and
  force-deleted;
* orphaned pods: a pod bound to a node missing from the node informer puts that node in
  quarantine for ``quarantine_time`` seconds (upstream 40 s); a node still missing then
  and confirmed absent by a GET gets its pods marked ``Failed`` with condition
  ``DisruptionTarget`` (reason ``DeletionByPodGC``, "PodGC: node no longer exists") and
  force-deleted (``gracePeriodSeconds: 0``);
* unscheduled terminating pods (``deletionTimestamp`` without ``nodeName``) are marked
  Failed and force-deleted.

The check also runs as soon as a Node is deleted (the quarantine still applies). Every
DELETE is handed to the ``DeletionSink`` (kubegc's DeletionRecords: ``kubegc why`` names
pod GC, and the node that went).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import Awaitable
from typing import Any

from kubegc.api.clock import format_time
from kubegc.api.errors import StatusError, is_conflict, is_not_found
from kubegc.api.meta import is_being_deleted, name_of, namespace_of
from kubegc.api.pod import NODES, PODS
from kubegc.api.taints import TAINT_NODE_OUT_OF_SERVICE, taint_key_exists
from kubegc.api.types import Obj
from kubegc.client.cache import FuncHandler
from kubegc.client.interface import DeleteOptions, PatchType
from kubegc.client.workqueue import DelayingQueue
from kubegc.component.config import PodGCControllerConfiguration
from kubegc.component.context import ControllerContext
from kubegc.component.deletions import Deletion, DeletionSink, NullDeletionSink, pod_reference
from kubegc.component.objects import POD

log = logging.getLogger(__name__)

_TERMINAL = ("Succeeded", "Failed")


def is_pod_terminated(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") not in ("Pending", "Running", "Unknown", None)


def _eviction_and_creation_order(pod: Obj) -> tuple[bool, str, str]:
    """``byEvictionAndCreationTimestamp``: evicted pods (Failed, reason Evicted) first, then
    oldest first, then by name."""
    status = pod.get("status") or {}
    evicted = status.get("phase") == "Failed" and status.get("reason") == "Evicted"
    return (not evicted, str(pod["metadata"].get("creationTimestamp") or ""), name_of(pod))


def _is_node_ready(node: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [])


class PodGCController:
    """Deletes pods nobody else will. ``gc`` runs in one task at a time (the periodic
    loop, or a run triggered by a Node deletion), so the node queue has one consumer."""

    name = "podgc"
    component = "pod-garbage-collector"

    def __init__(self, ctx: ControllerContext[PodGCControllerConfiguration],
                 deletions: DeletionSink | None = None) -> None:
        opts = ctx.options
        self.deletions = deletions if deletions is not None else NullDeletionSink()
        self.client, self.clock = ctx.client, ctx.clock
        self.period = opts.gc_check_period
        self.quarantine = opts.quarantine_time
        self.threshold = opts.terminated_pod_gc_threshold
        self.pods = ctx.informer_factory.for_resource(PODS)
        self.nodes = ctx.informer_factory.for_resource(NODES)
        self.node_queue: DelayingQueue[str] = DelayingQueue(name="orphaned_pods_nodes",
                                                            clock=self.clock)
        self._lock = asyncio.Lock()
        self._wakeup = asyncio.Event()
        self._busy = False
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.nodes.add_event_handler(FuncHandler(delete=lambda _: self._wakeup.set()))
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        self.node_queue.shut_down()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def is_idle(self) -> bool:
        """Not in a gc pass and not asked to run one; quarantine timers do not count."""
        return not self._busy and not self._wakeup.is_set()

    def ready(self) -> bool:
        return True

    async def _run(self) -> None:
        await asyncio.gather(self.pods.wait_for_sync(), self.nodes.wait_for_sync())
        while True:
            timer = asyncio.ensure_future(self.clock.sleep(self.period))
            waker = asyncio.ensure_future(self._wakeup.wait())
            try:
                await asyncio.wait({timer, waker}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                timer.cancel()
                waker.cancel()
            self._busy = True
            self._wakeup.clear()
            try:
                await self.gc()
            except Exception:
                log.exception("pod garbage collection failed")
            finally:
                self._busy = False

    async def gc(self) -> None:
        """One pass (cf. ``PodGCController.gc``)."""
        async with self._lock:
            # a pod nobody can understand is the kubelet's to report, not podgc's to delete
            pods = [p for p in self.pods.indexer.list() if POD.understood(p)]
            if self.threshold > 0:
                await self.gc_terminated(pods)
            await self.gc_terminating(pods)
            await self.gc_orphaned(pods)
            await self.gc_unscheduled_terminating(pods)

    async def gc_terminated(self, pods: list[Obj]) -> None:
        terminated = sorted((p for p in pods if is_pod_terminated(p)),
                            key=_eviction_and_creation_order)
        for pod in terminated[: max(len(terminated) - self.threshold, 0)]:
            await self._safely(self.mark_failed_and_delete_pod(pod), pod, "TerminatedPodThreshold",
                               f"terminated pods over --terminated-pod-gc-threshold "
                               f"({self.threshold}): the oldest are deleted")

    async def gc_terminating(self, pods: list[Obj]) -> None:
        """``gcTerminating``: terminating pods of NotReady out-of-service nodes."""
        out_of_service: list[Obj] = []
        for pod in pods:
            node_name = (pod.get("spec") or {}).get("nodeName")
            if not is_being_deleted(pod) or not node_name:
                continue
            node = self.nodes.indexer.get_by_key(str(node_name))
            if node is None:
                continue
            if not _is_node_ready(node) and taint_key_exists(
                    (node.get("spec") or {}).get("taints") or [], TAINT_NODE_OUT_OF_SERVICE):
                out_of_service.append(pod)
        for pod in sorted(out_of_service, key=_eviction_and_creation_order):
            node_name = str(pod["spec"]["nodeName"])
            await self._safely(self.mark_failed_and_delete_pod(pod), pod, "NodeOutOfService",
                               f"PodGC: terminating on node {node_name}, not Ready and tainted "
                               f"{TAINT_NODE_OUT_OF_SERVICE}", node=node_name)

    async def gc_orphaned(self, pods: list[Obj]) -> None:
        existing = {name_of(n) for n in self.nodes.indexer.list()}
        for pod in pods:
            node = (pod.get("spec") or {}).get("nodeName")
            if node and node not in existing:
                self.node_queue.add_after(str(node), self.quarantine)
        deleted = await self._discover_deleted_nodes(existing)
        condition = {"type": "DisruptionTarget", "status": "True", "reason": "DeletionByPodGC",
                     "message": "PodGC: node no longer exists"}
        for pod in pods:
            if (pod.get("spec") or {}).get("nodeName") in deleted:
                log.info("found orphaned pod %s/%s assigned to the deleted node %s, deleting",
                         namespace_of(pod), name_of(pod), pod["spec"]["nodeName"])
                await self._safely(self.mark_failed_and_delete_pod(pod, condition), pod,
                                   "NodeDeleted", f"PodGC: node no longer exists "
                                   f"({pod['spec']['nodeName']})",
                                   node=str(pod["spec"]["nodeName"]))

    async def _discover_deleted_nodes(self, existing: set[str]) -> set[str]:
        deleted: set[str] = set()
        while len(self.node_queue) > 0:
            name, shutdown = await self.node_queue.get()
            if shutdown:
                break
            try:
                if name not in existing:
                    await self.client.get(NODES, name)
            except StatusError as exc:
                if is_not_found(exc):
                    deleted.add(name)
                else:
                    log.error("error while getting node %s: %s", name, exc)
            finally:
                self.node_queue.done(name)
        return deleted

    async def gc_unscheduled_terminating(self, pods: list[Obj]) -> None:
        for pod in pods:
            if is_being_deleted(pod) and not (pod.get("spec") or {}).get("nodeName"):
                await self._safely(self.mark_failed_and_delete_pod(pod), pod,
                                   "UnscheduledTerminating",
                                   "PodGC: terminating and never bound to a node")

    async def mark_failed_and_delete_pod(self, pod: Obj,
                                         condition: dict[str, Any] | None = None) -> None:
        """Patch a non-terminal pod to ``Failed`` (with ``condition``), then force-delete
        it (cf. ``markFailedAndDeletePodWithCondition``). Both writes land only on the pod
        as it was judged (its uid and resourceVersion): a pod that changed since (bound,
        re-created) is judged again on the next pass."""
        status = pod.get("status") or {}
        meta = pod.get("metadata") or {}
        uid, version = meta.get("uid"), meta.get("resourceVersion")
        if status.get("phase") not in _TERMINAL:
            new_status = copy.deepcopy(status)
            new_status["phase"] = "Failed"
            if condition is not None:
                conditions = [c for c in new_status.get("conditions") or []
                              if c.get("type") != condition["type"]]
                conditions.append({**condition, "lastTransitionTime":
                                   format_time(self.clock.now())})
                new_status["conditions"] = conditions
            patch = {"metadata": {"uid": uid, "resourceVersion": version},
                     "status": new_status}
            stored = await self.client.patch(PODS, name_of(pod), patch,
                                             namespace=namespace_of(pod),
                                             patch_type=PatchType.MERGE, subresource="status")
            version = stored["metadata"].get("resourceVersion")
        await self.client.delete(PODS, name_of(pod), namespace=namespace_of(pod),
                                 options=DeleteOptions(grace_period_seconds=0,
                                                       preconditions_uid=uid or None,
                                                       preconditions_resource_version=version
                                                       or None))

    async def _safely(self, coro: Awaitable[None], pod: Obj, reason: str, message: str, *,
                      node: str = "") -> None:
        """Run one deletion; a success is recorded, a failure logged (retried next pass)."""
        try:
            await coro
        except StatusError as exc:
            if not (is_not_found(exc) or is_conflict(exc)):
                log.error("pod gc: %s", exc)
            return
        with contextlib.suppress(Exception):  # a record never fails a deletion
            self.deletions.record_deletion(Deletion(self.clock.now(), self.component,
                                                    pod_reference(pod), reason, message,
                                                    node=node))
