"""The volume vocabulary the API server's admission, the volume controllers, the kubelet and
the tools share: the claims and volumes resources, the protection finalizers (cf.
pkg/volume/util ``PVCProtectionFinalizer`` / ``PVProtectionFinalizer``), generic ephemeral
volumes (k8s.io/component-helpers/storage/ephemeral ``VolumeClaimName``,
``VolumeIsForPod``) and which claims a pod names. Pure functions over JSON-shaped objects;
the decisions built on them (does a pod use a claim, is a volume in use) are the protection
controllers' (``kubegc.controllers.volume``), which the tools call.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kubegc.api.meta import controller_ref_of, name_of, namespace_of, uid_of
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj

PVCS = GroupVersionResource("", "v1", "persistentvolumeclaims")
PVS = GroupVersionResource("", "v1", "persistentvolumes")

#: added by the StorageObjectInUseProtection admission, removed by the pvc-protection
#: controller once no pod uses the claim
PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
#: added by the same admission, removed by the pv-protection controller once the volume is
#: not Bound
PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"


def pod_volumes(pod: Obj) -> list[dict[str, Any]]:
    """The pod's ``spec.volumes`` that are objects (a malformed entry is validation's)."""
    spec = pod.get("spec")
    volumes = spec.get("volumes") if isinstance(spec, dict) else None
    if not isinstance(volumes, list):
        return []
    return [v for v in volumes if isinstance(v, dict)]


def is_ephemeral(volume: dict[str, Any]) -> bool:
    return isinstance(volume.get("ephemeral"), dict)


def volume_claim_name(pod: Obj, volume: dict[str, Any]) -> str:
    """``ephemeral.VolumeClaimName``: the claim of a generic ephemeral volume is named
    ``<pod>-<volume>``."""
    return f"{name_of(pod)}-{volume.get('name') or ''}"


def volume_is_for_pod(pod: Obj, pvc: Obj) -> str | None:
    """``ephemeral.VolumeIsForPod``: None when ``pvc`` was created for ``pod`` (same
    namespace, controlled by it), else upstream's error message."""
    ref = controller_ref_of(pvc)
    if namespace_of(pvc) != namespace_of(pod) or ref is None or ref.get("uid") != uid_of(pod):
        return (f"PVC {namespace_of(pvc)}/{name_of(pvc)} was not created for pod "
                f"{namespace_of(pod)}/{name_of(pod)} (pod is not owner)")
    return None


def claim_names(pod: Obj) -> Iterator[tuple[str, bool]]:
    """The claims the pod's volumes name, each with whether it is an ephemeral volume's
    (cf. pvcprotection ``enqueuePVCs`` and the ``PodPVCIndexFunc`` of
    pkg/controller/volume/common)."""
    for volume in pod_volumes(pod):
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, dict) and source.get("claimName"):
            yield str(source["claimName"]), False
        elif is_ephemeral(volume):
            yield volume_claim_name(pod, volume), True


def _not_running(statuses: object) -> bool:
    if not isinstance(statuses, list):
        return True
    for status in statuses:
        state = (status.get("state") or {}) if isinstance(status, dict) else {}
        if not state.get("terminated") and not state.get("waiting"):
            return False
    return True


def is_pod_terminated(pod: Obj) -> bool:
    """pkg/volume/util ``IsPodTerminated``: Succeeded or Failed, or being deleted with no
    container running."""
    status = pod.get("status")
    if not isinstance(status, dict):
        status = {}
    if status.get("phase") in ("Succeeded", "Failed"):
        return True
    return bool((pod.get("metadata") or {}).get("deletionTimestamp")) and all(
        _not_running(status.get(key)) for key in
        ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"))


def claim_ref(pv: Obj) -> str:
    """``namespace/name`` of the claim a volume's ``spec.claimRef`` names ("" if none)."""
    ref = (pv.get("spec") or {}).get("claimRef")
    if not isinstance(ref, dict) or not ref.get("name"):
        return ""
    return f"{ref.get('namespace') or ''}/{ref['name']}"
