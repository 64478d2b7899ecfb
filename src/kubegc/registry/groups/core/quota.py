"""LimitRanges and ResourceQuotas (cf. pkg/registry/core/{limitrange,resourcequota}).

Stored only: no admission plugin (LimitRanger, ResourceQuota) applies them to pods and no
resource quota controller fills a quota's ``status.used``.
"""

from __future__ import annotations

from typing import Any

from kubegc.api.content import is_qualified_name
from kubegc.api.errors import StatusCause, field_error
from kubegc.api.types import Obj
from kubegc.registry.groups.core.validation_resources import validate_limit_range_resource_name
from kubegc.registry.validation.common import mapping
from kubegc.registry.validation.paths import duplicates, items


def default_limit_range(obj: Obj) -> None:
    """``SetDefaults_LimitRangeItem``: a Container limit's default is its max, its
    defaultRequest its default, else its min."""
    for _, item in items(obj, "spec.limits"):
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default: dict[str, Any] = dict(item.get("default") or {})
        for key, value in (item.get("max") or {}).items():
            default.setdefault(key, value)
        request: dict[str, Any] = dict(item.get("defaultRequest") or {})
        for key, value in (*default.items(), *(item.get("min") or {}).items()):
            request.setdefault(key, value)
        if default:
            item["default"] = default
        if request:
            item["defaultRequest"] = request


_STANDARD_LIMIT_TYPES = ("Pod", "Container", "PersistentVolumeClaim")
_LIMIT_PARTS = ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")


def validate_limit_range(obj: Obj) -> list[StatusCause]:
    """``ValidateLimitRange``: each limit's type is a qualified name, a standard type when
    unprefixed, and appears once; its resource names as ``validateLimitRangeResourceName``."""
    causes: list[StatusCause] = []
    for path, item in items(obj, "spec.limits"):
        value = str((item or {}).get("type") or "") if isinstance(item, dict) else ""
        messages = is_qualified_name(value)
        if not messages and "/" not in value and value not in _STANDARD_LIMIT_TYPES:
            messages = ("must be a standard limit type or fully qualified",)
        causes += [field_error("FieldValueInvalid", f"{path}.type", m, value) for m in messages]
        for part in _LIMIT_PARTS:
            for name in mapping(item, part):
                causes += validate_limit_range_resource_name(value, str(name),
                                                             f"{path}.{part}[{name}]")
    return causes + duplicates(obj, "spec.limits", "type")
