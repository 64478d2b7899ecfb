"""``ephemeralController`` of pkg/controller/volume/ephemeral/controller.go.

A pod is queued when it is added, not being deleted and has an ephemeral volume
(``enqueuePod``; its spec is immutable, so updates are ignored), and again when a claim one
of its volumes names is deleted (``onPVCDelete``: the claim is made anew while the pod
lives). ``sync`` (``syncHandler``) handles each volume (``handleVolume``): the claim
``<pod>-<volume>`` is created from ``ephemeral.volumeClaimTemplate`` (its labels,
annotations and spec) with an ownerReference to the pod, ``controller`` and
``blockOwnerDeletion`` true, so the garbage collector deletes it with the pod (and a
foreground deletion of the pod waits for it). A claim of that name that the pod does not
control is not taken over: the sync fails with upstream's message
(``ephemeral.VolumeIsForPod``), recorded as a Warning ``FailedBinding`` event on the pod,
and is retried with backoff; the kubelet does not start such a pod.
"""

from __future__ import annotations

import copy
from typing import Any

from kubegc.api.errors import StatusError
from kubegc.api.meta import name_of, namespace_of, uid_of
from kubegc.api.pod import PODS
from kubegc.api.types import Obj
from kubegc.api.volumes import (
    PVCS,
    is_ephemeral,
    pod_volumes,
    volume_claim_name,
    volume_is_for_pod,
)
from kubegc.client.cache import DeletedFinalStateUnknown, FuncHandler
from kubegc.client.events import EVENT_TYPE_WARNING
from kubegc.component.base_controller import BaseController, tombstone_object
from kubegc.component.config import EphemeralVolumeControllerConfiguration
from kubegc.component.context import ControllerContext
from kubegc.component.objects import PERSISTENT_VOLUME_CLAIM, POD
from kubegc.controllers.controller_utils import ensure_indexers
from kubegc.controllers.volume.common import POD_PVC_INDEX, pod_pvc_index_func

#: pkg/controller/volume/events ``FailedBinding``
FAILED_BINDING = "FailedBinding"

class VolumeNotForPod(Exception):
    """A claim named as the pod's ephemeral claim exists and the pod does not control it."""


class EphemeralController(BaseController):
    """Ownership: the queue holds ``namespace/name`` pod keys."""

    name = "ephemeral-volume-controller"
    #: upstream's ``EventSource.Component``
    component = "ephemeral_volume"
    expected_errors = (*BaseController.expected_errors, VolumeNotForPod)

    def __init__(self, ctx: ControllerContext[EphemeralVolumeControllerConfiguration]) -> None:
        super().__init__(ctx, workers=ctx.options.concurrent_ephemeral_volume_syncs)
        self.pods = self.informer_factory.for_resource(PODS)
        self.pvcs = self.informer_factory.for_resource(PVCS)
        self.synced_informers = [self.pods, self.pvcs]
        self.primary_informer = self.pods

    def register_handlers(self) -> None:
        ensure_indexers(self.pods, {POD_PVC_INDEX: pod_pvc_index_func})
        self.pods.add_event_handler(FuncHandler(add=lambda obj, _: self.enqueue_pod(obj)))
        self.pvcs.add_event_handler(FuncHandler(delete=self.on_pvc_delete))

    def enqueue_pod(self, pod: Obj) -> None:
        if (pod.get("metadata") or {}).get("deletionTimestamp"):
            return
        if any(is_ephemeral(v) for v in pod_volumes(pod)):
            self.enqueue(pod)

    def on_pvc_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        pvc = tombstone_object(obj)
        for pod in self.pods.indexer.by_index(POD_PVC_INDEX,
                                              f"{namespace_of(pvc)}/{name_of(pvc)}"):
            self.enqueue_pod(pod)

    async def sync(self, key: str) -> float | None:
        pod = self.pods.indexer.get_by_key(key)
        if pod is None or (pod.get("metadata") or {}).get("deletionTimestamp"):
            return None
        POD.check(pod)  # a template it cannot read: FailedSync, retried with backoff
        for volume in pod_volumes(pod):
            try:
                await self.handle_volume(pod, volume)
            except (StatusError, VolumeNotForPod) as err:
                message = err.message if isinstance(err, StatusError) else str(err)
                if isinstance(err, StatusError):
                    message = f"create PVC {volume_claim_name(pod, volume)}: {message}"
                self.recorder.event(pod, EVENT_TYPE_WARNING, FAILED_BINDING,
                                    f"ephemeral volume {volume.get('name')}: {message}")
                raise
        return None

    async def handle_volume(self, pod: Obj, volume: dict[str, Any]) -> None:
        if not is_ephemeral(volume):
            return
        claim = volume_claim_name(pod, volume)
        existing = self.pvcs.indexer.get_by_key(f"{namespace_of(pod)}/{claim}")
        if existing is not None and PERSISTENT_VOLUME_CLAIM.understood(existing):
            refused = volume_is_for_pod(pod, existing)
            if refused is not None:
                raise VolumeNotForPod(refused)
            return  # already created
        template = volume["ephemeral"].get("volumeClaimTemplate") or {}
        meta = template.get("metadata") or {}
        pvc: Obj = {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": claim, "namespace": namespace_of(pod),
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": name_of(pod),
                                     "uid": uid_of(pod), "controller": True,
                                     "blockOwnerDeletion": True}]},
            "spec": copy.deepcopy(template.get("spec") or {})}
        for field in ("labels", "annotations"):
            if meta.get(field):
                pvc["metadata"][field] = copy.deepcopy(meta[field])
        await self.client.create(PVCS, pvc, namespace=namespace_of(pod))
