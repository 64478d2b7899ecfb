"""The ReplicaSet and ReplicationController controllers (cf. pkg/controller/replicaset/
replica_set.go; upstream's replication manager is the same code run over v1
ReplicationControllers, whose selector is a plain label map).

Contract, per ReplicaSet ``rs`` (one sync of key "ns/name"):
  * its pods are the active pods (not Succeeded/Failed, no deletionTimestamp) it controls,
    plus matching orphans it adopts; pods it controls that stop matching are released
    (``ControllerRefManager``). Pods being deleted are neither counted nor adopted.
  * unless ``rs`` is being deleted or creations/deletions it asked for are still unobserved
    (expectations), it creates ``spec.replicas - len(pods)`` pods from its template
    (``generateName: "<rs>-"``, controller reference ``controller: true,
    blockOwnerDeletion: true``), in slow-start batches and at most ``BURST_REPLICAS`` per
    sync, or deletes the surplus, preferring unscheduled, pending, not-ready and newest pods;
  * it writes ``status`` (replicas, fullyLabeledReplicas, readyReplicas,
    availableReplicas, observedGeneration, a ReplicaFailure condition when creating or
    deleting failed) when it changed.
Events: ``SuccessfulCreate`` "Created pod: x", ``SuccessfulDelete`` "Deleted pod: x",
``FailedCreate``/``FailedDelete``, under component ``replicaset-controller`` (or
``replication-controller``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from kubegc.api.clock import format_time
from kubegc.api.errors import StatusError, is_not_found
from kubegc.api.labels import LabelSelector, label_selector_from_dict, selector_from_set
from kubegc.api.meta import controller_ref_of, is_being_deleted, name_of, namespace_of
from kubegc.api.pod import (
    PODS,
    is_pod_active,
    is_pod_available,
    is_pod_ready,
    rank_by_colocation,
    sort_pods_for_deletion,
)
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
from kubegc.component import objects
from kubegc.component.base_controller import BaseController, tombstone_object
from kubegc.component.context import ControllerContext
from kubegc.component.deletions import (
    SURPLUS_REPLICAS,
    Deletion,
    DeletionSink,
    NullDeletionSink,
    pod_reference,
)
from kubegc.component.fields import Fields, NotUnderstood, invalid
from kubegc.controllers.controller_ref_manager import (
    PodControllerRefManager,
    fresh_controller_getter,
    labels_of,
    recheck_deletion_timestamp,
)
from kubegc.controllers.controller_utils import (
    CONTROLLER_UID_INDEX,
    NAMESPACE_TERMINATING_CAUSE,
    SLOW_START_INITIAL_BATCH_SIZE,
    PodControl,
    controller_uid_index_func,
    ensure_indexers,
    filter_by_owner,
    has_status_cause,
    matching,
    new_controller_ref,
    slow_start_batch,
    update_status_of,
)
from kubegc.controllers.expectations import UIDTrackingControllerExpectations

#: Most pods created or deleted in one sync (upstream ``BurstReplicas``).
BURST_REPLICAS = 500


@dataclass(frozen=True)
class ReplicaSetKind:
    """What differs between the ReplicaSet and the ReplicationController flavour."""

    gvr: GroupVersionResource
    api_version: str
    kind: str
    controller_name: str
    component: str
    map_selector: bool
    #: what the controller reads of one
    fields: Fields

    def selector(self, rs: Obj) -> LabelSelector:
        raw = (rs.get("spec") or {}).get("selector")
        return selector_from_set(raw) if self.map_selector else label_selector_from_dict(raw)


REPLICA_SET = ReplicaSetKind(GroupVersionResource("apps", "v1", "replicasets"), "apps/v1",
                             "ReplicaSet", "replicaset", "replicaset-controller", False,
                             objects.REPLICA_SET)
REPLICATION_CONTROLLER = ReplicaSetKind(
    GroupVersionResource("", "v1", "replicationcontrollers"), "v1", "ReplicationController",
    "replicationcontroller", "replication-controller", True, objects.REPLICATION_CONTROLLER)


def spec_replicas(obj: Obj) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def min_ready_seconds(obj: Obj) -> int:
    return int((obj.get("spec") or {}).get("minReadySeconds") or 0)


def pod_key(pod: Obj) -> str:
    return f"{namespace_of(pod)}/{name_of(pod)}"


class ReplicaSetController(BaseController):
    """Keeps ``spec.replicas`` pods running for every ReplicaSet (or RC)."""

    kind: ReplicaSetKind = REPLICA_SET
    name = REPLICA_SET.controller_name
    component = REPLICA_SET.component

    def __init__(self, ctx: ControllerContext[None], *,
                 deletions: DeletionSink | None = None) -> None:
        super().__init__(ctx)
        #: where each surplus pod it deleted is recorded (``kubegc why``)
        self.deletions = deletions if deletions is not None else NullDeletionSink()
        kind = self.kind
        self.rs_informer = self.informer_factory.for_resource(kind.gvr)
        self.pod_informer = self.informer_factory.for_resource(PODS)
        self.synced_informers = [self.rs_informer, self.pod_informer]
        self.primary_informer = self.rs_informer
        self.expectations = UIDTrackingControllerExpectations(self.clock)
        self.pod_control = PodControl(self.client, self.recorder)
        self.burst_replicas = BURST_REPLICAS

    def register_handlers(self) -> None:
        ensure_indexers(self.rs_informer, {NAMESPACE_INDEX: meta_namespace_index_func})
        ensure_indexers(self.pod_informer, {CONTROLLER_UID_INDEX: controller_uid_index_func})
        self.rs_informer.add_event_handler(FuncHandler(
            add=lambda rs, _initial: self.enqueue(rs), update=self.update_rs,
            delete=self.delete_rs))
        self.pod_informer.add_event_handler(FuncHandler(
            add=self.add_pod, update=self.update_pod, delete=self.delete_pod))

    # -- event handlers --------------------------------------------------------------------

    def update_rs(self, old: Obj, cur: Obj) -> None:
        if (old.get("metadata") or {}).get("uid") != (cur.get("metadata") or {}).get("uid"):
            self.delete_rs(DeletedFinalStateUnknown(meta_namespace_key(old), old))
        self.enqueue(cur)

    def delete_rs(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        key = meta_namespace_key(tombstone_object(obj))
        self.expectations.delete_expectations(key)
        self.queue.add(key)

    def resolve_controller_ref(self, namespace: str, ref: dict[str, Any]) -> Obj | None:
        if ref.get("kind") != self.kind.kind:
            return None
        rs = self.rs_informer.indexer.get_by_key(f"{namespace}/{ref.get('name')}")
        if rs is None or (rs.get("metadata") or {}).get("uid") != ref.get("uid"):
            return None
        return rs

    def get_pod_replica_sets(self, pod: Obj) -> list[Obj]:
        """ReplicaSets of the pod's namespace whose non-empty selector matches it."""
        return matching(self.rs_informer.indexer.by_index(NAMESPACE_INDEX, namespace_of(pod)),
                        pod, fields=self.kind.fields, selector=self.kind.selector)

    def add_pod(self, pod: Obj, _initial: bool) -> None:
        if is_being_deleted(pod):
            # A pod already being deleted must not count as an observed creation.
            self.delete_pod(pod)
            return
        ref = controller_ref_of(pod)
        if ref is not None:
            rs = self.resolve_controller_ref(namespace_of(pod), ref)
            if rs is not None:
                self.expectations.creation_observed(meta_namespace_key(rs))
                self.enqueue(rs)
            return
        for rs in self.get_pod_replica_sets(pod):
            self.enqueue(rs)

    def update_pod(self, old: Obj, cur: Obj) -> None:
        old_meta, cur_meta = old.get("metadata") or {}, cur.get("metadata") or {}
        if old_meta.get("resourceVersion") == cur_meta.get("resourceVersion"):
            return
        labels_changed = labels_of(old) != labels_of(cur)
        if is_being_deleted(cur):
            # Graceful deletion: act now, not when the kubelet finally removes the pod.
            self.delete_pod(cur)
            if labels_changed:
                self.delete_pod(old)
            return
        cur_ref, old_ref = controller_ref_of(cur), controller_ref_of(old)
        ref_changed = cur_ref != old_ref
        if ref_changed and old_ref is not None:
            rs = self.resolve_controller_ref(namespace_of(old), old_ref)
            if rs is not None:
                self.enqueue(rs)
        if cur_ref is not None:
            rs = self.resolve_controller_ref(namespace_of(cur), cur_ref)
            if rs is None:
                return
            self.enqueue(rs)
            if not is_pod_ready(old) and is_pod_ready(cur) and min_ready_seconds(rs) > 0:
                self.enqueue_after(rs, min_ready_seconds(rs) + 1.0)
            return
        if labels_changed or ref_changed:
            for rs in self.get_pod_replica_sets(cur):
                self.enqueue(rs)

    def delete_pod(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        pod = tombstone_object(obj)
        ref = controller_ref_of(pod)
        if ref is None:
            return
        rs = self.resolve_controller_ref(namespace_of(pod), ref)
        if rs is None:
            return
        rs_key = meta_namespace_key(rs)
        self.expectations.deletion_observed(rs_key, pod_key(pod))
        self.enqueue(rs)

    # -- sync ------------------------------------------------------------------------------

    async def sync(self, key: str) -> float | None:
        rs = self.rs_informer.indexer.get_by_key(key)
        if rs is None:
            self.expectations.delete_expectations(key)
            return None
        self.kind.fields.check(rs)
        rs_needs_sync = self.expectations.satisfied_expectations(key)
        try:
            selector = self.kind.selector(rs)
        except StatusError as err:  # a selector the API would not take: until it changes
            raise NotUnderstood([invalid("spec.selector", rs["spec"].get("selector"),
                                         err.message)]) from None
        candidates = [p for p in filter_by_owner(self.pod_informer, rs, include_orphans=True,
                                                 fields=objects.POD) if is_pod_active(p)]
        pods = await self.claim_pods(rs, selector, candidates)
        manage_err: Exception | None = None
        if rs_needs_sync and not is_being_deleted(rs):
            try:
                await self.manage_replicas(pods, rs, key)
            except Exception as err:
                manage_err = err
        status = self.calculate_status(rs, pods, manage_err)
        updated = await self.update_status(rs, status)
        requeue = None
        if manage_err is None and min_ready_seconds(updated) > 0:
            st = updated.get("status") or {}
            replicas = spec_replicas(updated)
            if st.get("readyReplicas", 0) == replicas and st.get("availableReplicas",
                                                                    0) != replicas:
                requeue = float(min_ready_seconds(updated))
        if manage_err is not None:
            raise manage_err
        return requeue

    async def claim_pods(self, rs: Obj, selector: LabelSelector, pods: list[Obj]) -> list[Obj]:
        can_adopt = recheck_deletion_timestamp(
            fresh_controller_getter(self.client, self.kind.gvr, rs, self.kind.kind))
        manager = PodControllerRefManager(
            self.client, rs, selector, controller_api_version=self.kind.api_version,
            controller_kind=self.kind.kind, can_adopt=can_adopt)
        return await manager.claim_pods(pods)

    async def manage_replicas(self, pods: list[Obj], rs: Obj, key: str) -> None:
        diff = len(pods) - spec_replicas(rs)
        if diff < 0:
            await self._create_pods(rs, key, min(-diff, self.burst_replicas))
        elif diff > 0:
            await self._delete_pods(rs, key, pods, min(diff, self.burst_replicas))

    async def _create_pods(self, rs: Obj, key: str, count: int) -> None:
        self.expectations.expect_creations(key, count)
        template = (rs.get("spec") or {}).get("template") or {}
        ref = new_controller_ref(rs, self.kind.api_version, self.kind.kind)

        async def create() -> None:
            try:
                await self.pod_control.create_pods(namespace_of(rs), template, rs, ref)
            except StatusError as err:
                if not has_status_cause(err, NAMESPACE_TERMINATING_CAUSE):
                    raise  # a terminating namespace fails every create: nothing to retry

        successes, err = await slow_start_batch(count, SLOW_START_INITIAL_BATCH_SIZE, create)
        skipped = count - successes
        if skipped > 0:  # pods never created will never be observed
            self.expectations.lower_expectations(key, add=skipped)
        if err is not None:
            raise err

    async def _delete_pods(self, rs: Obj, key: str, pods: list[Obj], count: int) -> None:
        ranks = rank_by_colocation(pods, pods)
        victims = sort_pods_for_deletion(pods, ranks, self.clock.now())[:count]
        self.expectations.expect_deletions(key, [pod_key(p) for p in victims])

        surplus = (f"{self.kind.kind} {namespace_of(rs)}/{name_of(rs)} had {len(pods)} active "
                   f"pods for spec.replicas {spec_replicas(rs)}")

        async def delete(pod: Obj) -> None:
            try:
                await self.pod_control.delete_pod(pod, rs)
            except StatusError as err:
                # The informer will never see this deletion.
                self.expectations.deletion_observed(key, pod_key(pod))
                if not is_not_found(err):
                    raise
                return
            self.deletions.record_deletion(Deletion(
                self.clock.now(), self.component, pod_reference(pod), SURPLUS_REPLICAS,
                surplus))

        results = await asyncio.gather(*(delete(p) for p in victims), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    # -- status ----------------------------------------------------------------------------

    def calculate_status(self, rs: Obj, pods: list[Obj], manage_err: Exception | None,
                         ) -> dict[str, Any]:
        template_labels = selector_from_set(
            (((rs.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels"))
        now = self.clock.now()
        fully_labeled = sum(1 for p in pods if template_labels.matches(labels_of(p)))
        ready = [p for p in pods if is_pod_ready(p)]
        available = sum(1 for p in ready if is_pod_available(p, min_ready_seconds(rs), now))
        conditions = [dict(c) for c in (rs.get("status") or {}).get("conditions") or []]
        failure = next((c for c in conditions if c.get("type") == "ReplicaFailure"), None)
        if manage_err is not None and failure is None:
            diff = len(pods) - spec_replicas(rs)
            reason = "FailedCreate" if diff < 0 else "FailedDelete" if diff > 0 else ""
            conditions.append({"type": "ReplicaFailure", "status": "True",
                               "lastTransitionTime": format_time(now), "reason": reason,
                               "message": str(manage_err)})
        elif manage_err is None and failure is not None:
            conditions.remove(failure)
        return {"replicas": len(pods), "fullyLabeledReplicas": fully_labeled,
                "readyReplicas": len(ready), "availableReplicas": available,
                "observedGeneration": (rs.get("metadata") or {}).get("generation"),
                "conditions": conditions}

    async def update_status(self, rs: Obj, status: dict[str, Any]) -> Obj:
        """Write ``status`` if it differs from the stored one; the object as now stored."""
        gvr = self.kind.gvr
        return await update_status_of(self.client, gvr, rs, status,
                                      keep=zero_status_fields(gvr.group, gvr.resource))

