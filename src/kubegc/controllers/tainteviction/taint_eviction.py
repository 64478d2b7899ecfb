"""The taint-eviction controller (cf. pkg/controller/tainteviction/taint_eviction.go,
``Controller``): deletes the pods of nodes tainted ``NoExecute`` that do not tolerate the
taint at once, and those that tolerate it for ``tolerationSeconds`` when that time is up.

* Node updates whose NoExecute taints changed (``NodeUpdated``) and pod updates whose
  tolerations or node changed (``PodUpdated``) are queued as keys ``node:<name>`` and
  ``pod:<namespace>/<name>``, handled one at a time in order (upstream shards them over 8
  workers by node, handling a node's updates before its pods'); ``tainted_nodes`` keeps
  each node's NoExecute taints.
* ``process_pod_on_node`` (``decision``) says when a pod goes; the eviction is scheduled
  in a ``TimedWorkerQueue`` from the moment the controller saw the taint, and cancelled
  (event ``TaintManagerEviction`` "Cancelling deletion of Pod ns/name") when the taint
  goes, the pod goes, or it now tolerates the taint forever.
* A due eviction (``delete_pod_handler``): event ``TaintManagerEviction`` "Marking for
  deletion Pod ns/name", a fresh GET, the ``DisruptionTarget`` condition
  (``DeletionByTaintManager``) patched into the pod's status, and a DELETE with the pod's
  own grace period (uid precondition: kubegc's, so that a pod recreated under the same name
  is not deleted for its predecessor), retried up to 5 times. Each DELETE is recorded as a
  DeletionRecord naming the node, the taint and the toleration that ran out.

Pending evictions are timers, not work: ``is_idle`` is True while they wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging

from kubegc.api.clock import format_time
from kubegc.api.errors import StatusError, is_not_found
from kubegc.api.meta import name_of, namespace_of
from kubegc.api.pod import NODES, PODS, update_pod_condition
from kubegc.api.taints import Taint, no_execute_taints, taint_string, toleration_string
from kubegc.api.types import Obj
from kubegc.client.cache import FuncHandler
from kubegc.client.interface import DeleteOptions, PatchType
from kubegc.component.base_controller import BaseController, tombstone_object
from kubegc.component.context import ControllerContext
from kubegc.component.deletions import (
    Deletion,
    DeletionSink,
    NullDeletionSink,
    pod_reference,
)
from kubegc.controllers.controller_utils import (
    POD_NODE_NAME_INDEX as NODE_INDEX,
)
from kubegc.controllers.controller_utils import (
    ensure_indexers,
    pod_node_name_index_func,
)
from kubegc.controllers.tainteviction.decision import (
    DISRUPTION_TARGET_MESSAGE,
    DISRUPTION_TARGET_REASON,
    process_pod_on_node,
)
from kubegc.controllers.tainteviction.timed_workers import TimedWorker, TimedWorkerQueue

log = logging.getLogger(__name__)

#: upstream ``retries``: attempts of one eviction before it is dropped
RETRIES = 5
#: workers running due evictions (each a GET, a status patch and a DELETE)
EVICTION_WORKERS = 8


class TaintEvictionController(BaseController):
    name = "taint-eviction-controller"
    component = "taint-eviction-controller"

    def __init__(self, ctx: ControllerContext[object],
                 deletions: DeletionSink | None = None) -> None:
        super().__init__(ctx, workers=1)
        self.deletions = deletions if deletions is not None else NullDeletionSink()
        self.pods = ctx.informer_factory.for_resource(PODS)
        self.nodes = ctx.informer_factory.for_resource(NODES)
        self.synced_informers = [self.pods, self.nodes]
        self.tainted_nodes: dict[str, list[Taint]] = {}
        self.eviction_queue = TimedWorkerQueue(ctx.clock)
        self._evicting = 0

    # -- handlers (NodeUpdated, PodUpdated) -----------------------------------------------

    def register_handlers(self) -> None:
        ensure_indexers(self.pods, {NODE_INDEX: pod_node_name_index_func})
        self.pods.add_event_handler(FuncHandler(
            add=lambda pod, _: self.pod_updated(None, pod),
            update=self.pod_updated,
            delete=lambda obj: self.pod_updated(tombstone_object(obj), None)))
        self.nodes.add_event_handler(FuncHandler(
            add=lambda node, _: self.node_updated(None, node),
            update=self.node_updated,
            delete=lambda obj: self.node_updated(tombstone_object(obj), None)))

    def pod_updated(self, old: Obj | None, new: Obj | None) -> None:
        if old is not None and new is not None:
            old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
            if (old_spec.get("tolerations") == new_spec.get("tolerations")
                    and old_spec.get("nodeName") == new_spec.get("nodeName")):
                return
        pod = new if new is not None else old
        if pod is not None:
            self.queue.add(f"pod:{namespace_of(pod)}/{name_of(pod)}")

    def node_updated(self, old: Obj | None, new: Obj | None) -> None:
        if (old is not None and new is not None
                and no_execute_taints(old) == no_execute_taints(new)):
            return
        node = new if new is not None else old
        if node is not None:
            self.queue.add(f"node:{name_of(node)}")

    # -- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        await super().start()
        for i in range(EVICTION_WORKERS):
            self._tasks.append(asyncio.get_running_loop().create_task(
                self._run_eviction_worker(), name=f"{self.name}-eviction-{i}"))

    async def stop(self) -> None:
        self.eviction_queue.due.shut_down()
        await super().stop()

    def is_idle(self) -> bool:
        due = self.eviction_queue.due
        return (super().is_idle() and len(due) == 0 and due.processing_count() == 0
                and self._evicting == 0)

    # -- the update worker ----------------------------------------------------------------

    async def sync(self, key: str) -> float | None:
        kind, _, name = key.partition(":")
        if kind == "node":
            self.handle_node_update(name)
        else:
            self.handle_pod_update(name)
        return None

    def handle_node_update(self, name: str) -> None:
        node = self.nodes.indexer.get_by_key(name)
        if node is None:
            self.tainted_nodes.pop(name, None)
            return
        taints = no_execute_taints(node)
        if taints:
            self.tainted_nodes[name] = taints
        else:
            self.tainted_nodes.pop(name, None)
        pods = self.pods.indexer.by_index(NODE_INDEX, name)
        now = self.clock.monotonic()
        for pod in pods:
            key = f"{namespace_of(pod)}/{name_of(pod)}"
            if not taints:
                self.cancel_work_with_event(key)
            else:
                self.process_pod_on_node(pod, name, taints, now)

    def handle_pod_update(self, key: str) -> None:
        pod = self.pods.indexer.get_by_key(key)
        if pod is None:
            self.cancel_work_with_event(key)
            return
        node = (pod.get("spec") or {}).get("nodeName")
        taints = self.tainted_nodes.get(str(node)) if node else None
        if taints is None:
            return  # untainted, or the node went: any eviction was cancelled then
        self.process_pod_on_node(pod, str(node), taints, self.clock.monotonic())

    def process_pod_on_node(self, pod: Obj, node: str, taints: list[Taint],
                            now: float) -> None:
        key = f"{namespace_of(pod)}/{name_of(pod)}"
        eviction = process_pod_on_node((pod.get("spec") or {}).get("tolerations") or [],
                                       taints)
        if eviction is None:
            self.cancel_work_with_event(key)
            return
        if eviction.after == 0:
            self.cancel_work_with_event(key)
            self.eviction_queue.add_work(key, TimedWorker(now, now, node, eviction))
            return
        start = now
        scheduled = self.eviction_queue.get_worker(key)
        if scheduled is not None:
            start = scheduled.created_at
            if start + eviction.after < now + eviction.after:
                return  # the eviction already scheduled comes first: it stands
            self.cancel_work_with_event(key)
        self.eviction_queue.add_work(key, TimedWorker(start, now + eviction.after, node,
                                                      eviction))

    def cancel_work_with_event(self, key: str) -> None:
        if self.eviction_queue.cancel_work(key):
            namespace, _, name = key.partition("/")
            self._event(namespace, name, f"Cancelling deletion of Pod {key}")

    def _event(self, namespace: str, name: str, message: str) -> None:
        ref = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name,
                                                               "namespace": namespace}}
        self.recorder.event(ref, "Normal", "TaintManagerEviction", message)

    # -- the eviction workers (deletePodHandler) ------------------------------------------

    async def _run_eviction_worker(self) -> None:
        await self.wait_for_cache_sync()
        due = self.eviction_queue.due
        while True:
            key, shutdown = await due.get()
            if shutdown:
                return
            worker = self.eviction_queue.take(key)
            self._evicting += worker is not None
            try:
                if worker is not None:
                    ok = await self.delete_pod_handler(key, worker)
                    self.eviction_queue.finished(key, worker, ok)
            finally:
                self._evicting -= worker is not None
                due.done(key)

    async def delete_pod_handler(self, key: str, worker: TimedWorker) -> bool:
        namespace, _, name = key.partition("/")
        log.info("deleting pod %s (NoExecute taint of node %s)", key, worker.node)
        self._event(namespace, name, f"Marking for deletion Pod {key}")
        for attempt in range(RETRIES):
            try:
                pod = await self.add_condition_and_delete_pod(namespace, name)
            except StatusError as exc:
                if is_not_found(exc):
                    return True
                log.warning("evicting pod %s failed (attempt %d): %s", key, attempt + 1, exc)
                await self.clock.sleep(0.01)
                continue
            self._record(pod, worker)
            return True
        return False

    async def add_condition_and_delete_pod(self, namespace: str, name: str) -> Obj:
        """``addConditionAndDeletePod``: GET, stamp ``DisruptionTarget``, DELETE."""
        pod = await self.client.get(PODS, name, namespace=namespace)
        status = copy.deepcopy(pod.get("status") or {})
        meta = pod["metadata"]
        if update_pod_condition(status, {
                "type": "DisruptionTarget", "status": "True", "reason": DISRUPTION_TARGET_REASON,
                "message": DISRUPTION_TARGET_MESSAGE}, format_time(self.clock.now())):
            await self.client.patch(PODS, name, {"metadata": {"uid": meta.get("uid")},
                                                 "status": {"conditions": status["conditions"]}},
                                    namespace=namespace, patch_type=PatchType.MERGE,
                                    subresource="status")
        await self.client.delete(PODS, name, namespace=namespace,
                                 options=DeleteOptions(preconditions_uid=meta.get("uid")))
        return pod

    def _record(self, pod: Obj, worker: TimedWorker) -> None:
        eviction = worker.eviction
        toleration = eviction.toleration
        with contextlib.suppress(Exception):  # a record never fails an eviction
            self.deletions.record_deletion(Deletion(
                self.clock.now(), self.component, pod_reference(pod), eviction.reason,
                eviction.describe(worker.node), node=worker.node,
                taint=taint_string(eviction.taint),
                toleration=toleration_string(toleration) if toleration is not None else ""))
