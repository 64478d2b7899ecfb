"""PersistentVolume and PersistentVolumeClaim validation (``ValidatePersistentVolumeSpec``,
``ValidatePersistentVolumeClaimSpec``, ``ValidatePersistentVolumeClaimUpdate``)."""

from __future__ import annotations

import math
from typing import Any

from kubegc.api.content import is_dns1123_subdomain
from kubegc.registry.typed.special import quantity_value
from kubegc.registry.validation.common import (
    Causes,
    forbidden,
    invalid,
    mapping,
    not_supported,
    one_of,
    required,
)

ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
VOLUME_MODES = ("Block", "Filesystem")
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")
#: the fields of a PersistentVolumeSpec that are not its volume source
_PV_SPEC_FIELDS = frozenset((
    "accessModes", "capacity", "claimRef", "mountOptions", "nodeAffinity",
    "persistentVolumeReclaimPolicy", "storageClassName", "volumeMode",
    "volumeAttributesClassName"))


def _access_modes(modes: list[Any], path: str) -> Causes:
    """Required, known, and ``ReadWriteOncePod`` alone (the PV and claim specs alike)."""
    if not modes:
        return [required(path)]
    causes = [not_supported(path, mode, ACCESS_MODES) for mode in modes
              if mode not in ACCESS_MODES]
    if "ReadWriteOncePod" in modes and any(m != "ReadWriteOncePod" and m in ACCESS_MODES
                                           for m in modes):
        causes.append(forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return causes


def _class_name(spec: dict[str, Any]) -> Causes:
    """``ValidateClassName`` of ``storageClassName``, when set."""
    name = spec.get("storageClassName")
    if not name:
        return []
    return [invalid("spec.storageClassName", name, msg)
            for msg in is_dns1123_subdomain(str(name))]


def _capacity(capacity: dict[str, Any]) -> Causes:
    """``ValidatePersistentVolumeSpec``'s capacity: given, storage only, each quantity
    positive (``validateBasicResource``: Go's ``Quantity.Value()``, rounded away from 0,
    not negative; ``ValidatePositiveQuantityValue``)."""
    causes: Causes = []
    if not capacity:
        causes.append(required("spec.capacity"))
    if "storage" not in capacity or len(capacity) > 1:
        causes.append(not_supported("spec.capacity", capacity, ("storage",)))
    for name, quantity in capacity.items():
        text, path = str(quantity).strip(), f"spec.capacity[{name}]"
        value = quantity_value(text)
        if value is None:
            continue
        if value < 0:
            causes.append(invalid(path, -math.ceil(-value), "must be a valid resource quantity",
                                  "int64"))
        if value <= 0:
            causes.append(invalid(path, text, "must be greater than zero"))
    return causes


def validate_persistent_volume(obj: dict[str, Any]) -> Causes:
    spec = mapping(obj, "spec")
    causes = _access_modes(spec.get("accessModes") or [], "spec.accessModes")
    causes += _capacity(mapping(spec, "capacity")) + _class_name(spec)
    host_path = spec.get("hostPath")
    if isinstance(host_path, dict) and not host_path.get("path"):
        causes.append(required("spec.hostPath.path"))  # validateHostPathVolumeSource
    causes += one_of(spec.get("persistentVolumeReclaimPolicy"),
                     "spec.persistentVolumeReclaimPolicy", RECLAIM_POLICIES)
    causes += one_of(spec.get("volumeMode"), "spec.volumeMode", VOLUME_MODES)
    sources = [k for k, v in spec.items() if k not in _PV_SPEC_FIELDS and v is not None]
    if not sources:
        causes.append(required("spec", "must specify a volume type"))
    elif len(sources) > 1:
        causes.append(forbidden(f"spec.{sources[1]}", "may not specify more than 1 volume type"))
    return causes


def validate_persistent_volume_claim(obj: dict[str, Any]) -> Causes:
    """``ValidatePersistentVolumeClaimSpec``: access modes (``ReadWriteOncePod`` alone), the
    storage request (required, positive: ``ValidatePositiveQuantityValue``), the class
    name, the volume mode."""
    spec = mapping(obj, "spec")
    causes = _access_modes(spec.get("accessModes") or [], "spec.accessModes")
    requests = mapping(spec, "resources", "requests")
    if "storage" not in requests:
        causes.append(required("spec.resources[storage]"))
    else:
        text = str(requests["storage"]).strip()
        value = quantity_value(text)
        if value is not None and value <= 0:
            causes.append(invalid("spec.resources[storage]", text, "must be greater than zero"))
    causes += _class_name(spec)
    return causes + one_of(spec.get("volumeMode"), "spec.volumeMode", VOLUME_MODES)


def validate_persistent_volume_claim_update(new: dict[str, Any], old: dict[str, Any]) -> Causes:
    """A claim's spec is immutable but for its requested resources (and, once bound, its
    volume attributes class)."""
    causes = validate_persistent_volume_claim(new)
    new_spec, old_spec = dict(mapping(new, "spec")), dict(mapping(old, "spec"))
    for spec in (new_spec, old_spec):
        spec.pop("resources", None)
        spec.pop("volumeAttributesClassName", None)
    if not old_spec.get("volumeName"):
        new_spec.pop("volumeName", None)  # binding sets it
        old_spec.pop("volumeName", None)
    if new_spec != old_spec:
        causes.append(forbidden("spec", "spec is immutable after creation except "
                                "resources.requests and volumeAttributesClassName for bound "
                                "claims"))
    return causes
