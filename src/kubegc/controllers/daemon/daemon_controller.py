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
  * status: desiredNumberScheduled, currentNumberScheduled, numberMisscheduled,
    numberReady, numberAvailable, updatedNumberScheduled, numberUnavailable,
    observedGeneration.
Not modelled: rolling updates of the template (pods keep their revision until deleted).
Events via ``PodControl``: ``SuccessfulCreate`` "Created pod: x", ``SuccessfulDelete``
"Deleted pod: x"; component ``daemonset-controller``.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from kubegc.api.errors import is_not_found
from kubegc.api.labels import selector_from_set
from kubegc.api.meta import controller_ref_of, is_being_deleted, name_of, namespace_of
from kubegc.api.pod import NODES, PODS, creation_key, is_pod_available, is_pod_ready, pod_phase
from kubegc.api.resources import GroupVersionResource
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
    compute_hash,
    controller_uid_index_func,
    ensure_indexers,
    filter_by_owner,
    matching,
    new_controller_ref,
    selector_of,
    slow_start_batch,
    update_status_of,
)
from kubegc.controllers.expectations import UIDTrackingControllerExpectations

DAEMONSETS = GroupVersionResource("apps", "v1", "daemonsets")
BURST_REPLICAS = 250

DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)


def _tolerates(tolerations: list[dict[str, Any]], taint: dict[str, Any]) -> bool:
    for t in tolerations:
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        if t.get("key") and t.get("key") != taint.get("key"):
            continue
        if not t.get("key") and t.get("operator") != "Exists":
            continue
        if t.get("operator") == "Exists" or (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def daemon_pod_template(ds: Obj, node_name: str, template_hash: str) -> Obj:
    """The template of ``ds`` bound to ``node_name`` (labels, tolerations, affinity)."""
    template = copy.deepcopy((ds.get("spec") or {}).get("template") or {})
    meta = template.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), "controller-revision-hash": template_hash,
                      "pod-template-generation": str((ds.get("metadata") or {}).get(
                          "generation") or 1)}
    spec = template.setdefault("spec", {})
    tolerations = list(spec.get("tolerations") or [])
    for key, effect in DAEMON_TOLERATIONS:
        if not any(t.get("key") == key and t.get("effect") == effect for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": effect})
    spec["tolerations"] = tolerations
    spec["affinity"] = {**(spec.get("affinity") or {}), "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
            "matchFields": [{"key": "metadata.name", "operator": "In",
                             "values": [node_name]}]}]}}}
    spec["nodeName"] = node_name
    return template


def node_should_run(node: Obj, ds: Obj) -> bool:
    if is_being_deleted(node):
        return False
    pod_spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
    if not selector_from_set(pod_spec.get("nodeSelector")).matches(labels_of(node)):
        return False
    tolerations = [*(pod_spec.get("tolerations") or []),
                   *({"key": k, "operator": "Exists", "effect": e} for k, e in DAEMON_TOLERATIONS)]
    return all(_tolerates(tolerations, taint)
               for taint in (node.get("spec") or {}).get("taints") or []
               if taint.get("effect") in ("NoSchedule", "NoExecute"))


def pod_node(pod: Obj) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


class DaemonSetsController(BaseController):
    """One pod per eligible Node for every DaemonSet."""

    name = "daemonset"
    component = "daemonset-controller"

    def __init__(self, ctx: ControllerContext[None]) -> None:
        super().__init__(ctx)
        self.ds_informer = self.informer_factory.for_resource(DAEMONSETS)
        self.pod_informer = self.informer_factory.for_resource(PODS)
        self.node_informer = self.informer_factory.for_resource(NODES)
        self.synced_informers = [self.ds_informer, self.pod_informer, self.node_informer]
        self.primary_informer = self.ds_informer
        self.expectations = UIDTrackingControllerExpectations(self.clock)
        self.pod_control = PodControl(self.client, self.recorder)

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
        template_hash = compute_hash((ds.get("spec") or {}).get("template") or {},
                                     (ds.get("status") or {}).get("collisionCount"))
        if self.expectations.satisfied_expectations(key) and not is_being_deleted(ds):
            await self.manage(ds, key, nodes, pods, template_hash)
        await update_status_of(self.client, DAEMONSETS, ds,
                               self.compute_status(ds, nodes, pods, template_hash),
                               keep=zero_status_fields("apps", "daemonsets"))
        return None

    def plan(self, ds: Obj, nodes: list[Obj], pods: list[Obj]) -> tuple[list[str], list[Obj]]:
        """(nodes needing a pod, pods to delete) (cf. ``podsShouldBeOnNode``)."""
        by_node: dict[str, list[Obj]] = {}
        for pod in pods:
            by_node.setdefault(pod_node(pod), []).append(pod)
        needing: list[str] = []
        doomed: list[Obj] = []
        for node in nodes:
            here = [p for p in by_node.get(name_of(node), []) if not is_being_deleted(p)]
            if not node_should_run(node, ds):
                doomed.extend(here)
                continue
            running = []
            for pod in here:
                if pod_phase(pod) == "Failed":
                    self.recorder.event(ds, EVENT_TYPE_WARNING, "FailedDaemonPod",
                                        f"Found failed daemon pod {namespace_of(pod)}/"
                                        f"{name_of(pod)} on node {name_of(node)}, will try to "
                                        "kill it")
                    doomed.append(pod)
                else:
                    running.append(pod)
            if not running:
                needing.append(name_of(node))
            doomed.extend(sorted(running, key=creation_key)[1:])
        return needing, doomed

    async def manage(self, ds: Obj, key: str, nodes: list[Obj], pods: list[Obj],
                     template_hash: str) -> None:
        needing, doomed = self.plan(ds, nodes, pods)
        needing, doomed = needing[:BURST_REPLICAS], doomed[:BURST_REPLICAS]
        self.expectations.set_expectations(key, add=len(needing),
                                           deleted_keys=[meta_namespace_key(p) for p in doomed])
        ref = new_controller_ref(ds, "apps/v1", "DaemonSet")
        queue = list(needing)

        async def create() -> None:
            node = queue.pop(0)
            await self.pod_control.create_pods(namespace_of(ds),
                                               daemon_pod_template(ds, node, template_hash),
                                               ds, ref)

        successes, err = await slow_start_batch(len(needing), SLOW_START_INITIAL_BATCH_SIZE,
                                                create)
        if len(needing) - successes:
            self.expectations.lower_expectations(key, add=len(needing) - successes)

        async def delete(pod: Obj) -> None:
            try:
                await self.pod_control.delete_pod(pod, ds)
            except Exception as failure:
                self.expectations.deletion_observed(key, meta_namespace_key(pod))
                if not is_not_found(failure):
                    raise

        results = await asyncio.gather(*(delete(p) for p in doomed), return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        if err is not None:
            raise err
        if errors:
            raise errors[0]

    def compute_status(self, ds: Obj, nodes: list[Obj], pods: list[Obj],
                       template_hash: str) -> dict[str, Any]:
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
                    updated += labels_of(pod).get("controller-revision-hash") == template_hash
            elif here:
                misscheduled += 1
        return {"currentNumberScheduled": current, "numberMisscheduled": misscheduled,
                "desiredNumberScheduled": desired, "numberReady": ready,
                "observedGeneration": (ds.get("metadata") or {}).get("generation"),
                "updatedNumberScheduled": updated, "numberAvailable": available,
                "numberUnavailable": desired - available}
