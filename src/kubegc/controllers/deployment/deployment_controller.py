"""The Deployment controller (cf. pkg/controller/deployment/deployment_controller.go).

Contract, per Deployment ``d``:
  * its ReplicaSets are those it controls plus matching orphans it adopts (so the
    ReplicaSet left behind by ``kubectl delete deploy --cascade=orphan`` is adopted by a
    new Deployment with the same selector); ones that stop matching are released;
  * the "new" ReplicaSet is the one whose template equals ``d``'s ignoring the
    ``pod-template-hash`` label; when none exists one is created, named
    ``<d>-<pod-template-hash>`` (``compute_hash`` of the template and
    ``status.collisionCount``), with the hash added to its labels, selector and template,
    a controller reference and the ``deployment.kubernetes.io/{revision,desired-replicas,
    max-replicas}`` annotations; ``d`` gets the revision annotation too;
  * being deleted: only status; paused or a change of ``spec.replicas``: scale the
    ReplicaSets (proportionally during a rollout); otherwise roll out with the strategy
    (RollingUpdate with maxSurge/maxUnavailable, or Recreate), and delete old empty
    ReplicaSets beyond ``revisionHistoryLimit`` once complete, each DELETE handed to its
    ``DeletionSink`` (``RevisionHistoryLimit``);
  * status: replicas, updatedReplicas, readyReplicas, availableReplicas,
    unavailableReplicas, observedGeneration, conditions Available/Progressing (and
    ReplicaFailure copied from the ReplicaSets).
Events: ``ScalingReplicaSet`` "Scaled up replica set web-xyz from 0 to 2", "Scaled down
…", ``SelectingAll``, ``ReplicaSetCreateError``; component ``deployment-controller``.
"""

from __future__ import annotations

import copy
from typing import Any

import kubegc.controllers.deployment.sync as ds
from kubegc.api.meta import controller_ref_of, is_being_deleted, namespace_of, uid_of
from kubegc.api.pod import PODS
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    FuncHandler,
    meta_namespace_index_func,
)
from kubegc.client.events import EVENT_TYPE_WARNING
from kubegc.component import objects
from kubegc.component.base_controller import BaseController, tombstone_object
from kubegc.component.context import ControllerContext
from kubegc.component.deletions import DeletionSink, NullDeletionSink
from kubegc.controllers.controller_ref_manager import (
    REPLICASETS,
    ReplicaSetControllerRefManager,
    fresh_controller_getter,
    labels_of,
    recheck_deletion_timestamp,
)
from kubegc.controllers.controller_utils import (
    CONTROLLER_UID_INDEX,
    controller_uid_index_func,
    ensure_indexers,
    filter_by_owner,
    matching,
    omit_empty,
    selector_of,
)
from kubegc.controllers.deployment.rolling import rollout_recreate, rollout_rolling
from kubegc.controllers.deployment.util import generation, observed_generation, strategy_type

DEPLOYMENTS = GroupVersionResource("apps", "v1", "deployments")


