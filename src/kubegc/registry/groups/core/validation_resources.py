"""Resource names and the other map keys of pod specs, as ``pkg/apis/core/validation``
checks them: ``validateResourceName``, ``validateContainerResourceName`` (container
``limits``/``requests``), ``validateResourceQuotaResourceName`` (a quota's ``hard``),
``validateLimitRangeResourceName``; quantities (``ValidateResourceQuantityValue``) and
resource requirements (``validateResourceRequirements``), with the name sets of
``pkg/apis/core/helper``
(``IsStandardResourceName``, ``IsStandardContainerResourceName``,
``IsStandardQuotaResourceName``, ``IsNativeResource``, ``IsExtendedResourceName``); and
``ValidateEnv``'s variable names (``IsRelaxedEnvVarName``: the
``RelaxedEnvironmentVariableValidation`` gate is on by default since 1.32).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubegc.api.content import is_qualified_name
from kubegc.registry.typed.special import quantity_value
from kubegc.registry.validation.common import Causes, invalid, mapping, required

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


#: ``helper.IsIntegerResourceName``'s standard names (extended resources are integers too)
INTEGER_RESOURCES = frozenset(("pods", "resourcequotas", "services", "replicationcontrollers",
                               "secrets", "configmaps", "persistentvolumeclaims",
                               "services.nodeports", "services.loadbalancers"))
NOT_INTEGER = "must be an integer"
IS_NEGATIVE = "must be greater than or equal to 0"


def _overcommit_allowed(name: str) -> bool:
    """``helper.IsOvercommitAllowed``: native resources but huge pages."""
    return _native(name) and not _huge_pages(name)


def validate_resource_quantity(name: str, quantity: Any, path: str) -> Causes:
    """``ValidateResourceQuantityValue``: not negative (``ValidateNonnegativeQuantity``), and
    whole for an integer resource. The value shown is the quantity as written (upstream
    prints its canonical form, the same for canonical input; for ``must be an integer``
    it prints the Go struct)."""
    text = str(quantity).strip()
    value = quantity_value(text)
    if value is None:  # the decoder refuses it first
        return []
    causes = [invalid(path, text, IS_NEGATIVE)] if value < 0 else []
    if (name in INTEGER_RESOURCES or _extended(name)) and value.denominator != 1:
        causes.append(invalid(path, text, NOT_INTEGER))
    return causes


NameCheck = Callable[[str, str], Causes]


def validate_resource_requirements(resources: Any, path: str,
                                   name_check: NameCheck | None = None) -> Causes:
    """``validateResourceRequirements`` (containers: ``ValidateContainerResourceRequirements``;
    a pod's ``overhead`` as its limits): names, quantities, each request at most its limit
    (equal to it for resources that cannot be overcommitted, whose limit is required)."""
    check = name_check or validate_container_resource_name
    limits, requests = mapping(resources, "limits"), mapping(resources, "requests")
    causes: Causes = []
    for name, quantity in limits.items():
        causes += check(str(name), f"{path}.limits[{name}]")
        causes += validate_resource_quantity(str(name), quantity, f"{path}.limits[{name}]")
    for name, quantity in requests.items():
        causes += check(str(name), f"{path}.requests[{name}]")
        causes += validate_resource_quantity(str(name), quantity, f"{path}.requests[{name}]")
        causes += _request_within_limit(str(name), quantity, limits, path)
    return causes


def _request_within_limit(name: str, quantity: Any, limits: dict[str, Any], path: str) -> Causes:
    request = quantity_value(str(quantity))
    if name not in limits:
        if _overcommit_allowed(name):
            return []
        return [required(f"{path}.limits", "Limit must be set for non overcommitable resources")]
    limit = quantity_value(str(limits[name]))
    if request is None or limit is None:
        return []
    text, limit_text = str(quantity).strip(), str(limits[name]).strip()
    if request != limit and not _overcommit_allowed(name):
        return [invalid(f"{path}.requests", text,
                        f"must be equal to {name} limit of {limit_text}")]
    if request > limit:
        return [invalid(f"{path}.requests", text,
                        f"must be less than or equal to {name} limit of {limit_text}")]
    return []


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


def is_relaxed_env_var_name(name: str) -> bool:
    """``IsRelaxedEnvVarName``: printable ASCII but '='."""
    return all(c.isascii() and c.isprintable() and c != "=" for c in name)


def validate_env_names(env: Any, path: str) -> Causes:
    """``ValidateEnv``'s names: required, then ``IsRelaxedEnvVarName``."""
    causes: Causes = []
    for i, var in enumerate(env if isinstance(env, list) else []):
        name = var.get("name") if isinstance(var, dict) else None
        where = f"{path}[{i}].name"
        if not name:
            causes.append(required(where))
        elif not is_relaxed_env_var_name(str(name)):
            causes.append(invalid(where, name, RELAXED_ENV_NAME))
    return causes


def validate_resource_quota(obj: dict[str, Any]) -> Causes:
    """``ValidateResourceQuotaSpec``'s resource names and quantities (``spec.hard``)."""
    causes: Causes = []
    for name, quantity in mapping(obj, "spec", "hard").items():
        causes += validate_quota_resource_name(str(name), f"spec.hard[{name}]")
        causes += validate_resource_quantity(str(name), quantity, f"spec.hard[{name}]")
    return causes
