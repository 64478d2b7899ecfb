"""Printers of the other core objects: Namespaces, Nodes, Services, Endpoints, ConfigMaps,
Secrets, ServiceAccounts, Leases, and CustomResourceDefinitions (``printNamespace``,
``printNode``, ``printService``, ... in printers.go; CRDs as apiextensions' default
convertor, Name and Created At).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubegc.registry.printers.helpers import (
    AGE,
    AGE_DESCRIPTION,
    NAME,
    Conditions,
    Obj,
    age,
    column,
    format_labels,
    lookup,
    name_and,
    object_meta,
    parse_timestamp,
)

NAMESPACE_COLUMN_DEFINITIONS = [NAME, column("Status", "The status of the namespace"), AGE]
NODE_COLUMN_DEFINITIONS = [
    NAME, column("Status", "The status of the node"), column("Roles", "The roles of the node"),
    AGE, column("Version", "Kubelet Version reported by the node."),
    column("Internal-IP", "List of addresses reachable to the node.", wide=True),
    column("External-IP", "List of addresses reachable to the node.", wide=True),
    column("OS-Image", "OS Image reported by the node from /etc/os-release (e.g. Debian"
           " GNU/Linux 7 (wheezy)).", wide=True),
    column("Kernel-Version", "Kernel Version reported by the node from 'uname -r' (e.g."
           " 3.16.0-0.bpo.4-amd64).", wide=True),
    column("Container-Runtime", "ContainerRuntime Version reported by the node through"
           " runtime remote API (e.g. containerd://1.4.2).", wide=True),
]
SERVICE_COLUMN_DEFINITIONS = [
    NAME, column("Type", "type determines how the Service is exposed."),
    column("Cluster-IP", "clusterIP is the IP address of the service and is usually"
           " assigned randomly."),
    column("External-IP", "externalIPs is a list of IP addresses for which nodes in the"
           " cluster will also accept traffic for this service."),
    column("Port(s)", "The list of ports that are exposed by this service."),
    AGE,
    column("Selector", "Route service traffic to pods with label keys and values matching"
           " this selector.", wide=True),
]
ENDPOINTS_COLUMN_DEFINITIONS = [
    NAME, column("Endpoints", "The set of all endpoints is the union of all subsets."), AGE,
]
CONFIG_MAP_COLUMN_DEFINITIONS = [NAME, column("Data", "Data contains the configuration data."), AGE]
SECRET_COLUMN_DEFINITIONS = [
    NAME, column("Type", "Used to facilitate programmatic handling of secret data."),
    column("Data", "Data contains the secret data."), AGE,
]
SERVICE_ACCOUNT_COLUMN_DEFINITIONS = [
    NAME, column("Secrets", "Secrets is a list of the secrets in the same namespace that"
                 " pods running using this ServiceAccount are allowed to use."), AGE,
]
LEASE_COLUMN_DEFINITIONS = [
    NAME, column("Holder", "holderIdentity contains the identity of the holder of a current"
                 " lease."), AGE,
]
CUSTOM_RESOURCE_DEFINITION_COLUMN_DEFINITIONS = [
    NAME, column("Created At", AGE_DESCRIPTION, "date"),
]


def print_namespace(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    return [object_meta(obj).get("name", ""), lookup(obj, "status", "phase") or "",
            age(obj, now)], []


def print_node(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    status = obj.get("status") or {}
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    shown = ["Unknown" if ready is None else (
        "Ready" if ready.get("status") == "True" else "NotReady")]
    if lookup(obj, "spec", "unschedulable"):
        shown.append("SchedulingDisabled")
    roles: set[str] = set()
    for key, value in (object_meta(obj).get("labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/") and len(key) > 24:
            roles.add(key[24:])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    info = status.get("nodeInfo") or {}
    addresses = status.get("addresses") or []

    def address(kind: str) -> str:
        return next((a.get("address", "") for a in addresses if a.get("type") == kind),
                    "<none>")

    return [object_meta(obj).get("name", ""), ",".join(shown), ",".join(sorted(roles)) or "<none>",
            age(obj, now), info.get("kubeletVersion", ""), address("InternalIP"),
            address("ExternalIP"), info.get("osImage") or "<unknown>",
            info.get("kernelVersion") or "<unknown>",
            info.get("containerRuntimeVersion") or "<unknown>"], []


def print_service(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec = obj.get("spec") or {}
    svc_type = spec.get("type") or "ClusterIP"
    cluster_ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    ports = ",".join(
        f"{p.get('port', 0)}:{p['nodePort']}/{p.get('protocol') or 'TCP'}" if p.get("nodePort")
        else f"{p.get('port', 0)}/{p.get('protocol') or 'TCP'}" for p in spec.get("ports") or [])
    return [object_meta(obj).get("name", ""), svc_type, cluster_ips[0] if cluster_ips else "<none>",
            _external_ip(obj, svc_type), ports or "<none>", age(obj, now),
            format_labels(spec.get("selector"))], []


def _external_ip(obj: Obj, svc_type: str) -> str:
    """``getServiceExternalIP`` with wide output (no clipping of load-balancer lists)."""
    external = list(lookup(obj, "spec", "externalIPs") or [])
    if svc_type in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if svc_type == "ExternalName":
        return str(lookup(obj, "spec", "externalName") or "")
    if svc_type == "LoadBalancer":
        ingress = lookup(obj, "status", "loadBalancer", "ingress") or []
        lb = sorted({i.get("ip") or i.get("hostname") for i in ingress
                     if i.get("ip") or i.get("hostname")})
        return ",".join(lb + external) or "<pending>"
    return "<unknown>"


def _endpoints_cell(obj: Obj) -> str:
    """``formatEndpoints``: the first three ``ip:port`` pairs, then ``+ N more...``."""
    subsets = obj.get("subsets") or []
    if not subsets:
        return "<none>"
    shown: list[str] = []
    count = 0
    for subset in subsets:
        ips = [a.get("ip", "") for a in subset.get("addresses") or []]
        ports = subset.get("ports") or []
        pairs = [[ip] for ip in ips] if not ports else [
            [f"[{ip}]:{p.get('port', 0)}" if ":" in ip else f"{ip}:{p.get('port', 0)}"
             for ip in ips] for p in ports]
        for group in pairs:
            count += len(group)
            shown.extend(group[:max(0, 3 - len(shown))])
    text = ",".join(shown)
    return f"{text} + {count - 3} more..." if count > 3 else text


print_config_map = name_and(lambda o: len(o.get("data") or {}) + len(
    o.get("binaryData") or {}))
print_secret = name_and(lambda o: o.get("type") or "", lambda o: len(o.get("data") or {}))
print_endpoints = name_and(_endpoints_cell)
print_service_account = name_and(lambda o: len(o.get("secrets") or []))
print_lease = name_and(lambda o: lookup(o, "spec", "holderIdentity") or "")


def print_custom_resource_definition(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    created = parse_timestamp(object_meta(obj).get("creationTimestamp"))
    text = created.strftime("%Y-%m-%dT%H:%M:%SZ") if created else "0001-01-01T00:00:00Z"
    return [object_meta(obj).get("name", ""), text], []
