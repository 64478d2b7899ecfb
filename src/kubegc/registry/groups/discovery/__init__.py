"""The discovery.k8s.io group's storage: EndpointSlices (cf.
pkg/registry/discovery/endpointslice). Stored only: no EndpointSlice controller mirrors
Services (kubegc's endpoints controller writes Endpoints)."""

from __future__ import annotations

from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext, stored
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.groups.discovery.validation import (
    validate_endpoint_slice,
    validate_endpoint_slice_update,
)
from kubegc.registry.validation.paths import items


def default_endpoint_slice(obj: Obj) -> None:
    """``endpoints`` is not omitempty (an empty slice reads ``null``); port protocol TCP
    (``SetDefaults_EndpointPort``)."""
    obj.setdefault("endpoints", None)
    for _, port in items(obj, "ports"):
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")


def resources(ctx: StorageContext) -> list[Resource]:
    return [stored(ctx, builtin("discovery.k8s.io", "endpointslices"), Strategy(
        generation_fields=("addressType", "endpoints", "ports"),
        validate=validate_endpoint_slice, validate_update=validate_endpoint_slice_update,
        defaulter=default_endpoint_slice), table=printers.ENDPOINT_SLICE)]
