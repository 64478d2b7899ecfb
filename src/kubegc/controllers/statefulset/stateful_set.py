"""The StatefulSet controller (cf. pkg/controller/statefulset: stateful_set.go,
stateful_set_control.go, stateful_pod_control.go), for creation, scaling and ownership.

Contract, per StatefulSet ``set`` with ``replicas`` n:
  * its pods are named ``<set>-0`` … ``<set>-(n-1)`` (offset by ``spec.ordinals.start``),
    labelled with the template's labels plus ``statefulset.kubernetes.io/pod-name``,
    ``apps.kubernetes.io/pod-index`` and ``controller-revision-hash``, with
    ``hostname``/``subdomain``, and a controller reference; orphans that match are
    adopted, pods that stop matching are released;
  * ``volumeClaimTemplates`` give each pod PVCs ``<claim>-<set>-<ordinal>``, created
    before the pod; with ``persistentVolumeClaimRetentionPolicy.whenDeleted: Delete`` the
    PVC is owned by the set (so the garbage collector deletes it with the set);
  * ``OrderedReady`` (default): pods are created one at a time in ordinal order, each
    only once its predecessors are Running and Ready, and removed one at a time from the
    highest ordinal; ``Parallel`` creates and deletes without waiting; failed pods are
    deleted and re-created;
  * ``RollingUpdate``: once all pods are Running and Ready, the highest-ordinal pod (at or
    above ``partition``) with an old revision is deleted to be re-created;
  * status: replicas, readyReplicas, availableReplicas, currentReplicas, updatedReplicas,
    currentRevision, updateRevision, observedGeneration, collisionCount.
Not modelled: ControllerRevision objects (the revision is ``<set>-<template hash>``).
Events: ``SuccessfulCreate`` "create Pod web-0 in StatefulSet web successful",
``SuccessfulDelete`` "delete Pod web-1 in StatefulSet web successful", and the claim and
failure variants; component ``statefulset-controller``.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from kubegc.api.errors import is_already_exists, is_conflict, is_not_found
from kubegc.api.meta import controller_ref_of, is_being_deleted, name_of, namespace_of, uid_of
from kubegc.api.pod import PODS, is_pod_available, is_pod_ready, pod_phase
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.api.zero_status import zero_status_fields
from kubegc.client.cache import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    FuncHandler,
    meta_namespace_index_func,
)
from kubegc.client.events import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING
from kubegc.client.interface import DeleteOptions
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
    compute_hash,
    controller_uid_index_func,
    ensure_indexers,
    filter_by_owner,
    get_pod_from_template,
    matching,
    new_controller_ref,
    omit_empty,
    selector_of,
    update_status_of,
)

STATEFULSETS = GroupVersionResource("apps", "v1", "statefulsets")
PVCS = GroupVersionResource("", "v1", "persistentvolumeclaims")
#: status fields written even at zero: the API type's, and ``collisionCount``, which
#: upstream's ``updateStatefulSet`` always sets
STATUS_KEPT = (*zero_status_fields("apps", "statefulsets"), "collisionCount")
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


def parent_and_ordinal(pod: Obj) -> tuple[str, int]:
    match = _ORDINAL.match(name_of(pod))
    return (match.group(1), int(match.group(2))) if match else ("", -1)


def running_and_ready(pod: Obj) -> bool:
    return pod_phase(pod) == "Running" and is_pod_ready(pod)


def update_revision(sts: Obj) -> str:
    template = (sts.get("spec") or {}).get("template") or {}
    # 0 hashes as unset: the status gets collisionCount 0 with its first write, which must
    # not change the revision (nor that of sets stored before kubegc wrote it)
    collisions = (sts.get("status") or {}).get("collisionCount") or None
    return f"{name_of(sts)}-{compute_hash(template, collisions)}"


class StatefulSetController(BaseController):
    """Keeps each StatefulSet's ordinal pods (and their claims)."""

    name = "statefulset"
    component = "statefulset-controller"

    def __init__(self, ctx: ControllerContext[None]) -> None:
        super().__init__(ctx)
        self.set_informer = self.informer_factory.for_resource(STATEFULSETS)
        self.pod_informer = self.informer_factory.for_resource(PODS)
        self.synced_informers = [self.set_informer, self.pod_informer]
        self.primary_informer = self.set_informer

    def register_handlers(self) -> None:
        ensure_indexers(self.set_informer, {NAMESPACE_INDEX: meta_namespace_index_func})
        ensure_indexers(self.pod_informer, {CONTROLLER_UID_INDEX: controller_uid_index_func})
        self.set_informer.add_event_handler(FuncHandler(
            add=lambda s, _initial: self.enqueue(s), update=lambda _old, cur: self.enqueue(cur),
            delete=self.enqueue))
        self.pod_informer.add_event_handler(FuncHandler(
            add=lambda p, _initial: self.pod_changed(p), update=self.update_pod,
            delete=self.pod_changed))

    def resolve_controller_ref(self, namespace: str, ref: dict[str, Any]) -> Obj | None:
        if ref.get("kind") != "StatefulSet":
            return None
        sts = self.set_informer.indexer.get_by_key(f"{namespace}/{ref.get('name')}")
        return sts if sts is not None and uid_of(sts) == ref.get("uid") else None

    def pod_changed(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        pod = tombstone_object(obj)
        ref = controller_ref_of(pod)
        if ref is not None:
            sts = self.resolve_controller_ref(namespace_of(pod), ref)
            if sts is not None:
                self.enqueue(sts)
            return
        if isinstance(obj, DeletedFinalStateUnknown) or is_being_deleted(pod):
            return
        for sts in matching(self.set_informer.indexer.by_index(NAMESPACE_INDEX,
                                                               namespace_of(pod)),
                            pod, fields=objects.STATEFUL_SET):
            self.enqueue(sts)

    def update_pod(self, old: Obj, cur: Obj) -> None:
        if controller_ref_of(old) != controller_ref_of(cur):
            self.pod_changed(old)
        self.pod_changed(cur)

    # -- sync ------------------------------------------------------------------------------

    async def sync(self, key: str) -> float | None:
        cached = self.set_informer.indexer.get_by_key(key)
        if cached is None:
            return None
        objects.STATEFUL_SET.check(cached)
        sts = copy.deepcopy(cached)
        selector = selector_of(sts)
        candidates = filter_by_owner(self.pod_informer, sts, include_orphans=True,
                                     fields=objects.POD)
        manager = PodControllerRefManager(
            self.client, sts, selector, controller_api_version="apps/v1",
            controller_kind="StatefulSet", can_adopt=recheck_deletion_timestamp(
                fresh_controller_getter(self.client, STATEFULSETS, sts, "StatefulSet")))
        pods = await manager.claim_pods(
            candidates, lambda p: parent_and_ordinal(p)[0] == name_of(sts))
        revision = update_revision(sts)
        if not is_being_deleted(sts):
            await self.update_stateful_set(sts, pods, revision)
        await update_status_of(self.client, STATEFULSETS, sts,
                               self.compute_status(sts, pods, revision), keep=STATUS_KEPT)
        return None

    async def update_stateful_set(self, sts: Obj, pods: list[Obj], revision: str) -> None:
        spec = sts.get("spec") or {}
        replicas = int(spec.get("replicas", 1))
        start = int((spec.get("ordinals") or {}).get("start") or 0)
        monotonic = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        by_ordinal = {parent_and_ordinal(p)[1]: p for p in pods}
        wanted = range(start, start + replicas)
        condemned = sorted((p for o, p in by_ordinal.items() if o not in wanted),
                           key=lambda p: -parent_and_ordinal(p)[1])
        healthy = True
        for ordinal in wanted:
            pod = by_ordinal.get(ordinal)
            if pod is None:
                await self.create_pod(sts, ordinal, revision)
                healthy = False
            elif pod_phase(pod) in ("Failed", "Succeeded") and not is_being_deleted(pod):
                await self.delete_pod(sts, pod)
                healthy = False
            elif is_being_deleted(pod) or not running_and_ready(pod):
                healthy = False
            if monotonic and not healthy:
                return
        for pod in condemned:
            if is_being_deleted(pod):
                if monotonic:
                    return
                continue
            if monotonic and not healthy:
                return
            await self.delete_pod(sts, pod)
            if monotonic:
                return
        if healthy and not condemned:
            await self.roll(sts, by_ordinal, wanted, revision)

    async def roll(self, sts: Obj, by_ordinal: dict[int, Obj], wanted: range,
                   revision: str) -> None:
        """RollingUpdate: replace the highest outdated pod at or above the partition."""
        strategy = (sts.get("spec") or {}).get("updateStrategy") or {}
        if strategy.get("type", "RollingUpdate") != "RollingUpdate":
            return
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        for ordinal in reversed(wanted):
            pod = by_ordinal.get(ordinal)
            if ordinal < wanted.start + partition or pod is None:
                break
            if labels_of(pod).get(REVISION_LABEL) != revision:
                await self.delete_pod(sts, pod)
                return

    def new_pod(self, sts: Obj, ordinal: int, revision: str) -> Obj:
        spec = sts.get("spec") or {}
        pod = get_pod_from_template(spec.get("template") or {}, sts,
                                    new_controller_ref(sts, "apps/v1", "StatefulSet"))
        name = f"{name_of(sts)}-{ordinal}"
        meta = pod["metadata"]
        meta.pop("generateName", None)
        meta["name"] = name
        meta["labels"] = {**(meta.get("labels") or {}), POD_NAME_LABEL: name,
                          POD_INDEX_LABEL: str(ordinal), REVISION_LABEL: revision}
        pod["spec"]["hostname"] = name
        if spec.get("serviceName"):
            pod["spec"]["subdomain"] = spec["serviceName"]
        volumes = [v for v in pod["spec"].get("volumes") or []
                   if v.get("name") not in {name_of(t) for t in self.claim_templates(sts)}]
        for template in self.claim_templates(sts):
            volumes.append({"name": name_of(template), "persistentVolumeClaim": {
                "claimName": f"{name_of(template)}-{name}"}})
        if volumes:
            pod["spec"]["volumes"] = volumes
        return pod

    @staticmethod
    def claim_templates(sts: Obj) -> list[Obj]:
        return list((sts.get("spec") or {}).get("volumeClaimTemplates") or [])

    async def create_claims(self, sts: Obj, pod_name: str) -> None:
        spec = sts.get("spec") or {}
        policy = spec.get("persistentVolumeClaimRetentionPolicy") or {}
        match_labels = (spec.get("selector") or {}).get("matchLabels") or {}
        for template in self.claim_templates(sts):
            claim = f"{name_of(template)}-{pod_name}"
            meta: dict[str, Any] = {"name": claim, "labels": {
                **((template.get("metadata") or {}).get("labels") or {}), **match_labels}}
            if policy.get("whenDeleted") == "Delete":
                meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "StatefulSet",
                                            "name": name_of(sts), "uid": uid_of(sts)}]
            body = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
                    "spec": copy.deepcopy(template.get("spec") or {})}
            try:
                await self.client.create(PVCS, body, namespace=namespace_of(sts))
            except Exception as err:
                if is_already_exists(err):
                    continue
                self.recorder.event(sts, EVENT_TYPE_WARNING, "FailedCreate",
                                    f"create Claim {claim} for Pod {pod_name} in StatefulSet "
                                    f"{name_of(sts)} failed error: {err}")
                raise
            self.recorder.event(sts, EVENT_TYPE_NORMAL, "SuccessfulCreate",
                                f"create Claim {claim} Pod {pod_name} in StatefulSet "
                                f"{name_of(sts)} success")

    async def create_pod(self, sts: Obj, ordinal: int, revision: str) -> None:
        pod = self.new_pod(sts, ordinal, revision)
        name = name_of(pod)
        await self.create_claims(sts, name)
        try:
            await self.client.create(PODS, pod, namespace=namespace_of(sts))
        except Exception as err:
            if is_already_exists(err):
                return  # a stale cache: the pod is there
            self.recorder.event(sts, EVENT_TYPE_WARNING, "FailedCreate",
                                f"create Pod {name} in StatefulSet {name_of(sts)} failed "
                                f"error: {err}")
            raise
        self.recorder.event(sts, EVENT_TYPE_NORMAL, "SuccessfulCreate",
                            f"create Pod {name} in StatefulSet {name_of(sts)} successful")

    async def delete_pod(self, sts: Obj, pod: Obj) -> None:
        """Delete ``pod`` as seen: its uid and resourceVersion are preconditions, since a
        pod of the same name comes back after each deletion and the decision depended on
        the pod's state (failed, condemned, outdated). A stale view fails with 404 or 409,
        without an event: the sync runs again on what the informer brings."""
        name = name_of(pod)
        meta = pod.get("metadata") or {}
        options = DeleteOptions(preconditions_uid=meta.get("uid") or None,
                                preconditions_resource_version=meta.get("resourceVersion")
                                or None)
        try:
            await self.client.delete(PODS, name, namespace=namespace_of(pod), options=options)
        except Exception as err:
            if is_not_found(err) or is_conflict(err):
                raise
            self.recorder.event(sts, EVENT_TYPE_WARNING, "FailedDelete",
                                f"delete Pod {name} in StatefulSet {name_of(sts)} failed "
                                f"error: {err}")
            raise
        self.recorder.event(sts, EVENT_TYPE_NORMAL, "SuccessfulDelete",
                            f"delete Pod {name} in StatefulSet {name_of(sts)} successful")

    def compute_status(self, sts: Obj, pods: list[Obj], revision: str) -> dict[str, Any]:
        old = sts.get("status") or {}
        current_revision = old.get("currentRevision") or revision
        now = self.clock.now()
        min_ready = int((sts.get("spec") or {}).get("minReadySeconds") or 0)
        created = [p for p in pods if pod_phase(p)]
        live = [p for p in created if not is_being_deleted(p)]
        ready = [p for p in pods if running_and_ready(p)]
        status: dict[str, Any] = {
            "observedGeneration": (sts.get("metadata") or {}).get("generation"),
            "replicas": len(created), "readyReplicas": len(ready),
            "availableReplicas": sum(1 for p in ready if is_pod_available(p, min_ready, now)),
            "currentReplicas": sum(1 for p in live
                                   if labels_of(p).get(REVISION_LABEL) == current_revision),
            "updatedReplicas": sum(1 for p in live
                                   if labels_of(p).get(REVISION_LABEL) == revision),
            "currentRevision": current_revision, "updateRevision": revision,
            "collisionCount": int(old.get("collisionCount") or 0),
        }
        want = int((sts.get("spec") or {}).get("replicas", 1))
        if status["updatedReplicas"] == want and status["readyReplicas"] == want:
            status["currentRevision"] = revision
            status["currentReplicas"] = status["updatedReplicas"]
        return omit_empty(status, keep=STATUS_KEPT)
