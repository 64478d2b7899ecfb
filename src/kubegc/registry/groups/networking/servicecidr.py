"""ServiceCIDRs and IPAddresses, ``networking.k8s.io/v1`` from 1.33 (KEP-1880; cf.
pkg/registry/networking/{servicecidr,ipaddress} and pkg/apis/networking/validation's
``ValidateServiceCIDR``, ``ValidateServiceCIDRUpdate``, ``ValidateIPAddress``,
``ValidateIPAddressUpdate``).

Both are cluster-scoped. A ServiceCIDR's status (its ``Ready`` condition) is written
through its ``status`` subresource: by the API server for the default one
(``default_service_cidr``) and by the ``service-cidr-controller``
(``kubegc.controllers.servicecidrs``), which also keeps the
``networking.k8s.io/service-cidr-finalizer`` on every ServiceCIDR. kubegc's Service
allocator does not create IPAddresses (README: "What kubegc does not simulate").
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kubegc.api.content import is_dns1123_subdomain, is_path_segment_name
from kubegc.api.errors import StatusCause, field_error
from kubegc.api.types import Obj
from kubegc.registry.validation.paths import immutable, items, value_at

#: the name of the ServiceCIDR the API server creates from its Service range
#: (pkg/controlplane/controller/defaultservicecidr ``DefaultServiceCIDRName``)
DEFAULT_SERVICE_CIDR_NAME = "kubernetes"
_CIDR_EXAMPLE = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
_CIDRS = "spec.cidrs"


def default_service_cidr(cidrs: list[str]) -> Obj:
    """The default ServiceCIDR (``defaultservicecidr.Controller.sync``'s create)."""
    return {"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR",
            "metadata": {"name": DEFAULT_SERVICE_CIDR_NAME}, "spec": {"cidrs": cidrs}}


def validate_cidr(path: str, value: Any) -> list[StatusCause]:
    """apimachinery's ``validation.IsValidCIDR``: parseable (Go's ``ParseCIDRSloppy``)
    and in canonical form."""
    if not isinstance(value, str) or not value:
        return [field_error("FieldValueRequired", path, "")]
    try:
        network = ipaddress.ip_network(value, strict=False)
    except ValueError:
        return [field_error("FieldValueInvalid", path, _CIDR_EXAMPLE, value)]
    canonical = f"{network.network_address}/{network.prefixlen}"
    if canonical != value:
        return [field_error("FieldValueInvalid", path,
                            f'must be in canonical form ("{canonical}")', value)]
    return []


def _spec_cidrs(obj: Obj) -> list[Any]:
    cidrs = value_at(obj, _CIDRS)
    return cidrs if isinstance(cidrs, list) else []


def validate_service_cidr(obj: Obj) -> list[StatusCause]:
    """``ValidateServiceCIDR``: one or two valid CIDRs, two only of different families."""
    cidrs = _spec_cidrs(obj)
    if not cidrs:
        return [field_error("FieldValueRequired", _CIDRS, "at least one CIDR required")]
    spec = value_at(obj, "spec")
    if len(cidrs) > 2:
        return [field_error("FieldValueInvalid", _CIDRS, "may only hold up to 2 values",
                            spec, go_type="networking.ServiceCIDRSpec")]
    causes = [c for path, cidr in items(obj, _CIDRS) for c in validate_cidr(path, cidr)]
    if len(cidrs) == 2 and not causes and _families(cidrs) != {4, 6}:
        causes.append(field_error(
            "FieldValueInvalid", _CIDRS, "may specify no more than one IP for each IP family, "
            "i.e 192.168.0.0/24 and 2001:db8::/64", spec, go_type="networking.ServiceCIDRSpec"))
    return causes


def _families(cidrs: list[Any]) -> set[int]:
    return {ipaddress.ip_network(str(c), strict=False).version for c in cidrs}


def validate_service_cidr_update(new: Obj, old: Obj) -> list[StatusCause]:
    """``ValidateServiceCIDRUpdate``: the CIDRs are immutable, except that a single-stack
    ServiceCIDR may gain a second CIDR of the other family (kubernetes#131261)."""
    new_cidrs, old_cidrs = _spec_cidrs(new), _spec_cidrs(old)
    if len(new_cidrs) == len(old_cidrs):
        return [field_error("FieldValueInvalid", f"{_CIDRS}[{i}]", "field is immutable", cidr)
                for i, (cidr, was) in enumerate(zip(new_cidrs, old_cidrs, strict=True))
                if cidr != was]
    if len(old_cidrs) == 1 and len(new_cidrs) == 2:
        causes = ([] if new_cidrs[0] == old_cidrs[0] else [field_error(
            "FieldValueInvalid", f"{_CIDRS}[0]", "field is immutable", new_cidrs[0])])
        return causes + validate_service_cidr(new)
    return [field_error("FieldValueInvalid", _CIDRS, "field is immutable", new_cidrs,
                        go_type="[]string")]


def validate_ip_address_name(name: str) -> list[str]:
    """``ValidateIPAddressName``: an IP address (netip's ``ParseAddr``) in canonical form."""
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return [f'ParseAddr("{name}"): unable to parse IP']
    return [] if str(address) == name else ["must be a canonical format IP address"]


def validate_ip_address(obj: Obj) -> list[StatusCause]:
    """``validateIPAddressParentReference``: a parentRef with a resource and a name."""
    ref = value_at(obj, "spec.parentRef")
    path = "spec.parentRef"
    if not isinstance(ref, dict):
        return [field_error("FieldValueRequired", path, "")]
    causes: list[StatusCause] = []
    group = ref.get("group")
    if isinstance(group, str) and group:  # the core group is "": not required
        causes += [field_error("FieldValueInvalid", f"{path}.group", msg, group)
                   for msg in is_dns1123_subdomain(group)]
    for key in ("resource", "name", "namespace"):
        value = ref.get(key)
        if not value and key != "namespace":
            causes.append(field_error("FieldValueRequired", f"{path}.{key}", ""))
        elif isinstance(value, str) and value:
            causes += [field_error("FieldValueInvalid", f"{path}.{key}", msg, value)
                       for msg in is_path_segment_name(value)]
    return causes


def validate_ip_address_update(new: Obj, old: Obj) -> list[StatusCause]:
    return immutable(new, old, "spec.parentRef", go_type="*networking.ParentReference")
