"""``Controller`` of pkg/controller/volume/pvcprotection/pvc_protection_controller.go.

A claim is queued when it is added or updated and needs the finalizer or is a deletion
candidate (``pvcAddedUpdated``), and for each claim a pod names when that pod can release
it: deleted, terminated, or not scheduled (``enqueuePVCs``; an update that replaced a pod by
a namesake queues the old one's claims too). ``sync`` (``processPVC``): a claim being
deleted with the finalizer keeps it while a pod uses it (``isBeingUsed``: the informer's
pods first, then a live LIST of the namespace's pods, as upstream, so a pod not yet in the
cache still holds it); otherwise the finalizer is removed with an update of the claim as
read (its resourceVersion: a claim changed since is judged again). A claim not being
deleted without the finalizer gets it (a claim created before the admission plugin ran).

Upstream batches the queued claims by namespace so that one live LIST serves them all
(``pvcProcessingStore``, ``LazyLivePodList``): a namespace deleted with thousands of claims
would otherwise LIST its pods once per claim. kubegc keeps each namespace's live list while
claims keep coming (``live_pods``), and lists afresh once the queue has drained. Either way a
pod that neither the informer nor that list has seen yet does not hold the claim; the
scheduler and the kubelet do not start a pod whose claim is being deleted. It records no
events, as upstream.
"""

from __future__ import annotations

import logging

from kubegc.api.meta import finalizers_of, name_of, namespace_of, uid_of
from kubegc.api.pod import PODS
from kubegc.api.types import Obj
from kubegc.api.volumes import (
    PVC_PROTECTION_FINALIZER,
    PVCS,
    claim_names,
    is_pod_terminated,
    pod_volumes,
    volume_claim_name,
    volume_is_for_pod,
)
from kubegc.client.cache import DeletedFinalStateUnknown, FuncHandler
from kubegc.component.base_controller import BaseController, tombstone_object
from kubegc.component.context import ControllerContext
from kubegc.component.objects import PERSISTENT_VOLUME_CLAIM
from kubegc.controllers.controller_utils import ensure_indexers
from kubegc.controllers.volume.common import POD_PVC_INDEX, pod_pvc_index_func
from kubegc.controllers.volume.protectionutil import (
    is_deletion_candidate,
    need_to_add_finalizer,
)

log = logging.getLogger(__name__)


def pod_is_shut_down(pod: Obj) -> bool:
    """``podIsShutDown``: being deleted with a zero grace period — the kubelet is done with
    it, or it was force-deleted; it no longer holds its ephemeral claims (which breaks a
    cycle of a pod finalizer waiting for the claim)."""
    meta = pod.get("metadata") or {}
    return bool(meta.get("deletionTimestamp")) and meta.get("deletionGracePeriodSeconds") == 0


def pod_uses_pvc(pod: Obj, pvc: Obj) -> bool:
    """``podUsesPVC``: only a scheduled pod uses a claim (the kubelet sees pods once
    scheduled, and does not start one whose claim is being deleted); it uses a claim its
    ``persistentVolumeClaim`` volume names, or the claim of one of its ephemeral volumes
    made for it, unless it is shut down."""
    spec = pod.get("spec")
    if namespace_of(pod) != namespace_of(pvc) or not isinstance(spec, dict) or not spec.get(
            "nodeName"):
        return False
    name = name_of(pvc)
    for volume in pod_volumes(pod):
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, dict) and source.get("claimName") == name:
            return True
        if (isinstance(volume.get("ephemeral"), dict) and not pod_is_shut_down(pod)
                and volume_claim_name(pod, volume) == name
                and volume_is_for_pod(pod, pvc) is None):
            return True
    return False


def pods_using_pvc(pvc: Obj, pods: list[Obj]) -> list[Obj]:
    """The pods of ``pods`` that keep ``pvc`` from being released."""
    return [pod for pod in pods if pod_uses_pvc(pod, pvc)]


