"""The references and small lists of a pod spec (``pkg/apis/core/validation``): containers'
volume mounts (``ValidateVolumeMounts``, their sub-paths ``validateLocalDescendingPath``),
environment sources (``ValidateEnvFrom``, the key
selectors of ``validateEnvVarValueFrom``), and the pod's class names, readiness and
scheduling gates (``validateReadinessGates``, ``validateSchedulingGates``) and DNS config
(``validatePodDNSConfig``).
"""

from __future__ import annotations

from typing import Any

from kubegc.api.content import (
    is_config_map_key,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_ip,
)
from kubegc.api.errors import field_error
from kubegc.registry.groups.core.validation_resources import (
    RELAXED_ENV_NAME,
    is_relaxed_env_var_name,
)
from kubegc.registry.validation.common import Causes, invalid, mapping, required

MAX_NAMESERVERS = 3


def _dicts(value: Any) -> list[tuple[int, dict[str, Any]]]:
    items = value if isinstance(value, list) else []
    return [(i, item) for i, item in enumerate(items) if isinstance(item, dict)]


def valid_volume_names(volumes: Any) -> set[str]:
    """The volumes ``ValidateVolumes`` keeps: a unique DNS-1123 label name and one source
    (a mount of any other volume is ``Not found``)."""
    names: set[str] = set()
    for _, volume in _dicts(volumes):
        name = str(volume.get("name") or "")
        sources = [k for k, v in volume.items() if k != "name" and v is not None]
        if name and name not in names and not is_dns1123_label(name) and len(sources) == 1:
            names.add(name)
    return names


def validate_volume_mounts(mounts: Any, volumes: set[str], path: str) -> Causes:
    """``ValidateVolumeMounts``: a name that is a volume's, a mount path, unique."""
    causes: Causes = []
    paths: set[str] = set()
    for i, mount in _dicts(mounts):
        where = f"{path}[{i}]"
        name, mount_path = str(mount.get("name") or ""), str(mount.get("mountPath") or "")
        if not name:
            causes.append(required(f"{where}.name"))
        if name not in volumes:
            causes.append(field_error("FieldValueNotFound", f"{where}.name", "", name))
        if not mount_path:
            causes.append(required(f"{where}.mountPath"))
        if mount_path in paths:
            causes.append(invalid(f"{where}.mountPath", mount_path, "must be unique"))
        paths.add(mount_path)
        causes += _sub_paths(mount, where, path)
    return causes


def _sub_paths(mount: dict[str, Any], where: str, path: str) -> Causes:
    """``ValidateVolumeMounts``' ``subPath`` and ``subPathExpr``: local descending paths,
    not both. Upstream reports a bad path under the list's path, without the index
    (``fldPath.Child("subPath")``), and the conflict under the mount's."""
    sub_path, expr = str(mount.get("subPath") or ""), str(mount.get("subPathExpr") or "")
    causes = validate_local_descending_path(sub_path, f"{path}.subPath") if sub_path else []
    if expr:
        if sub_path:
            causes.append(invalid(f"{where}.subPathExpr", expr,
                                  "subPathExpr and subPath are mutually exclusive"))
        causes += validate_local_descending_path(expr, f"{path}.subPathExpr")
    return causes


def validate_local_descending_path(target: str, path: str) -> Causes:
    """``validateLocalDescendingPath``: relative, and no ``..`` element
    (``validatePathNoBacksteps``)."""
    causes = [invalid(path, target, "must be a relative path")] if target.startswith("/") else []
    if ".." in target.split("/"):
        causes.append(invalid(path, target, "must not contain '..'"))
    return causes


def validate_env_sources(container: dict[str, Any], path: str) -> Causes:
    """``ValidateEnvFrom``'s prefixes and the keys ``env[].valueFrom`` selects."""
    causes: Causes = []
    for i, source in _dicts(container.get("envFrom")):
        prefix = str(source.get("prefix") or "")
        if prefix and not is_relaxed_env_var_name(prefix):
            causes.append(invalid(f"{path}.envFrom[{i}].prefix", prefix, RELAXED_ENV_NAME))
    for i, var in _dicts(container.get("env")):
        value_from = mapping(var, "valueFrom")
        for ref in ("configMapKeyRef", "secretKeyRef"):
            if isinstance(value_from.get(ref), dict):
                causes += _key_selector(value_from[ref], f"{path}.env[{i}].valueFrom.{ref}")
    return causes


def _key_selector(selector: dict[str, Any], path: str) -> Causes:
    """``validateConfigMapKeySelector`` / ``validateSecretKeySelector``."""
    name, key = str(selector.get("name") or ""), str(selector.get("key") or "")
    causes = [invalid(f"{path}.name", name, msg) for msg in is_dns1123_subdomain(name)]
    if not key:
        return [*causes, required(f"{path}.key")]
    return causes + [invalid(f"{path}.key", key, msg) for msg in is_config_map_key(key)]


def validate_pod_references(spec: dict[str, Any], path: str) -> Causes:
    """The class names (DNS-1123 subdomains), readiness and scheduling gates, DNS config."""
    causes: Causes = []
    for key in ("priorityClassName", "runtimeClassName"):
        value = spec.get(key)
        if value:
            causes += [invalid(f"{path}.{key}", value, msg)
                       for msg in is_dns1123_subdomain(str(value))]
    for i, gate in _dicts(spec.get("readinessGates")):
        kind = str(gate.get("conditionType") or "")
        causes += [invalid(f"{path}.readinessGates[{i}].conditionType", kind, msg)
                   for msg in is_qualified_name(kind)]
    seen: set[str] = set()
    for i, gate in _dicts(spec.get("schedulingGates")):
        name = str(gate.get("name") or "")
        causes += [invalid(f"{path}.schedulingGates[{i}].name", name, msg)
                   for msg in is_qualified_name(name)]
        if name in seen:
            causes.append(field_error("FieldValueDuplicate", f"{path}.schedulingGates[{i}]", "",
                                      name))
        seen.add(name)
    return causes + _dns_config(spec, f"{path}.dnsConfig")


def _dns_config(spec: dict[str, Any], path: str) -> Causes:
    """``validatePodDNSConfig``: ``None`` needs a config with a nameserver; nameservers are
    IPs, three at most."""
    config = spec.get("dnsConfig")
    if spec.get("dnsPolicy") == "None" and not isinstance(config, dict):
        return [required(path, "must provide `dnsConfig` when `dnsPolicy` is None")]
    if not isinstance(config, dict):
        return []
    servers = config.get("nameservers")
    servers = servers if isinstance(servers, list) else []
    causes: Causes = []
    if spec.get("dnsPolicy") == "None" and not servers:
        causes.append(required(f"{path}.nameservers", "must provide at least one DNS "
                                                      "nameserver when `dnsPolicy` is None"))
    if len(servers) > MAX_NAMESERVERS:
        causes.append(invalid(f"{path}.nameservers", servers, f"must not have more than "
                                                             f"{MAX_NAMESERVERS} nameservers",
                              "[]string"))
    for i, server in enumerate(servers):
        causes += [invalid(f"{path}.nameservers[{i}]", server, msg)
                   for msg in is_valid_ip(str(server))]
    return causes
