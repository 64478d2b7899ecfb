"""The ``StorageObjectInUseProtection`` admission plugin
(plugin/pkg/admission/storage/storageobjectinuseprotection/admission.go): on create of a
PersistentVolumeClaim it adds ``kubernetes.io/pvc-protection``, on create of a
PersistentVolume ``kubernetes.io/pv-protection`` (``admitPVC`` / ``admitPV``; the plugin
handles ``admission.Create`` only, and not subresources). The pvc-protection and
pv-protection controllers (``kubegc.controllers.volume``) remove them once the claim is
not used by a pod / the volume is not Bound, so that a delete waits for that.
"""

from __future__ import annotations

from kubegc.api.errors import GroupResource
from kubegc.api.types import Obj
from kubegc.api.volumes import PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER
from kubegc.registry.generic.target import Target

#: the resources it handles, with the finalizer each gets
FINALIZERS = {
    GroupResource("", "persistentvolumeclaims"): PVC_PROTECTION_FINALIZER,
    GroupResource("", "persistentvolumes"): PV_PROTECTION_FINALIZER,
}


def admit_storage_object_in_use_protection(t: Target, obj: Obj) -> None:
    """Mutating admission of a create (in place): the protection finalizer, unless the
    object has it already."""
    finalizer = FINALIZERS.get(t.gr)
    meta = obj.get("metadata")
    if finalizer is None or not isinstance(meta, dict):
        return
    finalizers = meta.get("finalizers")
    if finalizers is None:
        finalizers = []
    if not isinstance(finalizers, list):
        return  # validation reports it
    if finalizer not in finalizers:
        meta["finalizers"] = [*finalizers, finalizer]
