"""Printers of PersistentVolumes and PersistentVolumeClaims (``printPersistentVolume``,
``printPersistentVolumeClaim``): capacity, access modes in their short form (RWO, ROX, RWX,
RWOP), StorageClass (the beta annotation wins over ``storageClassName``) and
``Terminating`` for a deleted volume or claim.
"""

from __future__ import annotations

from collections.abc import Mapping
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
    object_meta,
)

PERSISTENT_VOLUME_COLUMN_DEFINITIONS = [
    NAME, column("Capacity", "capacity is the description of the persistent volume's"
                 " resources and capacity."),
    column("Access Modes", "accessModes contains all ways the volume can be mounted."),
    column("Reclaim Policy", "persistentVolumeReclaimPolicy defines what happens to a"
           " persistent volume when released from its claim."),
    column("Status", "phase indicates if a volume is available, bound to a claim, or"
           " released by a claim."),
    column("Claim", "claimRef is part of a bi-directional binding between PersistentVolume"
           " and PersistentVolumeClaim."),
    column("StorageClass", "StorageClass of the pv"),
    column("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
    column("Reason", "reason is a brief CamelCase string that describes any failure and is"
           " meant for machine parsing and tidy display in the CLI."),
    AGE,
    column("VolumeMode", "volumeMode defines if a volume is intended to be used with a"
           " formatted filesystem or to remain in raw block state.", wide=True),
]
PERSISTENT_VOLUME_CLAIM_COLUMN_DEFINITIONS = [
    NAME, column("Status", "phase represents the current phase of PersistentVolumeClaim."),
    column("Volume", "volumeName is the binding reference to the PersistentVolume backing"
           " this claim."),
    column("Capacity", "capacity represents the actual resources of the underlying volume."),
    column("Access Modes", "accessModes contains the actual access modes the volume backing"
           " the PVC has."),
    column("StorageClass", "StorageClass of the pvc"),
    column("VolumeAttributesClass", "VolumeAttributesClass of the pvc"), AGE,
    column("VolumeMode", "volumeMode defines what type of volume is required by the claim.",
           wide=True),
]


_ACCESS_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                 ("ReadWriteOncePod", "RWOP"))


def _access_modes(modes: list[str] | None) -> str:
    return ",".join(short for mode, short in _ACCESS_MODES if mode in (modes or []))


def _storage_class(obj: Obj) -> str:
    annotations = object_meta(obj).get("annotations") or {}
    annotation = annotations.get("volume.beta.kubernetes.io/storage-class")
    if annotation is not None:
        return str(annotation)
    return str(lookup(obj, "spec", "storageClassName") or "")


def _phase(obj: Obj, status: Mapping[str, Any]) -> Any:
    """The Status cell: ``Terminating`` once the volume or claim is being deleted."""
    if object_meta(obj).get("deletionTimestamp"):
        return "Terminating"
    return status.get("phase") or ""


def print_persistent_volume(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    claim = spec.get("claimRef")
    claim_text = f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim else ""
    phase = _phase(obj, status)
    return [object_meta(obj).get("name", ""), lookup(spec, "capacity", "storage") or "0",
            _access_modes(spec.get("accessModes")),
            spec.get("persistentVolumeReclaimPolicy") or "", phase, claim_text,
            _storage_class(obj), spec.get("volumeAttributesClassName") or "<unset>",
            status.get("reason") or "", age(obj, now), spec.get("volumeMode") or "<unset>"], []


def print_persistent_volume_claim(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    phase = _phase(obj, status)
    bound = bool(spec.get("volumeName"))
    capacity = (lookup(status, "capacity", "storage") or "0") if bound else ""
    modes = _access_modes(status.get("accessModes")) if bound else ""
    return [object_meta(obj).get("name", ""), phase, spec.get("volumeName") or "", capacity, modes,
            _storage_class(obj), spec.get("volumeAttributesClassName") or "<unset>",
            age(obj, now), spec.get("volumeMode") or "<unset>"], []