class DeploymentController(BaseController):
    """Rolls Deployments out through ReplicaSets."""

    name = "deployment"
    component = "deployment-controller"

    def __init__(self, ctx: ControllerContext[None], *,
                 deletions: DeletionSink | None = None) -> None:
        super().__init__(ctx)
        self.deletions = deletions if deletions is not None else NullDeletionSink()
        self.gvr = DEPLOYMENTS
        self.d_informer = self.informer_factory.for_resource(DEPLOYMENTS)
        self.rs_informer = self.informer_factory.for_resource(REPLICASETS)
        self.pod_informer = self.informer_factory.for_resource(PODS)
        self.synced_informers = [self.d_informer, self.rs_informer, self.pod_informer]
        self.primary_informer = self.d_informer

    def register_handlers(self) -> None:
        ensure_indexers(self.d_informer, {NAMESPACE_INDEX: meta_namespace_index_func})
        ensure_indexers(self.rs_informer, {NAMESPACE_INDEX: meta_namespace_index_func,
                                           CONTROLLER_UID_INDEX: controller_uid_index_func})
        ensure_indexers(self.pod_informer, {CONTROLLER_UID_INDEX: controller_uid_index_func})
        self.d_informer.add_event_handler(FuncHandler(
            add=lambda d, _initial: self.enqueue(d), update=lambda _old, cur: self.enqueue(cur),
            delete=self.enqueue))
        self.rs_informer.add_event_handler(FuncHandler(
            add=self.add_replica_set, update=self.update_replica_set,
            delete=self.delete_replica_set))
        self.pod_informer.add_event_handler(FuncHandler(delete=self.delete_pod))

    # -- event handlers ----------------------------------------------------------------------

    def resolve_controller_ref(self, namespace: str, ref: dict[str, Any]) -> Obj | None:
        if ref.get("kind") != "Deployment":
            return None
        d = self.d_informer.indexer.get_by_key(f"{namespace}/{ref.get('name')}")
        if d is None or uid_of(d) != ref.get("uid"):
            return None
        return d

    def get_deployments_for_replica_set(self, rs: Obj) -> list[Obj]:
        return matching(self.d_informer.indexer.by_index(NAMESPACE_INDEX, namespace_of(rs)),
                        rs, fields=objects.DEPLOYMENT)

    def add_replica_set(self, rs: Obj, _initial: bool) -> None:
        if is_being_deleted(rs):
            self.delete_replica_set(rs)
            return
        ref = controller_ref_of(rs)
        if ref is not None:
            d = self.resolve_controller_ref(namespace_of(rs), ref)
            if d is not None:
                self.enqueue(d)
            return
        for d in self.get_deployments_for_replica_set(rs):
            self.enqueue(d)

    def update_replica_set(self, old: Obj, cur: Obj) -> None:
        if (old.get("metadata") or {}).get("resourceVersion") == (
                (cur.get("metadata") or {}).get("resourceVersion")):
            return
        cur_ref, old_ref = controller_ref_of(cur), controller_ref_of(old)
        ref_changed = cur_ref != old_ref
        if ref_changed and old_ref is not None:
            d = self.resolve_controller_ref(namespace_of(old), old_ref)
            if d is not None:
                self.enqueue(d)
        if cur_ref is not None:
            d = self.resolve_controller_ref(namespace_of(cur), cur_ref)
            if d is not None:
                self.enqueue(d)
            return
        if ref_changed or labels_of(old) != labels_of(cur):
            for d in self.get_deployments_for_replica_set(cur):
                self.enqueue(d)

    def delete_replica_set(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        rs = tombstone_object(obj)
        ref = controller_ref_of(rs)
        if ref is None:
            return
        d = self.resolve_controller_ref(namespace_of(rs), ref)
        if d is not None:
            self.enqueue(d)

    def delete_pod(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        """A Recreate rollout waits for the old pods to be gone: look again."""
        pod = tombstone_object(obj)
        ref = controller_ref_of(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return
        rs = self.rs_informer.indexer.get_by_key(f"{namespace_of(pod)}/{ref.get('name')}")
        rs_ref = controller_ref_of(rs) if rs is not None else None
        d = self.resolve_controller_ref(namespace_of(pod), rs_ref) if rs_ref else None
        if d is not None and strategy_type(d) == "Recreate":
            self.enqueue(d)

    # -- sync --------------------------------------------------------------------------------

    async def sync(self, key: str) -> float | None:
        cached = self.d_informer.indexer.get_by_key(key)
        if cached is None:
            return None
        objects.DEPLOYMENT.check(cached)
        d = copy.deepcopy(cached)
        selector = (d.get("spec") or {}).get("selector")
        if selector == {}:
            self.recorder.event(d, EVENT_TYPE_WARNING, "SelectingAll",
                                "This deployment is selecting all pods. A non-empty selector "
                                "is required.")
            status = dict(d.get("status") or {})
            if observed_generation(status) < generation(d):
                status["observedGeneration"] = generation(d)
                await ds.write_status(self, d, omit_empty(status))
            return None
        rs_list = await self.get_replica_sets_for_deployment(d)
        if is_being_deleted(d):
            await ds.sync_status_only(self, d, rs_list)
            return None
        await ds.check_paused_conditions(self, d)
        if (d.get("spec") or {}).get("paused"):
            await ds.sync(self, d, rs_list)
            return None
        if await ds.is_scaling_event(self, d, rs_list):
            await ds.sync(self, d, rs_list)
            return None
        kind = strategy_type(d)
        if kind == "Recreate":
            return await rollout_recreate(self, d, rs_list, self.get_pod_map(rs_list))
        if kind == "RollingUpdate":
            return await rollout_rolling(self, d, rs_list)
        raise ValueError(f"unexpected deployment strategy type: {kind}")

    async def get_replica_sets_for_deployment(self, d: Obj) -> list[Obj]:
        """Owned ReplicaSets plus adopted orphans, releasing the ones that stopped matching."""
        selector = selector_of(d)
        candidates = filter_by_owner(self.rs_informer, d, include_orphans=True,
                                     fields=objects.REPLICA_SET)
        can_adopt = recheck_deletion_timestamp(
            fresh_controller_getter(self.client, DEPLOYMENTS, d, "Deployment"))
        manager = ReplicaSetControllerRefManager(
            self.client, d, selector, controller_api_version="apps/v1",
            controller_kind="Deployment", can_adopt=can_adopt)
        return await manager.claim_replica_sets(candidates)

    def get_pod_map(self, rs_list: list[Obj]) -> dict[str, list[Obj]]:
        """Pods of each ReplicaSet by its UID (for Recreate's "old pods running" check)."""
        return {uid_of(rs): [p for p in self.pod_informer.indexer.by_index(
                    CONTROLLER_UID_INDEX, uid_of(rs)) if objects.POD.understood(p)]
                for rs in rs_list}
