"""The structural schema of a CRD version, compiled once from its ``openAPIV3Schema`` (cf.
``apiextensions-apiserver/pkg/apiserver/schema`` ``Structural`` and kube-openapi's
``spec.Schema`` as ``validation.NewSchemaValidator`` converts it).

One ``Structural`` node holds both halves upstream keeps apart: the structure pruning and
defaulting walk (``properties``, ``items``, ``additionalProperties`` and the
``x-kubernetes-*`` extensions) and the value validations kube-openapi checks (type, format,
enum, bounds, ``allOf``/``anyOf``/``oneOf``/``not``). Nodes are immutable after
``compile_schema`` returns and shared by every request.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kubegc.registry.structural.formats import supported_format


@dataclass(frozen=True, slots=True, eq=False)
class Structural:
    """One compiled schema node; ``eq=False``: nodes compare (and hash) by identity."""

    types: tuple[str, ...] = ()  # ("integer", "string") for x-kubernetes-int-or-string
    nullable: bool = False
    format: str = ""  # only formats upstream validates; others are dropped, as upstream
    enum: tuple[Any, ...] | None = None
    maximum: float | None = None
    exclusive_maximum: bool = False
    minimum: float | None = None
    exclusive_minimum: bool = False
    multiple_of: float | None = None
    max_length: int | None = None
    min_length: int | None = None
    pattern: str = ""
    pattern_re: re.Pattern[str] | None = None
    pattern_error: str = ""  # why ``pattern`` does not compile
    max_items: int | None = None
    min_items: int | None = None
    unique_items: bool = False
    max_properties: int | None = None
    min_properties: int | None = None
    required: tuple[str, ...] = ()
    properties: Mapping[str, Structural] = field(default_factory=dict)
    additional_properties: Structural | bool | None = None
    items: Structural | None = None
    all_of: tuple[Structural, ...] = ()
    any_of: tuple[Structural, ...] = ()
    one_of: tuple[Structural, ...] = ()
    not_: Structural | None = None
    preserve_unknown_fields: bool = False
    embedded_resource: bool = False
    int_or_string: bool = False
    list_type: str = ""
    list_map_keys: tuple[str, ...] = ()
    has_default: bool = False
    default: Any = None
    #: some node at or below this one (through properties, items, additionalProperties)
    #: has a default: defaulting skips subtrees without one
    defaults_below: bool = False
    # which groups of checks apply (so that validation skips the others at once)
    composed: bool = False  # allOf, anyOf, oneOf or not
    checks_strings: bool = False  # maxLength, minLength, pattern or format
    checks_numbers: bool = False  # multipleOf, minimum or maximum
    #: Python types of values this node accepts without any check beyond their type (a
    #: plain ``type: string`` leaf: ``{str}``): validation does not descend for those
    trivial_types: frozenset[type] = frozenset()

    @property
    def additional_schema(self) -> Structural | None:
        ap = self.additional_properties
        return ap if isinstance(ap, Structural) else None

    def child(self, key: str) -> Structural | None:
        """The schema of property ``key`` (``properties`` first, then a schema-valued
        ``additionalProperties``)."""
        prop = self.properties.get(key)
        return prop if prop is not None else self.additional_schema


def compile_schema(raw: Mapping[str, Any]) -> Structural:
    """Compile a CRD version's ``openAPIV3Schema`` (a JSON dict, assumed structural as the
    CRD's own validation guarantees upstream; anything malformed is ignored, not fatal)."""
    properties = {str(k): compile_schema(v) for k, v in _mapping(raw.get("properties")).items()
                  if isinstance(v, Mapping)}
    raw_ap = raw.get("additionalProperties")
    additional: Structural | bool | None = None
    if isinstance(raw_ap, Mapping):
        additional = compile_schema(raw_ap)
    elif isinstance(raw_ap, bool):
        additional = raw_ap
    raw_items = raw.get("items")
    items = compile_schema(raw_items) if isinstance(raw_items, Mapping) else None
    int_or_string = raw.get("x-kubernetes-int-or-string") is True
    type_ = raw.get("type")
    types: tuple[str, ...] = ("integer", "string") if int_or_string else (
        (str(type_),) if isinstance(type_, str) and type_ else ())
    pattern = raw.get("pattern") if isinstance(raw.get("pattern"), str) else ""
    pattern_re, pattern_error = _compile_pattern(str(pattern))
    has_default = "default" in raw
    all_of, any_of, one_of = (_compile_all(raw.get(k)) for k in ("allOf", "anyOf", "oneOf"))
    not_ = compile_schema(raw["not"]) if isinstance(raw.get("not"), Mapping) else None
    fmt = supported_format(raw.get("format"))
    numbers = [_number(raw.get(k)) for k in ("multipleOf", "minimum", "maximum")]
    lengths = [_int(raw.get(k)) for k in ("maxLength", "minLength")]
    children = [*properties.values(), *(s for s in (items,) if s is not None)]
    if isinstance(additional, Structural):
        children.append(additional)
    checks = Structural(
        types=types,
        nullable=raw.get("nullable") is True,
        format=fmt,
        enum=tuple(raw["enum"]) if isinstance(raw.get("enum"), list) else None,
        maximum=numbers[2],
        exclusive_maximum=raw.get("exclusiveMaximum") is True,
        minimum=numbers[1],
        exclusive_minimum=raw.get("exclusiveMinimum") is True,
        multiple_of=numbers[0],
        max_length=lengths[0],
        min_length=lengths[1],
        pattern=str(pattern),
        pattern_re=pattern_re,
        pattern_error=pattern_error,
        max_items=_int(raw.get("maxItems")),
        min_items=_int(raw.get("minItems")),
        unique_items=raw.get("uniqueItems") is True,
        max_properties=_int(raw.get("maxProperties")),
        min_properties=_int(raw.get("minProperties")),
        required=tuple(str(r) for r in raw.get("required") or () if isinstance(r, str)),
        properties=properties,
        additional_properties=additional,
        items=items,
        all_of=all_of,
        any_of=any_of,
        one_of=one_of,
        not_=not_,
        preserve_unknown_fields=raw.get("x-kubernetes-preserve-unknown-fields") is True,
        embedded_resource=raw.get("x-kubernetes-embedded-resource") is True,
        int_or_string=int_or_string,
        list_type=str(raw.get("x-kubernetes-list-type") or ""),
        list_map_keys=tuple(str(k) for k in raw.get("x-kubernetes-list-map-keys") or ()),
        has_default=has_default,
        default=raw.get("default"),
        defaults_below=has_default or any(c.defaults_below for c in children),
        composed=bool(all_of or any_of or one_of or not_ is not None),
        checks_strings=bool(fmt or pattern or any(n is not None for n in lengths)),
        checks_numbers=any(n is not None for n in numbers),
    )
    return replace(checks, trivial_types=_trivial_types(checks))


#: scalar JSON types and the Python types that are always valid for them
_SCALAR_TYPES: dict[str, frozenset[type]] = {
    "string": frozenset({str}), "boolean": frozenset({bool}), "integer": frozenset({int}),
    "number": frozenset({int, float}),
}


def _trivial_types(s: Structural) -> frozenset[type]:
    if (s.format or s.enum or s.composed or s.checks_strings or s.checks_numbers
            or s.embedded_resource or s.list_type):
        return frozenset()
    out: frozenset[type] = frozenset()
    for name in s.types:
        out |= _SCALAR_TYPES.get(name, frozenset())
    return out


def _compile_pattern(pattern: str) -> tuple[re.Pattern[str] | None, str]:
    if not pattern:
        return None, ""
    try:
        return re.compile(pattern), ""
    except re.error as e:  # Go's RE2 words it differently; the gist is the same
        return None, f"error parsing regexp: {e}"


def _compile_all(raw: Any) -> tuple[Structural, ...]:
    if not isinstance(raw, list):
        return ()
    return tuple(compile_schema(s) for s in raw if isinstance(s, Mapping))


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)
