"""Printers of the storage.k8s.io kinds (``printStorageClass``, ``printCSIDriver``,
``printCSINode``, ``printCSIStorageCapacity``, ``printVolumeAttachment``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubegc.registry.printers.helpers import (
    AGE,
    NAME,
    Conditions,
    Obj,
    age,
    column,
    lookup,
    name_and,
    object_meta,
)

STORAGE_CLASS_COLUMN_DEFINITIONS = [
    NAME, column("Provisioner", "provisioner indicates the type of the provisioner."),
    column("ReclaimPolicy", "reclaimPolicy controls the reclaimPolicy for dynamically"
           " provisioned PersistentVolumes of this storage class."),
    column("VolumeBindingMode", "volumeBindingMode indicates how PersistentVolumeClaims"
           " should be provisioned and bound."),
    column("AllowVolumeExpansion", "allowVolumeExpansion shows whether the storage class"
           " allow volume expand."), AGE,
]
CSI_DRIVER_COLUMN_DEFINITIONS = [
    NAME, column("AttachRequired", "attachRequired indicates this CSI volume driver requires"
                 " an attach operation.", "boolean"),
    column("PodInfoOnMount", "podInfoOnMount indicates this CSI volume driver requires"
           " additional pod information during mount operations.", "boolean"),
    column("StorageCapacity", "storageCapacity indicates that the CSI volume driver wants pod"
           " scheduling to consider the storage capacity.", "boolean"),
    column("TokenRequests", "tokenRequests indicates the CSI driver needs pods' service"
           " account tokens it is mounting volume for to do necessary authentication."),
    column("RequiresRepublish", "requiresRepublish indicates the CSI driver wants"
           " `NodePublishVolume` being periodically called.", "boolean"),
    column("Modes", "volumeLifecycleModes defines what kind of volumes this CSI volume driver"
           " supports."), AGE,
]
CSI_NODE_COLUMN_DEFINITIONS = [
    NAME, column("Drivers", "Drivers indicates the number of CSI drivers registered on the"
                 " node", "integer"), AGE,
]
CSI_STORAGE_CAPACITY_COLUMN_DEFINITIONS = [
    NAME, column("StorageClassName", "storageClassName represents the name of the"
                 " StorageClass that the reported capacity applies to."),
    column("Capacity", "capacity is the value reported by the CSI driver in its"
           " GetCapacityResponse."),
]
VOLUME_ATTACHMENT_COLUMN_DEFINITIONS = [
    NAME, column("Attacher", "attacher indicates the name of the volume driver that MUST"
                 " handle this request.", fmt="name"),
    column("PV", "persistentVolumeName represents the name of the persistent volume to"
           " attach."),
    column("Node", "nodeName represents the node that the volume should be attached to."),
    column("Attached", "attached indicates the volume is successfully attached.", "boolean"),
    AGE,
]

_DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
_BETA_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"


def print_storage_class(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    """The default class is marked ``(default)`` (``IsDefaultAnnotation``)."""
    meta = object_meta(obj)
    annotations = meta.get("annotations") or {}
    name = str(meta.get("name", ""))
    if "true" in (annotations.get(_DEFAULT_CLASS), annotations.get(_BETA_DEFAULT_CLASS)):
        name += " (default)"
    return [name, obj.get("provisioner") or "", obj.get("reclaimPolicy") or "Delete",
            obj.get("volumeBindingMode") or "Immediate",
            bool(obj.get("allowVolumeExpansion")), age(obj, now)], []


def _flag(obj: Obj, key: str, default: bool) -> bool:
    value = lookup(obj, "spec", key)
    return default if value is None else bool(value)


def print_csi_driver(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec = obj.get("spec") or {}
    tokens = spec.get("tokenRequests")
    return [object_meta(obj).get("name", ""), _flag(obj, "attachRequired", True),
            _flag(obj, "podInfoOnMount", False), _flag(obj, "storageCapacity", False),
            "<unset>" if tokens is None else ",".join(
                str(t.get("audience", "")) for t in tokens if isinstance(t, dict)),
            _flag(obj, "requiresRepublish", False),
            ",".join(spec.get("volumeLifecycleModes") or []) or "<none>", age(obj, now)], []


print_csi_node = name_and(lambda o: len(lookup(o, "spec", "drivers") or []))


def print_csi_storage_capacity(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    capacity = obj.get("capacity")
    return [object_meta(obj).get("name", ""), obj.get("storageClassName") or "",
            "<unset>" if capacity is None else str(capacity)], []


print_volume_attachment = name_and(
    lambda o: lookup(o, "spec", "attacher") or "",
    lambda o: lookup(o, "spec", "source", "persistentVolumeName") or "",
    lambda o: lookup(o, "spec", "nodeName") or "",
    lambda o: bool(lookup(o, "status", "attached")))
