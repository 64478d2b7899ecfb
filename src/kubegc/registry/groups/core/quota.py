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
from kubegc.registry.typed.special import quantity_value
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
        causes += _limit_item(item if isinstance(item, dict) else {}, value, path)
    return causes + duplicates(obj, "spec.limits", "type")


def _limit_item(item: dict[str, Any], kind: str, path: str) -> list[StatusCause]:
    """``ValidateLimitRange``'s rules on one limit: no defaults for a ``Pod`` limit, a
    storage bound for a ``PersistentVolumeClaim`` one, and its quantities in order (the
    value shown is the quantity as written, where upstream prints Go's struct; the words
    after it are upstream's)."""
    causes: list[StatusCause] = []
    if kind == "Pod":
        causes += [field_error("FieldValueForbidden", f"{path}.{part}",
                               "may not be specified when `type` is 'Pod'")
                   for part in ("default", "defaultRequest") if mapping(item, part)]
    if kind == "PersistentVolumeClaim" and "storage" not in mapping(item, "min") and (
            "storage" not in mapping(item, "max")):
        causes.append(field_error("FieldValueRequired", f"{path}.limits",
                                  "either minimum or maximum storage value is required, but "
                                  "neither was provided"))
    return causes + _limit_order(item, path)


#: (smaller part, larger part, the part the error names, its words)
_ORDER = (("min", "max", "min", "min value {a} is greater than max value {b}"),
          ("min", "defaultRequest", "defaultRequest",
           "min value {a} is greater than default request value {b}"),
          ("defaultRequest", "max", "defaultRequest",
           "default request value {a} is greater than max value {b}"),
          ("defaultRequest", "default", "defaultRequest",
           "default request value {a} is greater than default limit value {b}"),
          ("min", "default", "default", "min value {a} is greater than default value {b}"),
          ("default", "max", "default", "default value {a} is greater than max value {b}"))


def _limit_order(item: dict[str, Any], path: str) -> list[StatusCause]:
    causes: list[StatusCause] = []
    names = sorted({str(k) for part in _LIMIT_PARTS for k in mapping(item, part)})
    for name in names:
        for small, large, at, words in _ORDER:
            a, b = mapping(item, small).get(name), mapping(item, large).get(name)
            va, vb = quantity_value(str(a)), quantity_value(str(b))
            if va is not None and vb is not None and a is not None and b is not None and (
                    va > vb):
                causes.append(field_error("FieldValueInvalid", f"{path}.{at}[{name}]",
                                          words.format(a=a, b=b), str(a)))
        ratio = mapping(item, "maxLimitRequestRatio").get(name)
        value = quantity_value(str(ratio)) if ratio is not None else None
        if value is not None and value < 1:
            causes.append(field_error("FieldValueInvalid",
                                      f"{path}.maxLimitRequestRatio[{name}]",
                                      f"ratio {ratio} is less than 1", str(ratio)))
    return causes



