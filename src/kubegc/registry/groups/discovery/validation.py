"""EndpointSlice validation (``pkg/apis/discovery/validation``: ``ValidateEndpointSlice``):
the address type, each endpoint's addresses as that type reads them (an IPv4 or IPv6
address that is not a special one, or a fully qualified domain name), node name, hostname
and topology labels, and the ports' names, protocols and application protocols.
"""

from __future__ import annotations

from typing import Any

from kubegc.api.content import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    parse_ip_sloppy,
)
from kubegc.api.errors import field_error
from kubegc.api.types import Obj
from kubegc.registry.groups.core.validation_node import usable_ip
from kubegc.registry.validation.common import Causes, invalid, not_supported, required
from kubegc.registry.validation.objectmeta import validate_labels
from kubegc.registry.validation.paths import immutable

ADDRESS_TYPES = ("FQDN", "IPv4", "IPv6")  # sets.List: sorted
PROTOCOLS = ("SCTP", "TCP", "UDP")


def validate_endpoint_slice(obj: Obj) -> Causes:
    kind = obj.get("addressType") or ""
    causes: Causes = []
    if not kind:
        causes.append(required("addressType"))
    elif kind not in ADDRESS_TYPES:
        causes.append(not_supported("addressType", kind, ADDRESS_TYPES))
    causes += _ports(obj.get("ports"))
    for i, endpoint in _dicts(obj.get("endpoints")):
        causes += _endpoint(endpoint, f"endpoints[{i}]", str(kind))
    return causes


def validate_endpoint_slice_update(new: Obj, old: Obj) -> Causes:
    """``ValidateEndpointSliceUpdate``: unchanged endpoints are not validated again (they
    may hold addresses older rules let in); the address type is immutable."""
    causes = validate_endpoint_slice({**new, "endpoints": None}) if (
        new.get("endpoints") == old.get("endpoints")) else validate_endpoint_slice(new)
    return causes + immutable(new, old, "addressType")


def _dicts(value: Any) -> list[tuple[int, dict[str, Any]]]:
    items = value if isinstance(value, list) else []
    return [(i, item) for i, item in enumerate(items) if isinstance(item, dict)]


def _endpoint(endpoint: dict[str, Any], path: str, kind: str) -> Causes:
    addresses = endpoint.get("addresses")
    addresses = addresses if isinstance(addresses, list) else []
    causes: Causes = []
    if not addresses:
        causes.append(required(f"{path}.addresses", "must contain at least 1 address"))
    for j, address in enumerate(addresses):
        causes += _address(str(address), f"{path}.addresses[{j}]", kind)
    node = endpoint.get("nodeName")
    if node is not None:
        causes += [invalid(f"{path}.nodeName", node, msg)
                   for msg in is_dns1123_subdomain(str(node))]
    causes += validate_labels(endpoint.get("deprecatedTopology"), f"{path}.deprecatedTopology")
    hostname = endpoint.get("hostname")
    if hostname is not None:
        causes += [invalid(f"{path}.hostname", hostname, msg)
                   for msg in is_dns1123_label(str(hostname))]
    return causes


def _address(address: str, path: str, kind: str) -> Causes:
    """``IsValidIPv4Address`` / ``IsValidIPv6Address`` and ``ValidateNonSpecialIP``, or
    ``IsFullyQualifiedDomainName``; an unknown type's addresses are not read."""
    if kind in ("IPv4", "IPv6"):
        ip = parse_ip_sloppy(address)
        if ip is None or ip.version != int(kind[-1]):
            return [invalid(path, address, f"must be a valid {kind} address"),
                    *usable_ip(address, path)]
        return usable_ip(address, path)
    if kind == "FQDN":
        return _fqdn(address, path)
    return []


def _fqdn(name: str, path: str) -> Causes:
    """``IsFullyQualifiedDomainName``: a subdomain of at least two labels."""
    if not name:
        return [required(path)]
    name = name.removesuffix(".")
    messages = is_dns1123_subdomain(name)
    if messages:
        return [invalid(path, name, ",".join(messages))]
    labels = name.split(".")
    if len(labels) < 2:
        return [invalid(path, name, "should be a domain with at least two segments separated "
                                    "by dots")]
    for label in labels:
        messages = is_dns1123_label(label)
        if messages:
            return [invalid(path, label, ",".join(messages))]
    return []


def _ports(ports: Any) -> Causes:
    """``validatePorts``: names DNS labels and unique, a known protocol, a qualified
    application protocol."""
    causes: Causes = []
    names: set[str] = set()
    for i, port in _dicts(ports):
        path = f"ports[{i}]"
        name = str(port.get("name") or "")
        if name:
            causes += [invalid(f"{path}.name", name, msg) for msg in is_dns1123_label(name)]
        if name in names:
            causes.append(field_error("FieldValueDuplicate", f"{path}.name", "", name))
        names.add(name)
        protocol = port.get("protocol")
        if protocol is None:
            causes.append(required(f"{path}.protocol"))
        elif protocol not in PROTOCOLS:
            causes.append(not_supported(f"{path}.protocol", protocol, PROTOCOLS))
        app = port.get("appProtocol")
        if app is not None:
            causes += [invalid(f"{path}.appProtocol", app, msg)
                       for msg in is_qualified_name(str(app))]
    return causes
