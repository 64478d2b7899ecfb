"""Validation of Nodes and Endpoints (``pkg/apis/core/validation``): a node's taints
(``validateNodeTaints``) and resources (``ValidateNodeResources``), Endpoints' addresses
(``validateEndpointAddress``, ``ValidateNonSpecialIP``) and ports (``validateEndpointPort``).
"""

from __future__ import annotations

from typing import Any

from kubegc.api.content import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_valid_cidr,
    is_valid_ip,
    is_valid_label_value,
    is_valid_port_num,
    non_special_ip,
    parse_cidr_sloppy,
)
from kubegc.api.errors import field_error
from kubegc.registry.groups.core.validation_resources import (
    validate_qualified_key,
    validate_resource_quantity,
)
from kubegc.registry.validation.common import (
    Causes,
    forbidden,
    invalid,
    mapping,
    not_supported,
    required,
)

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
UNIQUE_TAINTS = "taints must be unique by key and effect pair"


def validate_node(obj: dict[str, Any]) -> Causes:
    """``ValidateNode`` / ``ValidateNodeUpdate``: the taints, then the status' capacity and
    allocatable quantities. Upstream names the taints' path under ``metadata``
    (``fldPath.Child("taints")`` of the metadata path), and so does kubegc."""
    causes = _taints(mapping(obj, "spec").get("taints"))
    causes += _pod_cidrs(mapping(obj, "spec").get("podCIDRs"))
    for part in ("capacity", "allocatable"):
        for name, quantity in mapping(obj, "status", part).items():
            # field.NewPath("status", part, name): a child, not a key
            causes += validate_resource_quantity(str(name), quantity, f"status.{part}.{name}")
    return causes


def validate_node_update(new: dict[str, Any], old: dict[str, Any]) -> Causes:
    """``ValidateNodeUpdate``: a pod CIDR and a provider ID, once set, stay."""
    causes = validate_node(new)
    old_cidrs = mapping(old, "spec").get("podCIDRs") or []
    if old_cidrs and (mapping(new, "spec").get("podCIDRs") or []) != old_cidrs:
        causes.append(forbidden("spec.podCIDRs", 'node updates may not change podCIDR except '
                                                 'from "" to valid'))
    old_id = mapping(old, "spec").get("providerID") or ""
    if old_id and mapping(new, "spec").get("providerID") != old_id:
        causes.append(forbidden("spec.providerID", 'node updates may not change providerID '
                                                   'except from "" to valid'))
    return causes


def _pod_cidrs(cidrs: Any) -> Causes:
    """``ValidateNode``'s pod CIDRs: valid, one per IP family, none twice."""
    cidrs = [str(c) for c in cidrs] if isinstance(cidrs, list) else []
    causes: Causes = []
    families = []
    for i, cidr in enumerate(cidrs):
        causes += [invalid(f"spec.podCIDRs[{i}]", cidr, msg) for msg in is_valid_cidr(cidr)]
        network = parse_cidr_sloppy(cidr)
        families.append(network.version if network is not None else 0)
    if len(cidrs) > 1 and (len(cidrs) > 2 or set(families) != {4, 6}) and not causes:
        causes.append(invalid("spec.podCIDRs", cidrs, "may specify no more than one CIDR for "
                                                      "each IP family", "[]string"))
    if len(cidrs) > 1:
        causes += [field_error("FieldValueDuplicate", f"spec.podCIDRs[{i}]", "", cidr)
                   for i, cidr in enumerate(cidrs) if cidr in cidrs[:i]]
    return causes


