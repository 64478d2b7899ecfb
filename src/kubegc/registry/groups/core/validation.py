"""Validation of the core kinds beside pods (``pkg/apis/core/validation``): ConfigMaps and
Secrets (keys, the 1 MiB budget, ``immutable``, the secret types' required keys), Services,
Namespaces (their finalizers), ReplicationControllers, PersistentVolumes and their
claims, and Events.
"""

from __future__ import annotations

from typing import Any

from kubegc.api.content import (
    is_config_map_key,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_ip,
    is_valid_port_name,
    is_valid_port_num,
    non_special_ip,
)
from kubegc.api.errors import field_error
from kubegc.api.limits import MAX_CONFIG_MAP_SIZE, MAX_SECRET_SIZE
from kubegc.registry.groups.core.validation_pods import validate_pod_template
from kubegc.registry.validation.common import (
    Causes,
    forbidden,
    immutable,
    invalid,
    mapping,
    nonnegative,
    not_supported,
    one_of,
    required,
    validate_finalizer_name,
)
from kubegc.registry.validation.objectmeta import validate_labels

TOO_LONG = "may not be more than {} bytes"
IMMUTABLE_WHEN_SET = "field is immutable when `immutable` is set"


def _too_long(path: str, limit: int) -> Any:
    return field_error("FieldValueTooLong", path, TOO_LONG.format(limit))


def _keys(data: dict[str, Any], path: str) -> Causes:
    return [invalid(f"{path}[{key}]", key, msg)
            for key in data for msg in is_config_map_key(key)]


def validate_config_map(obj: dict[str, Any]) -> Causes:
    """``ValidateConfigMap``: keys, no key in both maps, at most 1 MiB of values."""
    data, binary = mapping(obj, "data"), mapping(obj, "binaryData")
    causes = _keys(data, "data")
    causes += [invalid(f"data[{key}]", key, "duplicate of key present in binaryData")
               for key in data if key in binary]
    causes += _keys(binary, "binaryData")
    size = sum(len(str(v).encode()) for v in data.values()) + sum(
        _decoded_size(v) for v in binary.values())
    if size > MAX_CONFIG_MAP_SIZE:  # the whole object: the root path, printed "[]"
        causes.append(_too_long("[]", MAX_CONFIG_MAP_SIZE))
    return causes


def _decoded_size(base64_text: Any) -> int:
    text = str(base64_text or "")
    return len(text) * 3 // 4 - text.count("=")


def _immutable_data(new: dict[str, Any], old: dict[str, Any], keys: tuple[str, ...]) -> Causes:
    if not old.get("immutable"):
        return []
    causes = [] if new.get("immutable") else [forbidden("immutable", IMMUTABLE_WHEN_SET)]
    return causes + [forbidden(key, IMMUTABLE_WHEN_SET) for key in keys
                     if (new.get(key) or {}) != (old.get(key) or {})]


def validate_config_map_update(new: dict[str, Any], old: dict[str, Any]) -> Causes:
    return validate_config_map(new) + _immutable_data(new, old, ("data", "binaryData"))


#: secret type → the data keys it requires (``ValidateSecret``)
_SECRET_KEYS = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}


def validate_secret(obj: dict[str, Any]) -> Causes:
    data = mapping(obj, "data")
    causes = _keys(data, "data")
    if sum(_decoded_size(v) for v in data.values()) > MAX_SECRET_SIZE:
        causes.append(_too_long("data", MAX_SECRET_SIZE))
    kind = obj.get("type") or ""
    if kind == "kubernetes.io/service-account-token":
        name = mapping(obj, "metadata", "annotations").get("kubernetes.io/service-account.name")
        if not name:
            causes.append(required(
                "metadata.annotations[kubernetes.io/service-account.name]"))
    elif kind == "kubernetes.io/basic-auth" and "username" not in data and "password" not in data:
        causes += [required("data[username]"), required("data[password]")]
    for key in _SECRET_KEYS.get(kind, ()):
        if key not in data:
            causes.append(required(f"data[{key}]"))
    return causes


def validate_secret_update(new: dict[str, Any], old: dict[str, Any]) -> Causes:
    causes = validate_secret(new) + immutable(new.get("type") or "", old.get("type") or "",
                                              "type")
    return causes + _immutable_data(new, old, ("data",))


def validate_namespace(obj: dict[str, Any]) -> Causes:
    """``ValidateNamespace``: each spec finalizer a qualified or a standard name."""
    causes: Causes = []
    for i, name in enumerate(mapping(obj, "spec").get("finalizers") or []):
        causes += validate_finalizer_name(name, f"spec.finalizers[{i}]")
    return causes


SERVICE_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")


def validate_service(obj: dict[str, Any]) -> Causes:
    spec = mapping(obj, "spec")
    kind = spec.get("type")
    causes = one_of(kind, "spec.type", SERVICE_TYPES)
    ports = spec.get("ports") or []
    if not ports and spec.get("clusterIP") != "None" and kind != "ExternalName":
        causes.append(required("spec.ports"))
    if kind == "ExternalName":
        causes += _external_name(str(spec.get("externalName") or ""))
    causes += _external_ips(spec.get("externalIPs"))
    names: set[str] = set()
    for i, port in enumerate(ports):
        causes += _service_port(port, f"spec.ports[{i}]", len(ports) > 1, names)
    causes += validate_labels(spec.get("selector"), "spec.selector")
    causes += one_of(spec.get("sessionAffinity"), "spec.sessionAffinity", ("ClientIP", "None"))
    return causes