class PVCProtectionController(BaseController):
    """Ownership: the queue holds ``namespace/name`` claim keys, drained by one worker
    (upstream's start function runs one)."""

    name = "persistentvolumeclaim-protection-controller"
    component = "pvc-protection-controller"

    def __init__(self, ctx: ControllerContext[object]) -> None:
        super().__init__(ctx, workers=1)
        self.pvcs = self.informer_factory.for_resource(PVCS)
        self.pods = self.informer_factory.for_resource(PODS)
        self.synced_informers = [self.pvcs, self.pods]
        self.primary_informer = self.pvcs
        #: namespace -> its pods, listed during the current burst of queued claims (the
        #: worker's own: one worker)
        self.live_pods: dict[str, list[Obj]] = {}

    def register_handlers(self) -> None:
        ensure_indexers(self.pods, {POD_PVC_INDEX: pod_pvc_index_func})
        self.pvcs.add_event_handler(FuncHandler(
            add=lambda obj, _: self.pvc_added_updated(obj),
            update=lambda _, new: self.pvc_added_updated(new)))
        self.pods.add_event_handler(FuncHandler(
            add=lambda obj, _: self.pod_added_deleted_updated(None, obj, deleted=False),
            update=lambda old, new: self.pod_added_deleted_updated(old, new, deleted=False),
            delete=lambda obj: self.pod_added_deleted_updated(None, obj, deleted=True)))

    def pvc_added_updated(self, pvc: Obj) -> None:
        if (need_to_add_finalizer(pvc, PVC_PROTECTION_FINALIZER)
                or is_deletion_candidate(pvc, PVC_PROTECTION_FINALIZER)):
            self.enqueue(pvc)

    def pod_added_deleted_updated(self, old: Obj | None, new: Obj | DeletedFinalStateUnknown,
                                  *, deleted: bool) -> None:
        pod = tombstone_object(new)
        self.enqueue_pvcs(pod, deleted=deleted)
        # an update may hide the deletion of a pod and the creation of a namesake: the old
        # one's claims may be waiting for it
        if old is not None and uid_of(old) != uid_of(pod):
            self.enqueue_pvcs(old, deleted=True)

    def enqueue_pvcs(self, pod: Obj, *, deleted: bool) -> None:
        """``enqueuePVCs``: only a pod that can release its claims queues them."""
        if not deleted and not is_pod_terminated(pod) and (pod.get("spec") or {}).get(
                "nodeName"):
            return
        for claim, _ in claim_names(pod):
            self.enqueue_key(f"{namespace_of(pod)}/{claim}")

    async def sync(self, key: str) -> float | None:
        if len(self.queue) == 0:
            self.live_pods.clear()  # the last claim of a burst: a fresh list
        pvc = self.pvcs.indexer.get_by_key(key)
        if pvc is None:
            return None
        PERSISTENT_VOLUME_CLAIM.check(pvc)
        if is_deletion_candidate(pvc, PVC_PROTECTION_FINALIZER):
            if not await self.is_being_used(pvc):
                await self.update_finalizers(pvc, [f for f in finalizers_of(pvc)
                                                   if f != PVC_PROTECTION_FINALIZER])
                return None
            log.info("keeping PVC %s because it is being used", key)
        if need_to_add_finalizer(pvc, PVC_PROTECTION_FINALIZER):
            await self.update_finalizers(pvc, [*finalizers_of(pvc), PVC_PROTECTION_FINALIZER])
        return None

    async def is_being_used(self, pvc: Obj) -> bool:
        """``isBeingUsed``: the informer's pods (``askInformer``), then a live list of the
        namespace's pods (``askAPIServer``): a pod missing from the cache still counts."""
        cached = self.pods.indexer.by_index(POD_PVC_INDEX,
                                            f"{namespace_of(pvc)}/{name_of(pvc)}")
        if pods_using_pvc(pvc, cached):
            return True
        ns = namespace_of(pvc)
        if ns not in self.live_pods:
            live = await self.client.list(PODS, namespace=ns)
            self.live_pods[ns] = [p for p in live.get("items") or [] if isinstance(p, dict)]
        return bool(pods_using_pvc(pvc, self.live_pods[ns]))

    async def update_finalizers(self, pvc: Obj, finalizers: list[str]) -> None:
        """``addFinalizer`` / ``removeFinalizer``: an update of the claim as read."""
        clone = {**pvc, "metadata": {**pvc["metadata"], "finalizers": finalizers}}
        await self.client.update(PVCS, clone, namespace=namespace_of(pvc))
