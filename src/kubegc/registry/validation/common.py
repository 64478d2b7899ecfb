"""The building blocks upstream's validators share (``apimachinery/pkg/api/validation``,
``pkg/apis/core/validation``, ``apimachinery/pkg/apis/meta/v1/validation``), as
``field.Error`` causes: ``nonnegative``, ``not_supported``, ``immutable``,
``validate_label_selector``, ``int_or_percent``...

Validators receive objects after decoding (``kubegc.registry.typed``): every field has its Go
type, so they need not check types again; they read fields with ``get`` helpers that treat
an absent field as Go's zero value.
May import: stdlib, ``kubegc.api``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from kubegc.api.content import is_qualified_name
from kubegc.api.errors import StatusCause, field_error
from kubegc.api.goformat import go_quote
from kubegc.registry.validation.objectmeta import validate_labels

Causes = list[StatusCause]

#: ``apimachinery/pkg/util/validation``
IS_NEGATIVE = "must be greater than or equal to 0"
IMMUTABLE = "field is immutable"
PERCENT_FMT = "[0-9]+%"
_PERCENT = re.compile(f"^{PERCENT_FMT}$")
PERCENT_ERROR = ("a valid percent string must be a numeric string followed by an ending '%' "
                 f"(e.g. '1%',  or '93%', regex used for validation is '{PERCENT_FMT}')")


def mapping(obj: Any, *keys: str) -> dict[str, Any]:
    """The map at ``obj[keys...]`` (empty when absent)."""
    cur: Any = obj
    for key in keys:
        cur = cur.get(key) if isinstance(cur, dict) else None
    return cur if isinstance(cur, dict) else {}


def required(path: str, detail: str = "") -> StatusCause:
    return field_error("FieldValueRequired", path, detail)


def invalid(path: str, value: Any, detail: str, go_type: str | None = None) -> StatusCause:
    return field_error("FieldValueInvalid", path, detail, value, go_type=go_type)


def forbidden(path: str, detail: str) -> StatusCause:
    return field_error("FieldValueForbidden", path, detail)


def not_supported(path: str, value: Any, supported: Sequence[str]) -> StatusCause:
    """``field.NotSupported``: ``Unsupported value: "x": supported values: "a", "b"``."""
    return field_error("FieldValueNotSupported", path,
                       "supported values: " + ", ".join(go_quote(v) for v in supported), value)


def nonnegative(value: Any, path: str) -> Causes:
    """``ValidateNonnegativeField`` of an optional integer field."""
    if isinstance(value, int) and value < 0:
        return [invalid(path, value, IS_NEGATIVE)]
    return []


def positive(value: Any, path: str, detail: str = "must be greater than 0") -> Causes:
    if isinstance(value, int) and value <= 0:
        return [invalid(path, value, detail)]
    return []


def in_range(value: Any, path: str, low: int, high: int) -> Causes:
    """``validation.InclusiveRangeError``."""
    if isinstance(value, int) and not low <= value <= high:
        return [invalid(path, value, f"must be between {low} and {high}, inclusive")]
    return []


def one_of(value: Any, path: str, supported: Sequence[str], *, allow_empty: bool = True) -> Causes:
    if value is None or (value == "" and allow_empty) or value in supported:
        return []
    if value == "":
        return [required(path)]
    return [not_supported(path, value, supported)]


def immutable(new: Any, old: Any, path: str, go_type: str | None = None) -> Causes:
    """``ValidateImmutableField``: the new value, then ``field is immutable``."""
    if new != old:
        return [invalid(path, new, IMMUTABLE, go_type)]
    return []


_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def validate_label_selector(selector: Any, path: str) -> Causes:
    """``ValidateLabelSelector``: matchLabels as labels, each requirement's operator and
    values (``In``/``NotIn`` need values, ``Exists``/``DoesNotExist`` none)."""
    if not isinstance(selector, dict):
        return []
    causes = validate_labels(selector.get("matchLabels"), f"{path}.matchLabels")
    for i, req in enumerate(selector.get("matchExpressions") or []):
        where = f"{path}.matchExpressions[{i}]"
        operator, values = req.get("operator") or "", req.get("values") or []
        if operator in ("In", "NotIn"):
            if not values:
                causes.append(required(f"{where}.values",
                                       "must be specified when `operator` is 'In' or 'NotIn'"))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                causes.append(forbidden(f"{where}.values", "may not be specified when "
                                        "`operator` is 'Exists' or 'DoesNotExist'"))
        else:
            causes.append(invalid(f"{where}.operator", operator,
                                  "not a valid selector operator"))
        key = str(req.get("key") or "")
        causes += [invalid(f"{where}.key", key, msg) for msg in is_qualified_name(key)]
    return causes


def selector_is_empty(selector: Mapping[str, Any] | None) -> bool:
    return not (selector or {}).get("matchLabels") and not (selector or {}).get(
        "matchExpressions")


def int_or_string_repr(value: Any) -> str:
    """``%#v`` of an ``intstr.IntOrString`` (its ``String()`` needs a pointer)."""
    if isinstance(value, str):
        return f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{go_quote(value)}}}"
    return f"intstr.IntOrString{{Type:0, IntVal:{value}, StrVal:\"\"}}"


def _percent(value: Any) -> int | None:
    if isinstance(value, str) and _PERCENT.match(value):
        return int(value[:-1])
    return None


def int_or_percent(value: Any, path: str) -> Causes:
    """``ValidatePositiveIntOrPercent``."""
    if value is None:
        return []
    if isinstance(value, str):
        if _PERCENT.match(value) is None:
            return [_invalid_intstr(path, value, PERCENT_ERROR)]
        return []
    return [_invalid_intstr(path, value, IS_NEGATIVE)] if value < 0 else []


def _invalid_intstr(path: str, value: Any, detail: str) -> StatusCause:
    return StatusCause("FieldValueInvalid",
                       f"Invalid value: {int_or_string_repr(value)}: {detail}", path)


def int_or_percent_value(value: Any) -> int:
    """``getIntOrPercentValue``: the number, with or without its ``%``."""
    percent = _percent(value)
    if percent is not None:
        return percent
    return value if isinstance(value, int) else 0


def not_more_than_100_percent(value: Any, path: str) -> Causes:
    """``IsNotMoreThan100Percent``."""
    percent = _percent(value)
    if percent is None or percent <= 100:
        return []
    return [_invalid_intstr(path, value, "must not be greater than 100%")]


STANDARD_FINALIZERS = frozenset(("kubernetes", "orphan", "foregroundDeletion"))


def validate_finalizer_name(name: str, path: str) -> Causes:
    """``validateFinalizerName`` of the core API: qualified, and either standard or with a
    domain."""
    causes = [invalid(path, name, msg) for msg in is_qualified_name(name)]
    return causes + validate_kube_finalizer_name(name, path)


def validate_kube_finalizer_name(name: str, path: str) -> Causes:
    """``validateKubeFinalizerName``: a finalizer without a domain must be a standard one
    (``kubernetes``, ``orphan``, ``foregroundDeletion``)."""
    if "/" not in name and name not in STANDARD_FINALIZERS:
        return [invalid(path, name, "name is neither a standard finalizer name nor is it "
                                    "fully qualified")]
    return []
