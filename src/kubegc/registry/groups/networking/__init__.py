"""Ingresses, IngressClasses, NetworkPolicies, ServiceCIDRs and IPAddresses (cf.
pkg/registry/networking and pkg/apis/networking/{v1/defaults.go,validation}).

Stored only: no ingress controller routes traffic or writes ``status.loadBalancer``, and
no network plugin enforces a policy. ServiceCIDRs and IPAddresses (1.33+,
``servicecidr``) are served only at the versions ``kubegc.api.lifecycle`` says.
"""

from __future__ import annotations

from typing import Any

from kubegc.api.errors import StatusCause, field_error
from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext, stored
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.groups.networking import servicecidr
from kubegc.registry.validation.paths import (
    empty_status,
    immutable,
    items,
    one_of,
    required,
    value_at,
)

_PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
_POLICY_TYPES = ("Egress", "Ingress")


def prepare_ingress_create(obj: Obj) -> None:
    """``PrepareForCreate``: no status from a create; the empty struct's JSON."""
    obj["status"] = {"loadBalancer": {}}


def validate_ingress(obj: Obj) -> list[StatusCause]:
    """``ValidateIngressSpec``: a default backend or rules; every path's type and backend."""
    spec = obj.get("spec") or {}
    causes: list[StatusCause] = []
    if not spec.get("rules") and spec.get("defaultBackend") is None:
        causes.append(field_error("FieldValueInvalid", "spec",
                                  "either `defaultBackend` or `rules` must be specified",
                                  None, go_type="[]networking.IngressRule"))
    if spec.get("defaultBackend") is not None:
        causes += _validate_backend(spec["defaultBackend"], "spec.defaultBackend")
    for rule_path, rule in items(obj, "spec.rules"):
        for path, http_path in items(rule, "http.paths"):
            path = f"{rule_path}.{path}"
            causes += _validate_http_path(http_path, path)
    return causes


def _validate_http_path(http_path: Any, path: str) -> list[StatusCause]:
    if not isinstance(http_path, dict):
        return []
    causes: list[StatusCause] = []
    path_type = http_path.get("pathType")
    if path_type is None:
        causes += required(http_path, "pathType", detail="pathType must be specified", at=path)
    else:
        causes += one_of(http_path, "pathType", _PATH_TYPES, at=path)
        value = http_path.get("path")
        if path_type in ("Exact", "Prefix") and not str(value or "").startswith("/"):
            causes.append(field_error("FieldValueInvalid", f"{path}.path",
                                      "must be an absolute path", value or ""))
    return causes + _validate_backend(http_path.get("backend"), f"{path}.backend")


def _validate_backend(backend: Any, path: str) -> list[StatusCause]:
    """``validateIngressBackend``: a service (with a port name or number) or a resource."""
    if not isinstance(backend, dict) or (backend.get("service") is None
                                         and backend.get("resource") is None):
        return [field_error("FieldValueInvalid", path,
                            "one backend (service or resource) must be specified", "")]
    if backend.get("service") is not None and backend.get("resource") is not None:
        return [field_error("FieldValueInvalid", path,
                            "cannot set both resource and service backends", "")]
    service = backend.get("service")
    if service is None:
        return required(backend, "resource.kind", "resource.name", at=path)
    causes = required(service, "name", at=f"{path}.service")
    port = service.get("port") if isinstance(service.get("port"), dict) else {}
    if port.get("name") and port.get("number"):
        causes.append(field_error("FieldValueInvalid", path,
                                  "cannot set both port name & port number", ""))
    elif not port.get("name") and not port.get("number"):
        causes.append(field_error("FieldValueRequired", path,
                                  "port name or number is required"))
    return causes


def validate_ingress_class(obj: Obj) -> list[StatusCause]:
    """``validateIngressClassSpec``: the controller is a domain-prefixed path."""
    controller = str(value_at(obj, "spec.controller") or "")
    domain, _, rest = controller.partition("/")
    if not rest or "." not in domain:
        return [field_error("FieldValueInvalid", "spec.controller",
                            'must be a domain-prefixed path (such as "acme.io/foo")',
                            controller)]
    return []


def validate_ingress_class_update(new: Obj, old: Obj) -> list[StatusCause]:
    return validate_ingress_class(new) + immutable(new, old, "spec.controller")


def default_network_policy(obj: Obj) -> None:
    """``SetDefaults_NetworkPolicy``: policy types Ingress (and Egress when egress rules
    are given); port protocol TCP; the pod selector is a struct (``{}``)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    spec.setdefault("podSelector", {})
    if not spec.get("policyTypes"):
        spec["policyTypes"] = ["Ingress", "Egress"] if spec.get("egress") else ["Ingress"]
    for direction in ("ingress", "egress"):
        for _, rule in items(spec, direction):
            for _, port in items(rule, "ports"):
                if isinstance(port, dict):
                    port.setdefault("protocol", "TCP")


def validate_network_policy(obj: Obj) -> list[StatusCause]:
    causes: list[StatusCause] = []
    for path, value in items(obj, "spec.policyTypes"):
        if value not in _POLICY_TYPES:
            causes.append(field_error("FieldValueNotSupported", path,
                                      'supported values: "Egress", "Ingress"', value))
    return causes


def resources(ctx: StorageContext) -> list[Resource]:
    group = "networking.k8s.io"
    return [
        stored(ctx, builtin(group, "ingresses"), Strategy(
            prepare_for_create=prepare_ingress_create, validate=validate_ingress),
            status=True, table=printers.INGRESS),
        stored(ctx, builtin(group, "ingressclasses"), Strategy(
            validate=validate_ingress_class, validate_update=validate_ingress_class_update),
                table=printers.INGRESS_CLASS),
        stored(ctx, builtin(group, "networkpolicies"), Strategy(
            validate=validate_network_policy, defaulter=default_network_policy),
                table=printers.NETWORK_POLICY),
        stored(ctx, builtin(group, "ipaddresses"), Strategy(
            name_validator=servicecidr.validate_ip_address_name, tracks_generation=False,
            validate=servicecidr.validate_ip_address,
            validate_update=servicecidr.validate_ip_address_update),
                table=printers.IP_ADDRESS),
        stored(ctx, builtin(group, "servicecidrs"), Strategy(
            prepare_for_create=empty_status, tracks_generation=False,
            validate=servicecidr.validate_service_cidr,
            validate_update=servicecidr.validate_service_cidr_update,
            validate_status=lambda new, old: []), status=True, table=printers.SERVICE_CIDR),
    ]
