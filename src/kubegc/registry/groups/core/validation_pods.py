"""Pod and pod template validation (``pkg/apis/core/validation``: ``ValidatePodSpec``,
``validateContainers``, ``ValidatePodTemplateSpec``), for the fields the kubelet simulator,
the scheduler and the workload controllers read: containers (names, images, ports,
policies, resource names and quantities, environment variable names), volumes' names and
sources, restart and DNS policies, ``activeDeadlineSeconds``, node and service account
names, the keys of ``nodeSelector``, tolerations and topology spread constraints, affinity
(``validation_affinity``), host aliases (``ValidateHostAliases``), sysctls
(``validateSysctls``) and the pod's ``overhead`` (``validateOverhead``); probes and hooks are
``validation_probes``', security contexts ``validation_security``'.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from kubegc.api.content import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_valid_ip,
    is_valid_port_name,
    is_valid_port_num,
)
from kubegc.api.errors import field_error
from kubegc.api.memo import Memo
from kubegc.registry.groups.core.validation_affinity import validate_affinity
from kubegc.registry.groups.core.validation_podspec import (
    valid_volume_names,
    validate_env_sources,
    validate_pod_references,
    validate_volume_mounts,
)
from kubegc.registry.groups.core.validation_probes import validate_container_hooks
from kubegc.registry.groups.core.validation_resources import (
    validate_env_names,
    validate_qualified_key,
    validate_resource_requirements,
    validate_topology_key,
)
from kubegc.registry.groups.core.validation_security import (
    validate_container_security_context,
    validate_pod_security_context,
)
from kubegc.registry.validation.common import (
    Causes,
    in_range,
    invalid,
    mapping,
    not_supported,
    one_of,
    required,
)
from kubegc.registry.validation.objectmeta import validate_annotations, validate_labels

RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
PROTOCOLS = ("SCTP", "TCP", "UDP")
TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
MAX_INT32 = 2 ** 31 - 1


#: pod specs found valid, by path and JSON: the Pods of one template are checked once
_valid = Memo()


def validate_pod_spec(spec: Any, path: str) -> Causes:
    if not isinstance(spec, dict):
        return [required(f"{path}.containers")]
    try:
        key = (path, orjson.dumps(spec))
    except TypeError:
        return _validate_pod_spec(spec, path)
    if _valid.get(key) is not None:
        return []
    causes = _validate_pod_spec(spec, path)
    if not causes:
        _valid.put(key, b"")
    return causes


def _validate_pod_spec(spec: dict[str, Any], path: str) -> Causes:
    seen: set[str] = set()
    volumes = valid_volume_names(spec.get("volumes"))
    causes = _containers(spec.get("initContainers") or [], f"{path}.initContainers", seen,
                         volumes, spec, init=True)
    causes += _containers(spec.get("containers") or [], f"{path}.containers", seen, volumes,
                          spec)
    causes += validate_pod_references(spec, path)
    causes += _volumes(spec.get("volumes") or [], f"{path}.volumes")
    causes += validate_labels(spec.get("nodeSelector"), f"{path}.nodeSelector")
    causes += _scheduling_keys(spec, path)
    causes += _host_aliases(spec.get("hostAliases"), f"{path}.hostAliases")
    causes += validate_pod_security_context(spec, f"{path}.securityContext")
    causes += _sysctls(mapping(spec, "securityContext").get("sysctls"),
                       f"{path}.securityContext.sysctls")
    if isinstance(spec.get("overhead"), dict):  # validateOverhead: the overhead as limits
        causes += validate_resource_requirements({"limits": spec["overhead"]},
                                                 f"{path}.overhead")
    causes += validate_affinity(spec.get("affinity"), f"{path}.affinity")
    restart = spec.get("restartPolicy")
    if restart is not None:
        causes += one_of(restart, f"{path}.restartPolicy", RESTART_POLICIES, allow_empty=False)
    causes += one_of(spec.get("dnsPolicy"), f"{path}.dnsPolicy", DNS_POLICIES)
    causes += in_range(spec.get("activeDeadlineSeconds"), f"{path}.activeDeadlineSeconds",
                       1, MAX_INT32)
    for key, check in (("nodeName", is_dns1123_subdomain),
                       ("serviceAccountName", is_dns1123_subdomain),
                       ("hostname", is_dns1123_label), ("subdomain", is_dns1123_label)):
        value = spec.get(key)
        if value:
            causes += [invalid(f"{path}.{key}", value, msg) for msg in check(value)]
    return causes


def _scheduling_keys(spec: dict[str, Any], path: str) -> Causes:
    """The keys of tolerations (``ValidateTolerations``) and topology spread constraints
    (``validateTopologyKey``)."""
    causes: Causes = []
    for i, toleration in _items(spec.get("tolerations")):
        if toleration.get("key"):
            causes += validate_qualified_key(toleration["key"], f"{path}.tolerations[{i}].key")
    for i, constraint in _items(spec.get("topologySpreadConstraints")):
        causes += validate_topology_key(constraint.get("topologyKey"),
                                        f"{path}.topologySpreadConstraints[{i}].topologyKey")
    return causes


def _host_aliases(aliases: Any, path: str) -> Causes:
    """``ValidateHostAliases``: each IP valid, each hostname a DNS-1123 subdomain."""
    causes: Causes = []
    for i, alias in _items(aliases):
        ip = str(alias.get("ip") or "")
        causes += [invalid(f"{path}[{i}].ip", ip, msg) for msg in is_valid_ip(ip)]
        hostnames = alias.get("hostnames")
        for j, name in enumerate(hostnames if isinstance(hostnames, list) else []):
            causes += [invalid(f"{path}[{i}].hostnames[{j}]", name, msg)
                       for msg in is_dns1123_subdomain(str(name))]
    return causes


SYSCTL_MAX_LENGTH = 253
SYSCTL_FMT = r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"
_SYSCTL = re.compile(SYSCTL_FMT)
SYSCTL_MSG = f"must have at most {SYSCTL_MAX_LENGTH} characters and match regex {SYSCTL_FMT}"


def _sysctls(sysctls: Any, path: str) -> Causes:
    """``validateSysctls``: each name given, valid (``IsValidSysctlName``), and once."""
    causes: Causes = []
    seen: set[str] = set()
    for i, sysctl in _items(sysctls):
        name, where = str(sysctl.get("name") or ""), f"{path}[{i}].name"
        if not name:
            causes.append(required(where))
        elif len(name) > SYSCTL_MAX_LENGTH or not _SYSCTL.match(name):
            causes.append(invalid(where, name, SYSCTL_MSG))
        elif name in seen:
            causes.append(field_error("FieldValueDuplicate", where, "", name))
        seen.add(name)
    return causes


def _items(value: Any) -> list[tuple[int, dict[str, Any]]]:
    """The (index, map) items of a list (what is not a map is the decoder's to refuse)."""
    if not isinstance(value, list):
        return []
    return [(i, item) for i, item in enumerate(value) if isinstance(item, dict)]


def _containers(containers: list[Any], path: str, seen: set[str], volumes: set[str],
                spec: dict[str, Any], *, init: bool = False) -> Causes:
    """``validateContainers`` / ``validateInitContainers`` (``spec``: the pod's, for its
    grace period and ``hostUsers``)."""
    if not containers:
        return [] if init else [required(path)]
    grace, host_users = spec.get("terminationGracePeriodSeconds"), spec.get("hostUsers")
    causes: Causes = []
    for i, container in enumerate(containers):
        item = f"{path}[{i}]"
        causes += unique_label(container.get("name") or "", f"{item}.name", seen)
        if not container.get("image"):
            causes.append(required(f"{item}.image"))
        causes += one_of(container.get("imagePullPolicy"), f"{item}.imagePullPolicy",
                         PULL_POLICIES)
        causes += one_of(container.get("terminationMessagePolicy"),
                         f"{item}.terminationMessagePolicy", TERMINATION_MESSAGE_POLICIES)
        causes += _ports(container.get("ports") or [], f"{item}.ports")
        causes += validate_env_names(container.get("env"), f"{item}.env")
        causes += validate_env_sources(container, item)
        causes += validate_volume_mounts(container.get("volumeMounts"), volumes,
                                         f"{item}.volumeMounts")
        causes += validate_resource_requirements(mapping(container, "resources"),
                                                 f"{item}.resources")
        causes += validate_container_hooks(container, grace, item, init=init)
        causes += validate_container_security_context(container.get("securityContext"),
                                                      host_users is not False,
                                                      f"{item}.securityContext")
    return causes


def unique_label(name: str, path: str, seen: set[str]) -> Causes:
    """A required DNS-1123 label, unique among ``seen`` (which it joins): container and
    volume names."""
    if not name:
        return [required(path)]
    if name in seen:
        return [field_error("FieldValueDuplicate", path, "", name)]
    seen.add(name)
    return [invalid(path, name, msg) for msg in is_dns1123_label(name)]


def _ports(ports: list[Any], path: str) -> Causes:
    """``validateContainerPorts``: names valid and unique, numbers in range, protocols."""
    causes: Causes = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        item = f"{path}[{i}]"
        name = port.get("name")
        if name:
            messages = is_valid_port_name(name)
            causes += [invalid(f"{item}.name", name, msg) for msg in messages]
            if not messages and name in names:
                causes.append(field_error("FieldValueDuplicate", f"{item}.name", "", name))
            names.add(name)
        number = port.get("containerPort") or 0
        if number == 0:
            causes.append(required(f"{item}.containerPort"))
        else:
            causes += [invalid(f"{item}.containerPort", number, msg)
                       for msg in is_valid_port_num(number)]
        host = port.get("hostPort") or 0
        if host:
            causes += [invalid(f"{item}.hostPort", host, msg) for msg in is_valid_port_num(host)]
        protocol = port.get("protocol")
        if protocol is not None and protocol not in PROTOCOLS:
            causes.append(required(f"{item}.protocol") if protocol == "" else
                          not_supported(f"{item}.protocol", protocol, PROTOCOLS))
    return causes


#: the keys of a volume that are not its source
_VOLUME_META = frozenset(("name",))


def _volumes(volumes: list[Any], path: str) -> Causes:
    causes: Causes = []
    seen: set[str] = set()
    for i, volume in enumerate(volumes):
        item = f"{path}[{i}]"
        causes += unique_label(volume.get("name") or "", f"{item}.name", seen)
        sources = [k for k, v in volume.items() if k not in _VOLUME_META and v is not None]
        if not sources:
            causes.append(required(item, "must specify a volume type"))
        elif len(sources) > 1:
            causes.append(field_error("FieldValueForbidden", f"{item}.{sources[1]}",
                                      "may not specify more than 1 volume type"))
    return causes


def validate_pod_template(template: Any, path: str) -> Causes:
    """``ValidatePodTemplateSpec``: the template's labels and annotations, then its spec."""
    if not isinstance(template, dict):
        return [required(path)]
    meta = mapping(template, "metadata")
    causes = validate_labels(meta.get("labels"), f"{path}.metadata.labels")
    causes += validate_annotations(meta.get("annotations"), f"{path}.metadata.annotations")
    return causes + validate_pod_spec(template.get("spec"), f"{path}.spec")


def validate_pod(obj: dict[str, Any]) -> Causes:
    return validate_pod_spec(obj.get("spec"), "spec")


def validate_pod_template_object(obj: dict[str, Any]) -> Causes:
    """``ValidatePodTemplate``: a PodTemplate's ``template``."""
    return validate_pod_template(obj.get("template"), "template")
