"""The discovery.k8s.io group's storage: EndpointSlices (cf.
pkg/registry/discovery/endpointslice). Stored only: no EndpointSlice controller mirrors
Services (kubegc's endpoints controller writes Endpoints)."""

from __future__ import annotations

from kubegc.api.errors import StatusCause
from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext, stored
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.validation.paths import immutable, items, one_of, required

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


def resources(ctx: StorageContext) -> list[Resource]:
    return [stored(ctx, builtin("discovery.k8s.io", "endpointslices"), Strategy(
        generation_fields=("addressType", "endpoints", "ports"),
        validate=validate_endpoint_slice, validate_update=validate_endpoint_slice_update,
        defaulter=default_endpoint_slice), table=printers.ENDPOINT_SLICE)]
