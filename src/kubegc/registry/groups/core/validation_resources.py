"""Resource names and the other map keys of pod specs, as ``pkg/apis/core/validation``
checks them: ``validateResourceName``, ``validateContainerResourceName`` (container
``limits``/``requests``), ``validateResourceQuotaResourceName`` (a quota's ``hard``),
``validateLimitRangeResourceName``, a node's taint keys (``validateNodeTaints``), Endpoints'
ports (``validateEndpointPort``), with the name sets of ``pkg/apis/core/helper``
(``IsStandardResourceName``, ``IsStandardContainerResourceName``,
``IsStandardQuotaResourceName``, ``IsNativeResource``, ``IsExtendedResourceName``); and
``ValidateEnv``'s variable names (``IsRelaxedEnvVarName``: the
``RelaxedEnvironmentVariableValidation`` gate is on by default since 1.32).
"""

from __future__ import annotations

from typing import Any

from kubegc.api.content import is_dns1123_label, is_qualified_name, is_valid_port_num
from kubegc.registry.validation.common import Causes, invalid, not_supported, required

STANDARD_CONTAINER_RESOURCES = frozenset(("cpu", "memory", "ephemeral-storage"))
_COUNTED = ("pods", "resourcequotas", "services", "replicationcontrollers", "secrets",
            "configmaps", "persistentvolumeclaims", "services.nodeports",
            "services.loadbalancers")
_COMPUTE = ("cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
            "requests.ephemeral-storage", "limits.cpu", "limits.memory",
            "limits.ephemeral-storage")
STANDARD_RESOURCES = frozenset((*_COMPUTE, *_COUNTED, "storage", "requests.storage"))
STANDARD_QUOTA_RESOURCES = frozenset((*_COMPUTE, *_COUNTED, "requests.storage"))
HUGE_PAGES = "hugepages-"
REQUESTS = "requests."
RELAXED_ENV_NAME = ("a valid environment variable name must consist only of printable "
                    "ASCII characters other than '='")


def _huge_pages(name: str) -> bool:
    return name.startswith(HUGE_PAGES)


def _quota_huge_pages(name: str) -> bool:
    return name.startswith((HUGE_PAGES, REQUESTS + HUGE_PAGES))


def _native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _extended(name: str) -> bool:
    return (not _native(name) and not name.startswith(REQUESTS)
            and not is_qualified_name(REQUESTS + name))


def validate_resource_name(name: str, path: str) -> Causes:
    """``validateResourceName``: qualified, and standard when it has no domain."""
    causes = [invalid(path, name, msg) for msg in is_qualified_name(name)]
    if causes:
        return causes
    if "/" not in name and not (name in STANDARD_RESOURCES or _quota_huge_pages(name)):
        return [invalid(path, name, "must be a standard resource type or fully qualified")]
    return []


def validate_container_resource_name(name: str, path: str) -> Causes:
    """``validateContainerResourceName``."""
    causes = validate_resource_name(name, path)
    if "/" not in name:
        if not (name in STANDARD_CONTAINER_RESOURCES or _huge_pages(name)):
            causes.append(invalid(path, name, "must be a standard resource for containers"))
    elif not _native(name) and not _extended(name):
        causes.append(invalid(path, name, "doesn't follow extended resource name standard"))
    return causes


def validate_quota_resource_name(name: str, path: str) -> Causes:
    """``ValidateResourceQuotaResourceName`` (``requests.example.com/gpu`` is one)."""
    causes = validate_resource_name(name, path)
    if "/" not in name and not (name in STANDARD_QUOTA_RESOURCES or _quota_huge_pages(name)):
        causes.append(invalid(path, name, "must be a standard resource for quota"))
    return causes


def validate_limit_range_resource_name(limit_type: str, name: str, path: str) -> Causes:
    """``validateLimitRangeResourceName``: a container's resource name for a ``Pod`` or
    ``Container`` limit, any resource name for the others."""
    if limit_type in ("Pod", "Container"):
        return validate_container_resource_name(name, path)
    return validate_resource_name(name, path)


def validate_qualified_key(key: Any, path: str) -> Causes:
    """``ValidateLabelName``: a key (a toleration's, a taint's) is a qualified name."""
    return [invalid(path, key, msg) for msg in is_qualified_name(str(key))]


def validate_topology_key(key: Any, path: str) -> Causes:
    """``validateTopologyKey``: required, and qualified (its messages joined by ";")."""
    if not key:
        return [required(path, "can not be empty")]
    messages = is_qualified_name(str(key))
    return [invalid(path, key, ";".join(messages))] if messages else []


def validate_env_names(env: Any, path: str) -> Causes:
    """``ValidateEnv``'s names: required, then ``IsRelaxedEnvVarName``."""
    causes: Causes = []
    for i, var in enumerate(env if isinstance(env, list) else []):
        name = var.get("name") if isinstance(var, dict) else None
        where = f"{path}[{i}].name"
        if not name:
            causes.append(required(where))
        elif any(ord(c) > 127 or not c.isprintable() or c == "=" for c in str(name)):
            causes.append(invalid(where, name, RELAXED_ENV_NAME))
    return causes


TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def validate_node(obj: dict[str, Any]) -> Causes:
    """``ValidateNode``'s taints (``validateNodeTaints``): a qualified key, a known effect."""
    spec = obj.get("spec")
    taints = spec.get("taints") if isinstance(spec, dict) else None
    causes: Causes = []
    for i, taint in enumerate(taints if isinstance(taints, list) else []):
        if not isinstance(taint, dict):
            continue
        where = f"spec.taints[{i}]"
        causes += validate_qualified_key(taint.get("key") or "", f"{where}.key")
        effect = taint.get("effect") or ""
        if not effect:
            causes.append(required(f"{where}.effect"))
        elif effect not in TAINT_EFFECTS:
            causes.append(not_supported(f"{where}.effect", effect, TAINT_EFFECTS))
    return causes


def validate_resource_quota(obj: dict[str, Any]) -> Causes:
    """``ValidateResourceQuotaSpec``'s resource names (``spec.hard``)."""
    spec = obj.get("spec")
    hard = spec.get("hard") if isinstance(spec, dict) else None
    causes: Causes = []
    for name in hard if isinstance(hard, dict) else {}:
        causes += validate_quota_resource_name(str(name), f"spec.hard[{name}]")
    return causes


ENDPOINT_PROTOCOLS = ("SCTP", "TCP", "UDP")  # sets.List: sorted


def validate_endpoints(obj: dict[str, Any]) -> Causes:
    """``ValidateEndpoints``' ports (``validateEndpointPort``): a DNS-1123 label name
    (required when a subset has several ports), a valid number, a known protocol."""
    causes: Causes = []
    subsets = obj.get("subsets")
    for i, subset in enumerate(subsets if isinstance(subsets, list) else []):
        ports = subset.get("ports") if isinstance(subset, dict) else None
        ports = ports if isinstance(ports, list) else []
        for j, port in enumerate(ports):
            if isinstance(port, dict):
                causes += _endpoint_port(port, f"subsets[{i}].ports[{j}]", len(ports) > 1)
    return causes


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
