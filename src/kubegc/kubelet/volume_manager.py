"""The kubelet's wait for a pod's volumes, reduced to claims (cf. pkg/kubelet/volumemanager:
the desired-state-of-world populator's ``createVolumeSpec`` / ``getPVCExtractPV``, and
``WaitForAttachAndMount``). kubegc has no storage: a claim that exists, is not being deleted
and — an ephemeral volume's — was made for the pod is "mounted" at once (upstream also waits
for it to be Bound, which nothing does in kubegc).

A pod not started yet whose claims are not all there is not started: its status is
upstream's for a pod waiting on its volumes — phase ``Pending``, each container waiting
``ContainerCreating``, ``Ready=False`` — and a Warning ``FailedMount`` event says why
("Unable to attach or mount volumes: unmounted volumes=[data], ... failed to process
volumes=[data]: error processing PVC ns/data: failed to fetch PVC from API server:
persistentvolumeclaims "data" not found"). The pod is looked at again when a claim of its
namespace changes (``VolumeManager``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from kubegc.api.clock import Clock, format_time
from kubegc.api.errors import StatusError, is_not_found
from kubegc.api.meta import is_being_deleted, name_of, namespace_of, uid_of
from kubegc.api.pod import PODS
from kubegc.api.types import Obj
from kubegc.api.volumes import (
    PVCS,
    is_ephemeral,
    pod_volumes,
    volume_claim_name,
    volume_is_for_pod,
)
from kubegc.client.cache import DeletedFinalStateUnknown, FuncHandler, SharedInformerFactory
from kubegc.client.events import EVENT_TYPE_WARNING, EventRecorder
from kubegc.client.interface import Client, PatchType

FAILED_MOUNT = "FailedMount"
CONTAINER_CREATING = "ContainerCreating"


def claim_errors(pod: Obj, claim_of: Callable[[str], Obj | None]) -> dict[str, str]:
    """Volume name -> why its claim cannot be used (empty: every claim is there)."""
    ns = namespace_of(pod)
    out: dict[str, str] = {}
    for volume in pod_volumes(pod):
        source = volume.get("persistentVolumeClaim")
        ephemeral = is_ephemeral(volume)
        if isinstance(source, dict) and source.get("claimName"):
            claim = str(source["claimName"])
        elif ephemeral:
            claim = volume_claim_name(pod, volume)
        else:
            continue
        pvc = claim_of(claim)
        name = str(volume.get("name") or "")
        if pvc is None:
            out[name] = (f"error processing PVC {ns}/{claim}: failed to fetch PVC from API "
                         f'server: persistentvolumeclaims "{claim}" not found')
        elif is_being_deleted(pvc):
            out[name] = f"error processing PVC {ns}/{claim}: PVC is being deleted"
        elif ephemeral and (refused := volume_is_for_pod(pod, pvc)) is not None:
            out[name] = refused
    return out


def failed_mount_message(errors: dict[str, str]) -> str:
    """The ``FailedMount`` event's message (``WaitForAttachAndMount``'s error)."""
    names = " ".join(sorted(errors))
    return (f"Unable to attach or mount volumes: unmounted volumes=[{names}], unattached "
            f"volumes=[{names}], failed to process volumes=[{names}]: "
            + "; ".join(errors[n] for n in sorted(errors)))


def is_started(pod: Obj) -> bool:
    """Whether the kubelet started the pod's containers (a pod only waiting on its volumes
    was not)."""
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return any(((s.get("state") or {}).get("waiting") or {}).get("reason")
               != CONTAINER_CREATING for s in statuses if isinstance(s, dict))


def waiting_status(pod: Obj, *, host_ip: str, now_wall: datetime) -> dict[str, Any]:
    """The status of a pod waiting on its volumes (``generateAPIPodStatus`` before the
    sandbox exists: no pod IP)."""
    stamp = format_time(now_wall)
    old = pod.get("status") or {}
    previous = {str(c.get("type")): c for c in old.get("conditions") or []}
    names = [str(c.get("name")) for c in (pod.get("spec") or {}).get("containers") or []]
    unready = f"containers with unready status: [{' '.join(names)}]"

    def condition(type_: str, value: bool, reason: str = "", message: str = "") -> dict[
            str, Any]:
        status = "True" if value else "False"
        prior = previous.get(type_)
        out: dict[str, Any] = {"type": type_, "status": status, "lastTransitionTime": (
            prior.get("lastTransitionTime") if prior and prior.get("status") == status
            else stamp)}
        if reason:
            out["reason"], out["message"] = reason, message
        return out

    return {
        "phase": "Pending", "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
        "startTime": old.get("startTime") or stamp,
        "conditions": [condition("PodReadyToStartContainers", False),
                       condition("Initialized", True),
                       condition("Ready", False, "ContainersNotReady", unready),
                       condition("ContainersReady", False, "ContainersNotReady", unready),
                       condition("PodScheduled", True)],
        "containerStatuses": [
            {"name": str(c.get("name")), "image": str(c.get("image") or ""), "imageID": "",
             "ready": False, "restartCount": 0, "started": False, "lastState": {},
             "state": {"waiting": {"reason": CONTAINER_CREATING}}}
            for c in (pod.get("spec") or {}).get("containers") or []],
    }


class VolumeManager:
    """The claims of the pods the kubelets have not started yet.

    Ownership: ``waiting`` (pod key -> the FailedMount message last reported) is written by
    the kubelet's workers (one key at a time) and read by the claim handler, which queues
    the waiting pods of a claim's namespace through ``enqueue``."""

    def __init__(self, client: Client, clock: Clock, informers: SharedInformerFactory) -> None:
        self.client, self.clock = client, clock
        self.pvcs = informers.for_resource(PVCS)
        self.waiting: dict[str, str] = {}

    def register(self, enqueue: Callable[[str], None]) -> None:
        def changed(obj: Obj | DeletedFinalStateUnknown) -> None:
            pvc = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
            for key in [k for k in self.waiting if k.startswith(f"{namespace_of(pvc)}/")]:
                enqueue(key)

        self.pvcs.add_event_handler(FuncHandler(add=lambda obj, _: changed(obj),
                                                update=lambda _, new: changed(new),
                                                delete=changed))

    async def wait_for_attach_and_mount(self, key: str, pod: Obj, *, host_ip: str,
                                        recorder: EventRecorder) -> bool:
        """Whether ``pod`` (not started, not being deleted) must wait for its claims; a new
        reason is reported (event, waiting status)."""
        ns = namespace_of(pod)
        errors = claim_errors(pod, lambda claim: self.pvcs.indexer.get_by_key(f"{ns}/{claim}"))
        if not errors:
            self.waiting.pop(key, None)
            return False
        message = failed_mount_message(errors)
        if self.waiting.get(key) == message:
            return True
        self.waiting[key] = message
        recorder.event(pod, EVENT_TYPE_WARNING, FAILED_MOUNT, message)
        patch = {"metadata": {"uid": uid_of(pod)},
                 "status": waiting_status(pod, host_ip=host_ip, now_wall=self.clock.now())}
        try:
            await self.client.patch(PODS, name_of(pod), patch, namespace=ns,
                                    patch_type=PatchType.MERGE, subresource="status")
        except StatusError as exc:
            if not is_not_found(exc):
                self.waiting.pop(key, None)  # posted again on the retry
                raise
        return True
