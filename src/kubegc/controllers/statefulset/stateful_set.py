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
  * revisions are ControllerRevisions owned by the set (``stateful_set_control``): a pod
    is labelled ``controller-revision-hash`` with its revision's name; pods below the
    ``partition`` are created from the current revision's template, the others from the
    update revision's; history beyond ``revisionHistoryLimit`` is deleted;
  * ``RollingUpdate``: once all pods are Running and Ready, the highest-ordinal pod (at or
    above ``partition``) with an old revision is deleted to be re-created;
  * status: replicas, readyReplicas, availableReplicas, currentReplicas, updatedReplicas,
    currentRevision, updateRevision, observedGeneration, collisionCount.
Each DELETE it makes (a pod beyond the replicas, a failed pod, an outdated pod, an old
revision) is handed to its ``DeletionSink`` with the rule that made it.
kubegc: a set being deleted writes no revisions (upstream's may write one the garbage
collector then deletes).
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
from kubegc.component.deletions import Deletion, DeletionSink, NullDeletionSink, pod_reference
from kubegc.controllers.controller_ref_manager import (
    PodControllerRefManager,
    fresh_controller_getter,
    labels_of,
    recheck_deletion_timestamp,
)
from kubegc.controllers.controller_utils import (
    CONTROLLER_UID_INDEX,
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
from kubegc.controllers.history import (
    CONTROLLER_REVISIONS,
    ControllerHistory,
    sort_controller_revisions,
)
from kubegc.controllers.statefulset.stateful_set_control import (
    REVISION_LABEL,
    Revisions,
    get_stateful_set_revisions,
    truncate_history,
    versioned_set,
)

STATEFULSETS = GroupVersionResource("apps", "v1", "statefulsets")
PVCS = GroupVersionResource("", "v1", "persistentvolumeclaims")
#: status fields written even at zero: the API type's, and ``collisionCount``, which
#: upstream's ``updateStatefulSet`` always sets
STATUS_KEPT = (*zero_status_fields("apps", "statefulsets"), "collisionCount")
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


def parent_and_ordinal(pod: Obj) -> tuple[str, int]:
    match = _ORDINAL.match(name_of(pod))
    return (match.group(1), int(match.group(2))) if match else ("", -1)


def running_and_ready(pod: Obj) -> bool:
    return pod_phase(pod) == "Running" and is_pod_ready(pod)


class StatefulSetController(BaseController):
    """Keeps each StatefulSet's ordinal pods (and their claims)."""

    name = "statefulset"
    component = "statefulset-controller"

    def __init__(self, ctx: ControllerContext[None], *,
                 deletions: DeletionSink | None = None) -> None:
        super().__init__(ctx)
        self.set_informer = self.informer_factory.for_resource(STATEFULSETS)
        self.pod_informer = self.informer_factory.for_resource(PODS)
        self.revision_informer = self.informer_factory.for_resource(CONTROLLER_REVISIONS)
        self.synced_informers = [self.set_informer, self.pod_informer, self.revision_informer]
        self.primary_informer = self.set_informer
        self.history = ControllerHistory(self.client, self.revision_informer)
        self.deletions = deletions if deletions is not None else NullDeletionSink()

    def register_handlers(self) -> None:
        ensure_indexers(self.set_informer, {NAMESPACE_INDEX: meta_namespace_index_func})
        ensure_indexers(self.revision_informer, {NAMESPACE_INDEX: meta_namespace_index_func})
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
        if is_being_deleted(sts):
            status = sts.get("status") or {}
            revs = Revisions({"metadata": {"name": status.get("currentRevision") or ""}},
                             {"metadata": {"name": status.get("updateRevision") or ""}},
                             int(status.get("collisionCount") or 0))
        else:
            revisions = await self.adopt_orphan_revisions(
                sts, self.history.list_controller_revisions(sts, selector))
            revs = await get_stateful_set_revisions(self.history, sts, revisions)
            await self.update_stateful_set(sts, pods, revs)
            await truncate_history(self.history, self.deletions, sts, pods, revisions, revs,
                                   deleter=self.component, clock=self.clock)
        await update_status_of(self.client, STATEFULSETS, sts,
                               self.compute_status(sts, pods, revs), keep=STATUS_KEPT)
        return None

    async def adopt_orphan_revisions(self, sts: Obj, revisions: list[Obj]) -> list[Obj]:
        """``adoptOrphanRevisions``: claim the matching revisions no one controls (a set
        deleted with ``--cascade=orphan`` left them), once the set is known not to be
        going; the revisions, sorted (``SortControllerRevisions``)."""
        out = []
        for revision in sort_controller_revisions(revisions):
            if controller_ref_of(revision) is None:
                await recheck_deletion_timestamp(fresh_controller_getter(
                    self.client, STATEFULSETS, sts, "StatefulSet"))()
                revision = await self.history.adopt_controller_revision(
                    sts, revision, api_version="apps/v1", kind="StatefulSet")
            out.append(revision)
        return out

    async def update_stateful_set(self, sts: Obj, pods: list[Obj], revs: Revisions) -> None:
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
                await self.create_pod(sts, ordinal, revs)
                healthy = False
            elif pod_phase(pod) in ("Failed", "Succeeded") and not is_being_deleted(pod):
                await self.delete_pod(sts, pod, "PodFailed",
                                      f"pod {name_of(pod)} of StatefulSet {name_of(sts)} "
                                      f"had phase {pod_phase(pod)}: deleted to be created "
                                      "again")
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
            await self.delete_pod(sts, pod, "ScaleDown",
                                  f"the ordinal of pod {name_of(pod)} was outside "
                                  f"[{wanted.start}, {wanted.stop}) (spec.replicas "
                                  f"{len(wanted)}) of StatefulSet {name_of(sts)}: the highest "
                                  "ordinal goes first")
            if monotonic:
                return
        if healthy and not condemned:
            await self.roll(sts, by_ordinal, wanted, name_of(revs.update))

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
                await self.delete_pod(sts, pod, "RollingUpdate",
                                      f"pod {name_of(pod)} had revision "
                                      f"{labels_of(pod).get(REVISION_LABEL)}, not the update "
                                      f"revision {revision} of StatefulSet {name_of(sts)} "
                                      f"(RollingUpdate, partition {partition})")
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

    async def create_pod(self, sts: Obj, ordinal: int, revs: Revisions) -> None:
        versioned, revision = versioned_set(sts, ordinal, revs)
        pod = self.new_pod(versioned, ordinal, revision)
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

    async def delete_pod(self, sts: Obj, pod: Obj, reason: str, message: str) -> None:
        """Delete ``pod`` as seen: its uid and resourceVersion are preconditions, since a
        pod of the same name comes back after each deletion and the decision depended on
        the pod's state (failed, condemned, outdated). A stale view fails with 404 or 409,
        without an event: the sync runs again on what the informer brings. A DELETE that
        succeeded is a Deletion for ``reason`` (the rule), saying ``message``."""
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
        self.deletions.record_deletion(Deletion(self.clock.now(), self.component,
                                                pod_reference(pod), reason, message))
        self.recorder.event(sts, EVENT_TYPE_NORMAL, "SuccessfulDelete",
                            f"delete Pod {name} in StatefulSet {name_of(sts)} successful")

    def compute_status(self, sts: Obj, pods: list[Obj], revs: Revisions) -> dict[str, Any]:
        current_revision, revision = name_of(revs.current), name_of(revs.update)
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
            "collisionCount": revs.collision_count,
        }
        want = int((sts.get("spec") or {}).get("replicas", 1))
        if status["updatedReplicas"] == want and status["readyReplicas"] == want:
            status["currentRevision"] = revision
            status["currentReplicas"] = status["updatedReplicas"]
        return omit_empty(status, keep=STATUS_KEPT)