def _external_name(name: str) -> Causes:
    """``ValidateService`` of an ExternalName Service: a DNS-1123 subdomain (a trailing dot
    allowed: a fully qualified CNAME)."""
    cname = name.removesuffix(".")
    if not cname:
        return [required("spec.externalName")]
    return [invalid("spec.externalName", cname, msg) for msg in is_dns1123_subdomain(cname)]


def _external_ips(ips: Any) -> Causes:
    """``ValidateService``'s external IPs: valid, and not special (``ValidateNonSpecialIP``)."""
    causes: Causes = []
    for i, ip in enumerate(ips if isinstance(ips, list) else []):
        path, text = f"spec.externalIPs[{i}]", str(ip)
        messages = is_valid_ip(text)
        causes += [invalid(path, text, msg) for msg in messages or non_special_ip(text)]
    return causes


def _service_port(port: dict[str, Any], path: str, named: bool, names: set[str]) -> Causes:
    causes: Causes = []
    name = port.get("name") or ""
    if named and not name:
        causes.append(required(f"{path}.name"))
    elif name:
        causes += [invalid(f"{path}.name", name, msg) for msg in is_dns1123_label(name)]
        if name in names:
            causes.append(field_error("FieldValueDuplicate", f"{path}.name", "", name))
        names.add(name)
    number = port.get("port") or 0
    causes += [invalid(f"{path}.port", number, msg) for msg in is_valid_port_num(number)]
    protocol = port.get("protocol")
    if protocol is not None and protocol not in ("SCTP", "TCP", "UDP"):
        causes.append(not_supported(f"{path}.protocol", protocol, ("SCTP", "TCP", "UDP")))
    target = port.get("targetPort")
    if isinstance(target, int) and target != 0:
        causes += [invalid(f"{path}.targetPort", target, msg) for msg in is_valid_port_num(target)]
    elif isinstance(target, str) and target:
        causes += [invalid(f"{path}.targetPort", target, msg)
                   for msg in is_valid_port_name(target)]
    return causes


def validate_replication_controller(obj: dict[str, Any]) -> Causes:
    """``ValidateReplicationControllerSpec``."""
    spec = mapping(obj, "spec")
    causes = nonnegative(spec.get("replicas"), "spec.replicas")
    causes += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    selector = spec.get("selector") or {}
    if not selector:
        causes.append(required("spec.selector"))
    causes += validate_labels(selector, "spec.selector")
    template = spec.get("template")
    if not isinstance(template, dict):
        return [*causes, required("spec.template")]
    labels = mapping(template, "metadata").get("labels") or {}
    if selector and any(labels.get(k) != v for k, v in selector.items()):
        causes.append(invalid("spec.template.metadata.labels", labels,
                              "`selector` does not match template `labels`"))
    causes += validate_pod_template(template, "spec.template")
    return causes + template_restart_always(template, "spec.template", "ReplicationController")


def template_restart_always(template: dict[str, Any], path: str, kind: str) -> Causes:
    """A controller's pods always restart, and run for ever (``ValidatePodTemplateSpecForRC``
    and its apps twins)."""
    spec = mapping(template, "spec")
    causes: Causes = []
    restart = spec.get("restartPolicy")
    if restart not in (None, "Always"):
        causes.append(not_supported(f"{path}.spec.restartPolicy", restart, ("Always",)))
    if spec.get("activeDeadlineSeconds") is not None:
        causes.append(forbidden(f"{path}.spec.activeDeadlineSeconds",
                                f"activeDeadlineSeconds in {kind} is not Supported"))
    return causes


def validate_event(obj: dict[str, Any]) -> Causes:
    """``legacyValidateEvent``: the involved object's namespace is the event's (an event about
    a cluster-scoped object lives in ``default`` or nowhere)."""
    namespace = mapping(obj, "metadata").get("namespace") or ""
    involved = mapping(obj, "involvedObject").get("namespace") or ""
    if (involved and involved != namespace) or (
            not involved and namespace not in ("", "default")):
        return [invalid("involvedObject.namespace", involved, "does not match event.namespace")]
    return []


EVENT_TYPES = ("Normal", "Warning")


def validate_events_v1_event(obj: dict[str, Any]) -> Causes:
    """``ValidateEventCreate`` of an ``events.k8s.io/v1`` Event: what a reporter must say."""
    causes: Causes = []
    if not obj.get("eventTime"):
        causes.append(required("eventTime"))
    kind = obj.get("type") or ""
    if kind not in EVENT_TYPES:
        causes.append(invalid("type", "", f"has invalid value: {kind}"))
    controller = obj.get("reportingController") or ""
    if not controller:
        causes.append(required("reportingController"))
    causes += [invalid("reportingController", controller, msg)
               for msg in is_qualified_name(controller)]
    for key in ("reportingInstance", "action", "reason"):
        if not obj.get(key):
            causes.append(required(key))
    return causes
