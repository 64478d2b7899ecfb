"""StorageClasses, CSIDrivers, CSINodes, CSIStorageCapacities and VolumeAttachments (cf.
pkg/registry/storage, pkg/apis/storage/{v1/defaults.go,validation}).

Stored only: no provisioner, attach/detach controller or CSI driver acts on them (a claim
of a StorageClass stays Pending, a VolumeAttachment is never attached).
"""

from __future__ import annotations

from typing import Any

from kubegc.api.content import is_qualified_name
from kubegc.api.errors import StatusCause, field_error
from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext, stored
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.validation.paths import (
    forbidden_change,
    immutable,
    items,
    map_at,
    one_of,
    required,
    set_default,
)


def default_storage_class(obj: Obj) -> None:
    """``SetDefaults_StorageClass``: reclaim policy Delete, binding mode Immediate."""
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")


def validate_storage_class(obj: Obj) -> list[StatusCause]:
    """``ValidateStorageClass``: a provisioner (a qualified name), known policies."""
    provisioner = obj.get("provisioner")
    causes = required(obj, "provisioner")
    if provisioner:
        causes += [field_error("FieldValueInvalid", "provisioner", m, provisioner)
                   for m in is_qualified_name(str(provisioner).lower())]
    return causes + one_of(obj, "reclaimPolicy", ("Delete", "Retain")) + one_of(
        obj, "volumeBindingMode", ("Immediate", "WaitForFirstConsumer"))


def validate_storage_class_update(new: Obj, old: Obj) -> list[StatusCause]:
    """``ValidateStorageClassUpdate``: what a class provisions with never changes."""
    return (validate_storage_class(new)
            + forbidden_change(new, old, "parameters", "updates to parameters are forbidden.")
            + forbidden_change(new, old, "provisioner", "updates to provisioner are forbidden.")
            + forbidden_change(new, old, "reclaimPolicy",
                               "updates to reclaimPolicy are forbidden.")
            + immutable(new, old, "volumeBindingMode"))


def default_csi_driver(obj: Obj) -> None:
    """``SetDefaults_CSIDriver`` (with v1.32's default feature gates)."""
    for key, value in (("attachRequired", True), ("podInfoOnMount", False),
                       ("storageCapacity", False), ("fsGroupPolicy", "ReadWriteOnceWithFSType"),
                       ("requiresRepublish", False), ("seLinuxMount", False)):
        set_default(obj, f"spec.{key}", value)
    if not obj["spec"].get("volumeLifecycleModes"):
        obj["spec"]["volumeLifecycleModes"] = ["Persistent"]


def validate_csi_driver(obj: Obj) -> list[StatusCause]:
    return one_of(obj, "spec.fsGroupPolicy", ("File", "None", "ReadWriteOnceWithFSType")) + [
        cause for path, mode in items(obj, "spec.volumeLifecycleModes")
        for cause in ([] if mode in ("Ephemeral", "Persistent") else [field_error(
            "FieldValueNotSupported", path, 'supported values: "Ephemeral", "Persistent"',
            mode)])]


def validate_csi_driver_update(new: Obj, old: Obj) -> list[StatusCause]:
    """``ValidateCSIDriverUpdate``: attachRequired and the lifecycle modes are immutable."""
    return validate_csi_driver(new) + immutable(
        new, old, "spec.attachRequired", "spec.volumeLifecycleModes")


def validate_csi_node(obj: Obj) -> list[StatusCause]:
    """``ValidateCSINodeSpec``: each driver has a name and a node ID, once."""
    causes: list[StatusCause] = []
    seen: set[Any] = set()
    for path, driver in items(obj, "spec.drivers"):
        causes += required(driver, "name", "nodeID", at=path)
        name = driver.get("name") if isinstance(driver, dict) else None
        if name in seen:
            causes.append(field_error("FieldValueDuplicate", f"{path}.name", "", name))
        seen.add(name)
    return causes


def default_csi_node(obj: Obj) -> None:
    """``drivers`` is not omitempty: an empty list reads ``null``."""
    set_default(obj, "spec.drivers", None)


def validate_csi_storage_capacity(obj: Obj) -> list[StatusCause]:
    return required(obj, "storageClassName")


def prepare_volume_attachment_create(obj: Obj) -> None:
    """``PrepareForCreate``: no status from a create; ``attached`` is not omitempty."""
    obj["status"] = {"attached": False}


def validate_volume_attachment(obj: Obj) -> list[StatusCause]:
    """``ValidateVolumeAttachmentSpec``: an attacher, a node and exactly one source."""
    causes = required(obj, "spec.attacher", "spec.nodeName")
    source = map_at(obj, "spec.source")
    given = [k for k in ("persistentVolumeName", "inlineVolumeSpec") if source.get(k)]
    if len(given) != 1:
        causes.append(field_error(
            "FieldValueRequired", "spec.source",
            "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
    return causes


def validate_volume_attachment_update(new: Obj, old: Obj) -> list[StatusCause]:
    return validate_volume_attachment(new) + immutable(new, old, "spec", go_type=(
        "storage.VolumeAttachmentSpec"))


def resources(ctx: StorageContext) -> list[Resource]:
    group = "storage.k8s.io"
    return [
        stored(ctx, builtin(group, "storageclasses"), Strategy(
            tracks_generation=False, return_deleted_object=True,
            validate=validate_storage_class, validate_update=validate_storage_class_update,
            defaulter=default_storage_class), table=printers.STORAGE_CLASS),
        stored(ctx, builtin(group, "csidrivers"), Strategy(
            tracks_generation=False, return_deleted_object=True,
            validate=validate_csi_driver, validate_update=validate_csi_driver_update,
            defaulter=default_csi_driver), table=printers.CSI_DRIVER),
        stored(ctx, builtin(group, "csinodes"), Strategy(
            tracks_generation=False, return_deleted_object=True, validate=validate_csi_node,
            defaulter=default_csi_node), table=printers.CSI_NODE),
        stored(ctx, builtin(group, "csistoragecapacities"), Strategy(
            tracks_generation=False, validate=validate_csi_storage_capacity),
                table=printers.CSI_STORAGE_CAPACITY),
        stored(ctx, builtin(group, "volumeattachments"), Strategy(
            tracks_generation=False, return_deleted_object=True,
            prepare_for_create=prepare_volume_attachment_create,
            validate=validate_volume_attachment,
            validate_update=validate_volume_attachment_update), status=True,
                table=printers.VOLUME_ATTACHMENT),
    ]
