"""Printers of Ingresses, IngressClasses, NetworkPolicies, EndpointSlices, ServiceCIDRs
and IPAddresses (``printIngress``, ``printIngressClass``, ``printNetworkPolicy``,
``printEndpointSlice``, ``printServiceCIDR``, ``printIPAddress``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubegc.registry.printers.helpers import (
    AGE,
    NAME,
    Conditions,
    Obj,
    age,
    column,
    format_label_selector,
    lookup,
    name_and,
    object_meta,
)

INGRESS_COLUMN_DEFINITIONS = [
    NAME, column("Class", "The name of the IngressClass resource that should be used for"
                 " additional configuration"),
    column("Hosts", "Hosts that incoming requests are matched against before the ingress"
           " rule"),
    column("Address", "Address is a list containing ingress points for the load-balancer"),
    column("Ports", "Ports of TLS configurations that open"), AGE,
]
INGRESS_CLASS_COLUMN_DEFINITIONS = [
    NAME, column("Controller", "Controller that is responsible for handling this class"),
    column("Parameters", "A reference to a resource with additional parameters"), AGE,
]
NETWORK_POLICY_COLUMN_DEFINITIONS = [
    NAME, column("Pod-Selector", "podSelector selects the pods to which this NetworkPolicy"
                 " object applies."), AGE,
]
ENDPOINT_SLICE_COLUMN_DEFINITIONS = [
    NAME, column("AddressType", "addressType specifies the type of address carried by this"
                 " EndpointSlice."),
    column("Ports", "ports specifies the list of network ports exposed by each endpoint in"
           " this slice."),
    column("Endpoints", "endpoints is a list of unique endpoints in this slice."), AGE,
]

SERVICE_CIDR_COLUMN_DEFINITIONS = [
    NAME, column("CIDRs", "CIDRs defines the IP blocks in CIDR notation (e.g. "
                 '"192.168.0.0/24" or "2001:db8::/64") from which to assign service cluster '
                 "IPs."), AGE,
]
IP_ADDRESS_COLUMN_DEFINITIONS = [
    NAME, column("ParentRef", "ParentRef references the resource that an IPAddress is "
                 "attached to."), AGE,
]


def _hosts(rules: list[Any]) -> str:
    """``formatHosts``: up to three hosts, ``*`` when none."""
    hosts: list[str] = []
    more = False
    for rule in rules:
        more = more or len(hosts) == 3
        if not more and isinstance(rule, dict) and rule.get("host"):
            hosts.append(str(rule["host"]))
    if not hosts:
        return "*"
    text = ",".join(hosts)
    return f"{text} + {len(rules) - 3} more..." if more else text


def _load_balancer(obj: Obj) -> str:
    """``ingressLoadBalancerStatusStringer`` (wide: not clipped)."""
    ingress = lookup(obj, "status", "loadBalancer", "ingress") or []
    return ",".join(sorted({str(i.get("ip") or i.get("hostname")) for i in ingress
                            if isinstance(i, dict) and (i.get("ip") or i.get("hostname"))}))


def print_ingress(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec = obj.get("spec") or {}
    return [object_meta(obj).get("name", ""), spec.get("ingressClassName") or "<none>",
            _hosts(spec.get("rules") or []), _load_balancer(obj),
            "80, 443" if spec.get("tls") else "80", age(obj, now)], []


def _parameters(obj: Obj) -> str:
    params = lookup(obj, "spec", "parameters")
    if not isinstance(params, dict):
        return "<none>"
    kind = str(params.get("kind", ""))
    if params.get("apiGroup") is not None:
        kind += "." + str(params["apiGroup"])
    return f"{kind}/{params.get('name', '')}"


print_ingress_class = name_and(lambda o: lookup(o, "spec", "controller") or "", _parameters)
print_network_policy = name_and(
    lambda o: format_label_selector(lookup(o, "spec", "podSelector") or {}))


def _list_with_more(items: list[str], count: int) -> str:
    """``listWithMoreString``: three items, ``+ N more...``, ``<unset>`` when none."""
    text = ",".join(items[:3])
    if count > 3:
        return f"{text} + {count - 3} more..."
    return text or "<unset>"


def _ports(obj: Obj) -> str:
    ports = [p for p in obj.get("ports") or [] if isinstance(p, dict)]
    names = [str(p["port"]) if p.get("port") is not None else str(p.get("name") or "*")
             for p in ports]
    return _list_with_more(names, len(names))


def _addresses(obj: Obj) -> str:
    addresses = [str(a) for e in obj.get("endpoints") or [] if isinstance(e, dict)
                 for a in e.get("addresses") or []]
    return _list_with_more(addresses, len(addresses))


print_endpoint_slice = name_and(lambda o: o.get("addressType") or "", _ports, _addresses)


def _cidrs(obj: Obj) -> str:
    return ",".join(str(c) for c in lookup(obj, "spec", "cidrs") or [])


def _parent_ref(obj: Obj) -> str:
    """``printIPAddress``: ``resource.group[/namespace]/name`` (lower case), ``<none>``."""
    ref = lookup(obj, "spec", "parentRef")
    if not isinstance(ref, dict):
        return "<none>"
    resource, group = str(ref.get("resource") or ""), str(ref.get("group") or "")
    text = (f"{resource}.{group}" if group else resource).lower()
    if ref.get("namespace"):
        text += f"/{ref['namespace']}"
    return f"{text}/{ref.get('name') or ''}"


print_service_cidr = name_and(_cidrs)
print_ip_address = name_and(_parent_ref)
