"""The node.k8s.io group's storage: RuntimeClasses (cf. pkg/registry/node/runtimeclass).
Stored only: no kubelet runs a RuntimeClass's handler."""

from __future__ import annotations

from kubegc.api.content import is_dns1123_label
from kubegc.api.errors import StatusCause, field_error
from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext, stored
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.validation.paths import immutable


def validate_runtime_class(obj: Obj) -> list[StatusCause]:
    """``ValidateRuntimeClass``: the handler is a DNS-1123 label."""
    handler = str(obj.get("handler") or "")
    return [field_error("FieldValueInvalid", "handler", m, handler)
            for m in is_dns1123_label(handler)]


def validate_runtime_class_update(new: Obj, old: Obj) -> list[StatusCause]:
    return validate_runtime_class(new) + immutable(new, old, "handler")


def resources(ctx: StorageContext) -> list[Resource]:
    return [stored(ctx, builtin("node.k8s.io", "runtimeclasses"), Strategy(
        tracks_generation=False, validate=validate_runtime_class,
        validate_update=validate_runtime_class_update), table=printers.RUNTIME_CLASS)]
