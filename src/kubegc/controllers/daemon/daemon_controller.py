"""The DaemonSet controller (cf. pkg/controller/daemon/daemon_controller.go), for creation,
scaling with the nodes, and ownership.

Contract, per DaemonSet ``ds``:
  * every Node that should run it (matches the template's ``nodeSelector``, not being
    deleted, no NoSchedule/NoExecute taint the template does not tolerate) runs exactly one
    of its pods: missing ones are created (``generateName: "<ds>-"``, controller
    reference, labels ``controller-revision-hash`` and ``pod-template-generation``, the
    daemon tolerations, node affinity on ``metadata.name`` *and* ``spec.nodeName`` — kubegc's
    scheduler does not evaluate affinity, so the pod is bound directly, as DaemonSets did
    before Kubernetes 1.12), surplus ones (the newest first) and ones on nodes that should
    not run it are deleted, failed ones are deleted to be re-created (``FailedDaemonPod``);
  * orphans that match are adopted, pods that stop matching are released; expectations
    prevent double creation while the informer lags; a deleting DaemonSet only updates
    its status;
  * its history is ControllerRevisions it owns, trimmed to ``revisionHistoryLimit``, and
    a changed template rolls out with ``RollingUpdate`` (``update``: upstream's update.go);
    ``OnDelete`` leaves old pods until they are deleted;
  * status: desiredNumberScheduled, currentNumberScheduled, numberMisscheduled,
    numberReady, numberAvailable, updatedNumberScheduled, numberUnavailable,
    observedGeneration.
Each DELETE it makes (a pod on a node that should not run it, a surplus or failed pod, an
outdated pod, an old revision) is handed to its ``DeletionSink`` with the rule that made it.
Events via ``PodControl``: ``SuccessfulCreate`` "Created pod: x", ``SuccessfulDelete``
"Deleted pod: x"; component ``daemonset-controller``.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from kubegc.api.errors import is_not_found
from kubegc.api.meta import controller_ref_of, is_being_deleted, name_of, namespace_of
from kubegc.api.pod import NODES, PODS, creation_key, is_pod_available, is_pod_ready, pod_phase
from kubegc.api.types import Obj
from kubegc.api.zero_status import zero_status_fields
from kubegc.client.cache import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    FuncHandler,
    meta_namespace_index_func,
    meta_namespace_key,
)
from kubegc.client.events import EVENT_TYPE_WARNING
from kubegc.component import objects
from kubegc.component.base_controller import BaseController, tombstone_object
from kubegc.component.context import ControllerContext
from kubegc.component.deletions import Deletion, DeletionSink, NullDeletionSink, pod_reference
from kubegc.controllers.controller_ref_manager import (
    PodControllerRefManager,
    fresh_controller_getter,
    labels_of,
    recheck_deletion_timestamp,
)
from kubegc.controllers.controller_utils import (
    CONTROLLER_UID_INDEX,
    SLOW_START_INITIAL_BATCH_SIZE,
    PodControl,
    controller_uid_index_func,
    ensure_indexers,
    filter_by_owner,
    matching,
    new_controller_ref,
    selector_of,
    slow_start_batch,
    update_status_of,
)
from kubegc.controllers.daemon.update import (
    DAEMONSETS,
    Doomed,
    cleanup_history,
    construct_history,
    controlled_histories,
    rolling_update,
    template_hash,
)
from kubegc.controllers.daemon.util import daemon_pod_template, node_should_run, pod_node
from kubegc.controllers.expectations import UIDTrackingControllerExpectations
from kubegc.controllers.history import CONTROLLER_REVISIONS, ControllerHistory

BURST_REPLICAS = 250

class DaemonSetsController(BaseController):
    """One pod per eligible Node for every DaemonSet."""

    name = "daemonset"
    component = "daemonset-controller"

    def __init__(self, ctx: ControllerContext[None], *,
                 deletions: DeletionSink | None = None) -> None:
        super().__init__(ctx)
        self.ds_informer = self.informer_factory.for_resource(DAEMONSETS)
        self.pod_informer = self.informer_factory.for_resource(PODS)
        self.node_informer = self.informer_factory.for_resource(NODES)
        self.history_informer = self.informer_factory.for_resource(CONTROLLER_REVISIONS)
        self.synced_informers = [self.ds_informer, self.pod_informer, self.node_informer,
                                 self.history_informer]
        self.primary_informer = self.ds_informer
        self.expectations = UIDTrackingControllerExpectations(self.clock)
        self.pod_control = PodControl(self.client, self.recorder)
        self.history = ControllerHistory(self.client, self.history_informer)
        self.deletions = deletions if deletions is not None else NullDeletionSink()

    def register_handlers(self) -> None:
        ensure_indexers(self.ds_informer, {NAMESPACE_INDEX: meta_namespace_index_func})
        ensure_indexers(self.pod_informer, {CONTROLLER_UID_INDEX: controller_uid_index_func})
        self.ds_informer.add_event_handler(FuncHandler(
            add=lambda ds, _initial: self.enqueue(ds), update=lambda _o, cur: self.enqueue(cur),
            delete=self.delete_ds))
        self.pod_informer.add_event_handler(FuncHandler(
            add=self.add_pod, update=self.update_pod, delete=self.delete_pod))
        self.node_informer.add_event_handler(FuncHandler(
            add=lambda _node, _initial: self.enqueue_all(), update=self.update_node,
            delete=lambda _node: self.enqueue_all()))
        ensure_indexers(self.history_informer, {NAMESPACE_INDEX: meta_namespace_index_func})
        self.history_informer.add_event_handler(FuncHandler(
            add=lambda h, _initial: self.history_changed(h),
            update=self.update_history,
            delete=self.history_changed))

    # -- event handlers ----------------------------------------------------------------------

    def enqueue_all(self) -> None:
        for ds in self.ds_informer.indexer.list():
            self.enqueue(ds)

    def update_node(self, old: Obj, cur: Obj) -> None:
        """Heartbeats change nothing a DaemonSet looks at: only react to what does."""
        def relevant(node: Obj) -> tuple[Any, ...]:
            return (labels_of(node), (node.get("spec") or {}).get("taints"),
                    (node.get("metadata") or {}).get("deletionTimestamp"))

        if relevant(old) != relevant(cur):
            self.enqueue_all()

    def update_history(self, old: Obj, cur: Obj) -> None:
        if controller_ref_of(old) != controller_ref_of(cur):
            self.history_changed(old)
        self.history_changed(cur)

    def history_changed(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        """``addHistory``/``updateHistory``/``deleteHistory``: the owning set, or the sets
        an orphan matches."""
        history = tombstone_object(obj)
        ref = controller_ref_of(history)
        if ref is not None:
            ds = self.resolve_controller_ref(namespace_of(history), ref)
            if ds is not None:
                self.enqueue(ds)
            return
        if not isinstance(obj, DeletedFinalStateUnknown):
            for candidate in self._matching(history):
                self.enqueue(candidate)

    def delete_ds(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        key = meta_namespace_key(tombstone_object(obj))
        self.expectations.delete_expectations(key)
        self.queue.add(key)

    def resolve_controller_ref(self, namespace: str, ref: dict[str, Any]) -> Obj | None:
        if ref.get("kind") != "DaemonSet":
            return None
        ds = self.ds_informer.indexer.get_by_key(f"{namespace}/{ref.get('name')}")
        return ds if ds is not None and (ds.get("metadata") or {}).get("uid") == ref.get(
            "uid") else None

    def _matching(self, pod: Obj) -> list[Obj]:
        return matching(self.ds_informer.indexer.by_index(NAMESPACE_INDEX, namespace_of(pod)),
                        pod, fields=objects.DAEMON_SET)

    def add_pod(self, pod: Obj, _initial: bool) -> None:
        if is_being_deleted(pod):
            self.delete_pod(pod)
            return
        ref = controller_ref_of(pod)
        if ref is None:
            for candidate in self._matching(pod):
                self.enqueue(candidate)
            return
        ds = self.resolve_controller_ref(namespace_of(pod), ref)
        if ds is not None:
            self.expectations.creation_observed(meta_namespace_key(ds))
            self.enqueue(ds)

    def update_pod(self, old: Obj, cur: Obj) -> None:
        if is_being_deleted(cur):
            self.delete_pod(cur)
            return
        old_ref, cur_ref = controller_ref_of(old), controller_ref_of(cur)
        if old_ref is not None and old_ref != cur_ref:
            ds = self.resolve_controller_ref(namespace_of(old), old_ref)
            if ds is not None:
                self.enqueue(ds)
        if cur_ref is None:
            for candidate in self._matching(cur):
                self.enqueue(candidate)
            return
        owner = self.resolve_controller_ref(namespace_of(cur), cur_ref)
        if owner is not None:
            self.enqueue(owner)

    def delete_pod(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        pod = tombstone_object(obj)
        ref = controller_ref_of(pod)
        ds = self.resolve_controller_ref(namespace_of(pod), ref) if ref else None
        if ds is not None:
            self.expectations.deletion_observed(meta_namespace_key(ds), meta_namespace_key(pod))
            self.enqueue(ds)

    # -- sync ----------------------------------------------------------------------------------

    async def sync(self, key: str) -> float | None:
        cached = self.ds_informer.indexer.get_by_key(key)
        if cached is None:
            self.expectations.delete_expectations(key)
            return None
        objects.DAEMON_SET.check(cached)
        ds = copy.deepcopy(cached)
        selector = selector_of(ds)
        manager = PodControllerRefManager(
            self.client, ds, selector, controller_api_version="apps/v1",
            controller_kind="DaemonSet", can_adopt=recheck_deletion_timestamp(
                fresh_controller_getter(self.client, DAEMONSETS, ds, "DaemonSet")))
        pods = await manager.claim_pods(filter_by_owner(self.pod_informer, ds,
                                                        include_orphans=True,
                                                        fields=objects.POD))
        # a node no component can understand runs no daemon pod (and stops no other)
        nodes = [n for n in self.node_informer.indexer.list() if objects.NODE.understood(n)]
        hash_ = template_hash(ds)
        if not is_being_deleted(ds):
            revisions = await controlled_histories(self.client, self.history, ds, selector)
            cur, old = await construct_history(self.client, self.history, ds, revisions, pods)
            hash_ = labels_of(cur).get("controller-revision-hash") or hash_
            if self.expectations.satisfied_expectations(key):
                await self.update_daemon_set(ds, key, nodes, pods, hash_, old)
        await update_status_of(self.client, DAEMONSETS, ds,
                               self.compute_status(ds, nodes, pods, hash_),
                               keep=zero_status_fields("apps", "daemonsets"))
        return None

    async def update_daemon_set(self, ds: Obj, key: str, nodes: list[Obj], pods: list[Obj],
                                hash_: str, old: list[Obj]) -> None:
        """``updateDaemonSet``: manage, roll out once the manage loop's expectations are
        met, trim the history."""
        await self.manage(ds, key, nodes, pods, hash_)
        strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
        if (self.expectations.satisfied_expectations(key)
                and strategy.get("type", "RollingUpdate") == "RollingUpdate"):
            eligible = {name_of(n) for n in nodes if node_should_run(n, ds)}
            by_node: dict[str, list[Obj]] = {n: [] for n in eligible}
            for pod in pods:
                if pod_node(pod) in eligible:
                    by_node[pod_node(pod)].append(pod)
            doomed = rolling_update(ds, by_node, len(eligible), hash_, clock=self.clock)
            if doomed:
                self.expectations.set_expectations(
                    key, add=0, deleted_keys=[meta_namespace_key(d.pod) for d in doomed])
                await self.delete_pods(ds, key, doomed)
        await cleanup_history(self.history, self.deletions, ds, old, pods,
                              deleter=self.component, clock=self.clock)

    def plan(self, ds: Obj, nodes: list[Obj], pods: list[Obj]) -> tuple[list[str], list[Doomed]]:
        """(nodes needing a pod, pods to delete and why) (cf. ``podsShouldBeOnNode``)."""
        by_node: dict[str, list[Obj]] = {}
        for pod in pods:
            by_node.setdefault(pod_node(pod), []).append(pod)
        needing: list[str] = []
        doomed: list[Doomed] = []
        for node in nodes:
            here = [p for p in by_node.get(name_of(node), []) if not is_being_deleted(p)]
            if not node_should_run(node, ds):
                doomed.extend(Doomed(p, "NodeNotEligible",
                                     f"node {name_of(node)} should no longer run DaemonSet "
                                     f"{name_of(ds)} (its nodeSelector, a taint it does not "
                                     "tolerate, or the node being deleted)") for p in here)
                continue
            running = []
            for pod in here:
                if pod_phase(pod) == "Failed":
                    self.recorder.event(ds, EVENT_TYPE_WARNING, "FailedDaemonPod",
                                        f"Found failed daemon pod {namespace_of(pod)}/"
                                        f"{name_of(pod)} on node {name_of(node)}, will try to "
                                        "kill it")
                    doomed.append(Doomed(pod, "PodFailed",
                                         f"pod {name_of(pod)} of DaemonSet {name_of(ds)} "
                                         f"failed on node {name_of(node)}: deleted to be "
                                         "created again"))
                else:
                    running.append(pod)
            if not running:
                needing.append(name_of(node))
            doomed.extend(Doomed(p, "ExcessDaemonPod",
                                 f"node {name_of(node)} ran more than one pod of DaemonSet "
                                 f"{name_of(ds)}: all but the oldest are deleted")
                          for p in sorted(running, key=creation_key)[1:])
        return needing, doomed

    async def manage(self, ds: Obj, key: str, nodes: list[Obj], pods: list[Obj],
                     hash_: str) -> None:
        needing, doomed = self.plan(ds, nodes, pods)
        needing, doomed = needing[:BURST_REPLICAS], doomed[:BURST_REPLICAS]
        self.expectations.set_expectations(key, add=len(needing),
                                           deleted_keys=[meta_namespace_key(d.pod)
                                                         for d in doomed])
        ref = new_controller_ref(ds, "apps/v1", "DaemonSet")
        queue = list(needing)

        async def create() -> None:
            node = queue.pop(0)
            await self.pod_control.create_pods(namespace_of(ds),
                                               daemon_pod_template(ds, node, hash_),
                                               ds, ref)

        successes, err = await slow_start_batch(len(needing), SLOW_START_INITIAL_BATCH_SIZE,
                                                create)
        if len(needing) - successes:
            self.expectations.lower_expectations(key, add=len(needing) - successes)
        try:
            await self.delete_pods(ds, key, doomed)
        except Exception:
            if err is None:
                raise
        if err is not None:
            raise err

    async def delete_pods(self, ds: Obj, key: str, doomed: list[Doomed]) -> None:
        """Delete the ``doomed`` pods (their expectations set), each DELETE that succeeded
        a Deletion for its rule."""

        async def delete(d: Doomed) -> None:
            try:
                await self.pod_control.delete_pod(d.pod, ds)
            except Exception as failure:
                self.expectations.deletion_observed(key, meta_namespace_key(d.pod))
                if not is_not_found(failure):
                    raise
                return
            self.deletions.record_deletion(Deletion(self.clock.now(), self.component,
                                                    pod_reference(d.pod), d.reason, d.message))

        results = await asyncio.gather(*(delete(d) for d in doomed), return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            raise errors[0]

    def compute_status(self, ds: Obj, nodes: list[Obj], pods: list[Obj],
                       hash_: str) -> dict[str, Any]:
        now = self.clock.now()
        min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
        live = [p for p in pods if not is_being_deleted(p)]
        desired = current = misscheduled = ready = available = updated = 0
        for node in nodes:
            here = [p for p in live if pod_node(p) == name_of(node)]
            if node_should_run(node, ds):
                desired += 1
                if here:
                    current += 1
                    pod = sorted(here, key=creation_key)[0]
                    if is_pod_ready(pod):
                        ready += 1
                        available += is_pod_available(pod, min_ready, now)
                    updated += labels_of(pod).get("controller-revision-hash") == hash_
            elif here:
                misscheduled += 1
        status: dict[str, Any] = {
            "currentNumberScheduled": current, "numberMisscheduled": misscheduled,
            "desiredNumberScheduled": desired, "numberReady": ready,
            "observedGeneration": (ds.get("metadata") or {}).get("generation"),
            "updatedNumberScheduled": updated, "numberAvailable": available,
            "numberUnavailable": desired - available}
        # storeDaemonSetStatus writes these over the status it read: collisionCount stays
        collisions = (ds.get("status") or {}).get("collisionCount")
        if collisions is not None:
            status["collisionCount"] = collisions
        return status
