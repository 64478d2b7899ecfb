"""PriorityClasses, RuntimeClasses, EndpointSlices and ControllerRevisions: objects others
read (cf. pkg/registry/{scheduling/priorityclass,node/runtimeclass,
discovery/endpointslice,apps/controllerrevision}).

Stored only: the scheduler does not read priorities (no preemption), no kubelet runs a
RuntimeClass's handler, no EndpointSlice controller mirrors Services (kubegc's endpoints
controller writes Endpoints), and ControllerRevisions are written by nobody but clients
(kubegc's StatefulSet and DaemonSet controllers keep no revision history).
"""

from __future__ import annotations

from typing import Any

from kubegc.api.content import is_dns1123_label
from kubegc.api.errors import StatusCause, field_error
from kubegc.api.types import Obj
from kubegc.registry.groups._fields import (
    forbidden_change,
    immutable,
    items,
    non_negative,
    one_of,
    required,
)

#: ``scheduling.HighestUserDefinablePriority``
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
_SYSTEM_PREFIX = "system-"


def default_priority_class(obj: Obj) -> None:
    """``SetDefaults_PriorityClass``: preemption policy PreemptLowerPriority."""
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


def validate_priority_class(obj: Obj) -> list[StatusCause]:
    """``ValidatePriorityClass``: names with the system prefix are reserved (kubegc
    creates no system priority classes), user values are at most 1e9."""
    name = str((obj.get("metadata") or {}).get("name") or "")
    value = obj.get("value")
    causes = one_of(obj, "preemptionPolicy", ("Never", "PreemptLowerPriority"))
    if name.startswith(_SYSTEM_PREFIX):
        causes.append(field_error(
            "FieldValueForbidden", "metadata.name",
            f"priority class names with '{_SYSTEM_PREFIX}' prefix are reserved for system use "
            f"only. error: {name} is not a known system priority class"))
    elif isinstance(value, int) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        causes.append(field_error(
            "FieldValueForbidden", "value",
            f"maximum allowed value of a user defined priority is "
            f"{HIGHEST_USER_DEFINABLE_PRIORITY}"))
    return causes


def validate_priority_class_update(new: Obj, old: Obj) -> list[StatusCause]:
    """``ValidatePriorityClassUpdate``: value and preemption policy never change."""
    return (validate_priority_class(new)
            + forbidden_change(new, old, "value", "may not be changed in an update.")
            + immutable(new, old, "preemptionPolicy"))


def validate_runtime_class(obj: Obj) -> list[StatusCause]:
    """``ValidateRuntimeClass``: the handler is a DNS-1123 label."""
    handler = str(obj.get("handler") or "")
    return [field_error("FieldValueInvalid", "handler", m, handler)
            for m in is_dns1123_label(handler)]


def validate_runtime_class_update(new: Obj, old: Obj) -> list[StatusCause]:
    return validate_runtime_class(new) + immutable(new, old, "handler")


_ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")


def default_endpoint_slice(obj: Obj) -> None:
    """``endpoints`` is not omitempty (an empty slice reads ``null``); port protocol TCP
    (``SetDefaults_EndpointPort``)."""
    obj.setdefault("endpoints", None)
    for _, port in items(obj, "ports"):
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")


def validate_endpoint_slice(obj: Obj) -> list[StatusCause]:
    """``ValidateEndpointSlice``: a known address type; each endpoint has addresses."""
    causes = one_of(obj, "addressType", _ADDRESS_TYPES, optional=False)
    for path, endpoint in items(obj, "endpoints"):
        causes += required(endpoint, "addresses", at=path)
    return causes


def validate_endpoint_slice_update(new: Obj, old: Obj) -> list[StatusCause]:
    return validate_endpoint_slice(new) + immutable(new, old, "addressType")


def validate_controller_revision(obj: Obj) -> list[StatusCause]:
    """``ValidateControllerRevision``: data is mandatory, the revision not negative."""
    causes = [] if obj.get("data") is not None else [
        field_error("FieldValueRequired", "data", "data is mandatory")]
    return causes + non_negative(obj, "revision")


def validate_controller_revision_update(new: Obj, old: Obj) -> list[StatusCause]:
    return validate_controller_revision(new) + immutable(new, old, "data",
                                                         go_type="runtime.RawExtension")


_NO_SPEC = {"tracks_generation": False}
STRATEGIES: dict[tuple[str, str], dict[str, Any]] = {
    ("scheduling.k8s.io", "priorityclasses"): {
        **_NO_SPEC, "validate": validate_priority_class,
        "validate_update": validate_priority_class_update},
    ("node.k8s.io", "runtimeclasses"): {
        **_NO_SPEC, "validate": validate_runtime_class,
        "validate_update": validate_runtime_class_update},
    ("discovery.k8s.io", "endpointslices"): {
        "generation_fields": ("addressType", "endpoints", "ports"),
        "validate": validate_endpoint_slice, "validate_update": validate_endpoint_slice_update},
    ("apps", "controllerrevisions"): {
        **_NO_SPEC, "validate": validate_controller_revision,
        "validate_update": validate_controller_revision_update},
}
DEFAULTERS = {
    ("scheduling.k8s.io", "priorityclasses"): default_priority_class,
    ("discovery.k8s.io", "endpointslices"): default_endpoint_slice,
}