def _taints(taints: Any) -> Causes:
    causes: Causes = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints if isinstance(taints, list) else []):
        if not isinstance(taint, dict):
            continue
        where = f"metadata.taints[{i}]"
        key, value = str(taint.get("key") or ""), str(taint.get("value") or "")
        effect = str(taint.get("effect") or "")
        causes += validate_qualified_key(key, f"{where}.key")
        messages = is_valid_label_value(value)
        if messages:
            causes.append(invalid(f"{where}.value", value, ";".join(messages)))
        if not effect:
            causes.append(required(f"{where}.effect"))
        elif effect not in TAINT_EFFECTS:
            causes.append(not_supported(f"{where}.effect", effect, TAINT_EFFECTS))
        if (key, effect) in seen:
            causes.append(field_error("FieldValueDuplicate", where, UNIQUE_TAINTS, taint,
                                      go_type="core.Taint"))
        seen.add((key, effect))
    return causes


ENDPOINT_PROTOCOLS = ("SCTP", "TCP", "UDP")  # sets.List: sorted


def validate_endpoints(obj: dict[str, Any]) -> Causes:
    """``validateEndpointSubsets``: each subset has addresses (ready or not), each address
    a usable IP, each port valid."""
    causes: Causes = []
    subsets = obj.get("subsets")
    for i, subset in enumerate(subsets if isinstance(subsets, list) else []):
        if not isinstance(subset, dict):
            continue
        where = f"subsets[{i}]"
        addresses, not_ready = _dicts(subset.get("addresses")), _dicts(
            subset.get("notReadyAddresses"))
        if not addresses and not not_ready:
            causes.append(required(where, "must specify `addresses` or `notReadyAddresses`"))
        for j, address in addresses:
            causes += _endpoint_address(address, f"{where}.addresses[{j}]")
        for j, address in not_ready:
            causes += _endpoint_address(address, f"{where}.notReadyAddresses[{j}]")
        ports = _dicts(subset.get("ports"))
        for j, port in ports:
            causes += _endpoint_port(port, f"{where}.ports[{j}]", len(ports) > 1)
    return causes


def _dicts(value: Any) -> list[tuple[int, dict[str, Any]]]:
    items = value if isinstance(value, list) else []
    return [(i, item) for i, item in enumerate(items) if isinstance(item, dict)]


def _endpoint_address(address: dict[str, Any], path: str) -> Causes:
    """``validateEndpointAddress``. One deliberate difference: a loopback address is
    allowed (upstream's ``ValidateNonSpecialIP`` refuses it), so that a Service can send
    kubegc to a process on the same machine — a webhook or an aggregated API server under
    test (README, "What kubegc does not simulate")."""
    ip = str(address.get("ip") or "")
    causes = [invalid(f"{path}.ip", ip, msg) for msg in is_valid_ip(ip)]
    hostname = str(address.get("hostname") or "")
    if hostname:
        causes += [invalid(f"{path}.hostname", hostname, msg)
                   for msg in is_dns1123_label(hostname)]
    node = address.get("nodeName")
    if node is not None:
        causes += [invalid(f"{path}.nodeName", node, msg)
                   for msg in is_dns1123_subdomain(str(node))]
    return causes + usable_ip(ip, f"{path}.ip")


LOOPBACK = "may not be in the loopback range"


def usable_ip(ip: str, path: str) -> Causes:
    """``ValidateNonSpecialIP`` of an Endpoints or EndpointSlice address, loopback allowed
    (see ``_endpoint_address``)."""
    return [invalid(path, ip, msg) for msg in non_special_ip(ip) if not msg.startswith(LOOPBACK)]


def _endpoint_port(port: dict[str, Any], path: str, require_name: bool) -> Causes:
    name = port.get("name") or ""
    causes: Causes = []
    if require_name and not name:
        causes.append(required(f"{path}.name"))
    elif name:
        causes += [invalid(f"{path}.name", name, msg) for msg in is_dns1123_label(str(name))]
    number = port.get("port") or 0
    if isinstance(number, int):
        causes += [invalid(f"{path}.port", number, msg) for msg in is_valid_port_num(number)]
    protocol = port.get("protocol") or ""
    if not protocol:
        causes.append(required(f"{path}.protocol"))
    elif protocol not in ENDPOINT_PROTOCOLS:
        causes.append(not_supported(f"{path}.protocol", protocol, ENDPOINT_PROTOCOLS))
    return causes
