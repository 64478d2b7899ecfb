"""Go's ``fmt`` renderings of values, for messages that must read as upstream's.

``field.Error`` (k8s.io/apimachinery/pkg/util/validation/field/errors.go, ``ErrorBody``)
renders a bad value by its Go type: ``nil`` as ``"null"``, pointers dereferenced, numbers
and booleans with ``%v``, strings with ``%q``, ``fmt.Stringer``s with ``String()`` and
anything else with ``%#v`` (``map[string]string{"a":"c"}``, ``[]string{"x"}``,
``v1.OwnerReference{APIVersion:"v1", ...}``). kubegc's values are JSON-decoded Python
values, which do not carry the Go type: the caller names it (``go_type``) where it knows
the field's type, else it is inferred (a dict of strings is a ``map[string]string``, a
list of strings a ``[]string``, anything else ``interface {}`` inside).

Go types are written as Go writes them: ``string``, ``int64``, ``bool``, ``float64``,
``types.UID`` (a named string), ``*T``, ``[]T``, ``map[string]T``, ``interface {}`` and the
structs of ``STRUCTS``. Pointers inside a ``%#v`` print an address, as upstream's do; the
addresses here are made up (upstream's are heap addresses, meaningless to a reader too).

Also ``encoding/json``'s rendering (``json_marshal``, ``json_number``), which upstream puts
in some messages (non-string enum values of a CRD schema). The one implementation of Go's
renderings in kubegc: the built-in validation, label selectors and the structural schemas
of custom resources all print values through it.
May import: stdlib only.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

#: Go struct types by name: (Go field, JSON field, Go type) in declaration order.
STRUCTS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "v1.OwnerReference": (
        ("APIVersion", "apiVersion", "string"), ("Kind", "kind", "string"),
        ("Name", "name", "string"), ("UID", "uid", "types.UID"),
        ("Controller", "controller", "*bool"),
        ("BlockOwnerDeletion", "blockOwnerDeletion", "*bool"),
    ),
    "core.Taint": (
        ("Key", "key", "string"), ("Value", "value", "string"),
        ("Effect", "effect", "string"), ("TimeAdded", "timeAdded", "*v1.Time"),
    ),
    "rbac.RoleRef": (
        ("APIGroup", "apiGroup", "string"), ("Kind", "kind", "string"),
        ("Name", "name", "string"),
    ),
    "policy.PodDisruptionBudgetSpec": (
        ("MinAvailable", "minAvailable", "*intstr.IntOrString"),
        ("Selector", "selector", "*v1.LabelSelector"),
        ("MaxUnavailable", "maxUnavailable", "*intstr.IntOrString"),
        ("UnhealthyPodEvictionPolicy", "unhealthyPodEvictionPolicy",
         "*policy.UnhealthyPodEvictionPolicyType"),
    ),
    "v1.LabelSelector": (
        ("MatchLabels", "matchLabels", "map[string]string"),
        ("MatchExpressions", "matchExpressions", "[]v1.LabelSelectorRequirement"),
    ),
    "networking.ServiceCIDRSpec": (("CIDRs", "cidrs", "[]string"),),
    "networking.ParentReference": (
        ("Group", "group", "string"), ("Resource", "resource", "string"),
        ("Namespace", "namespace", "string"), ("Name", "name", "string"),
    ),
    "authorization.NonResourceAttributes": (
        ("Path", "path", "string"), ("Verb", "verb", "string"),
    ),
    "v1.LabelSelectorRequirement": (
        ("Key", "key", "string"), ("Operator", "operator", "v1.LabelSelectorOperator"),
        ("Values", "values", "[]string"),
    ),
}
_STRINGS = ("string", "types.UID", "v1.LabelSelectorOperator")
_INTS = ("int", "int32", "int64")
_FLOATS = ("float32", "float64")
_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
            "\v": "\\v", "\\": "\\\\", '"': '\\"'}
#: ``encoding/json``'s short escapes (``\b`` and ``\f`` since Go 1.22); other control
#: characters are written ``\u00XX``.
_JSON_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                 "\\": "\\\\", '"': '\\"'}
_ADDRESS_BASE = 0xC000010000


def field_value(value: Any, go_type: str | None = None) -> str:
    """A bad value as ``field.Error.ErrorBody`` renders it (after ``Invalid value: ``)."""
    typ = go_type or infer_type(value)
    if value is None and (typ.startswith("*") or typ == "interface {}"):
        return '"null"'
    typ = typ.removeprefix("*")
    if typ in (*_INTS, *_FLOATS, "bool") and _fits(value, typ):
        return go_v(value)
    if typ == "string" and isinstance(value, str):
        return go_quote(value)
    return go_sharp_v(value, typ)


def infer_type(value: Any) -> str:
    """The Go type a JSON value most likely had in a typed Kubernetes field."""
    if isinstance(value, dict):
        if all(isinstance(v, str) for v in value.values()):
            return "map[string]string"
        return "map[string]interface {}"
    if isinstance(value, list | tuple):
        if all(isinstance(v, str) for v in value):
            return "[]string"
        return "[]interface {}"
    return dynamic_type(value)


def dynamic_type(value: Any) -> str:
    """The Go type ``encoding/json`` decodes a value into inside ``interface {}``
    (integers as ``int64``, as apimachinery's unstructured decoding keeps them)."""
    if value is None:
        return "interface {}"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "map[string]interface {}"
    return "[]interface {}"


def json_type_name(value: Any) -> str:
    """The JSON type word ``encoding/json`` puts in an ``UnmarshalTypeError`` ("object",
    "array", "string", "bool", "number")."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    return "number"


def _fits(value: Any, typ: str) -> bool:
    if typ == "bool":
        return isinstance(value, bool)
    if typ in _INTS:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, int | float) and not isinstance(value, bool)


def go_v(value: Any) -> str:
    """``%v`` of a number, boolean or string."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    return str(value)


def go_v_any(value: Any) -> str:
    """``%v`` (and ``%+v``) of a JSON value held in ``interface {}``: maps as
    ``map[k:v ...]`` with sorted keys, slices as ``[a b]``, null as ``<nil>``."""
    if value is None:
        return "<nil>"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_v_any(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list | tuple):
        return "[" + " ".join(go_v_any(v) for v in value) + "]"
    return go_v(value)


def go_sharp_v(value: Any, go_type: str | None = None) -> str:
    """``%#v``: Go-syntax representation of ``value`` as a ``go_type``."""
    return _SharpV().render(value, go_type or infer_type(value))


class _SharpV:
    """One ``%#v`` rendering (it numbers the made-up pointer addresses it prints)."""

    def __init__(self) -> None:
        self._addresses: Iterator[int] = itertools.count(_ADDRESS_BASE, 0x18)

    def render(self, value: Any, typ: str) -> str:
        if typ.startswith("*"):
            if value is None:
                return f"({typ})(nil)"
            return f"({typ})(0x{next(self._addresses):x})"
        if typ.startswith("[]"):
            return self._slice(value, typ)
        if typ.startswith("map[string]"):
            return self._map(value, typ)
        if typ in STRUCTS:
            return self._struct(value, typ)
        if typ == "interface {}":
            return "interface {}(nil)" if value is None else self.render(
                value, dynamic_type(value))
        return self._scalar(value, typ)

    def _scalar(self, value: Any, typ: str) -> str:
        if value is None:  # a missing field of a struct: the zero value
            value = {"bool": False, **dict.fromkeys(_INTS + _FLOATS, 0)}.get(typ, "")
        if typ in _STRINGS and isinstance(value, str):
            return go_quote(value)
        if (typ in (*_INTS, *_FLOATS, "bool")) and _fits(value, typ):
            return go_float(float(value)) if typ in _FLOATS else go_v(value)
        return self.render(value, dynamic_type(value))  # not of the declared type

    def _slice(self, value: Any, typ: str) -> str:
        if value is None:
            return f"{typ}(nil)"
        if not isinstance(value, list | tuple):
            return self.render(value, dynamic_type(value))
        elem = typ[2:]
        return f"{typ}{{" + ", ".join(self.render(v, elem) for v in value) + "}"

    def _map(self, value: Any, typ: str) -> str:
        if value is None:
            return f"{typ}(nil)"
        if not isinstance(value, dict):
            return self.render(value, dynamic_type(value))
        elem = typ[len("map[string]"):]
        entries = (f"{go_quote(str(k))}:{self.render(value[k], elem)}"
                   for k in sorted(value, key=str))  # fmt sorts map keys
        return f"{typ}{{" + ", ".join(entries) + "}"

    def _struct(self, value: Any, typ: str) -> str:
        if not isinstance(value, dict):
            return self.render(value, dynamic_type(value))
        fields = (f"{name}:{self.render(value.get(key), ftype)}"
                  for name, key, ftype in STRUCTS[typ])
        return f"{typ}{{" + ", ".join(fields) + "}"


def go_quote(text: str) -> str:
    """``strconv.Quote`` (``%q``): printable characters as they are, the others escaped.

    A lone surrogate (Python's JSON decoder keeps one) is U+FFFD, as Go's JSON decoder
    makes it before any message is printed."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\ufffd")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def go_float(value: float) -> str:
    """``%v`` of a float64: the shortest representation, in ``%e`` form when the exponent
    is below -4 or at least 6 — Go prints 1e+06, 1.5e-05, 123456, 0.0001."""
    return _shortest(value, e_below=-4, e_from=6, exp_width=2)


def json_number(value: float) -> str:
    """A float64 as ``encoding/json`` writes it: the shortest representation, in ``%e``
    form when the exponent is below -6 or at least 21, a one-digit negative exponent not
    padded — 2, 1.5, 1000000, 1e-7, 1e+21."""
    return _shortest(value, e_below=-6, e_from=21, exp_width=1)


def _shortest(value: float, *, e_below: int, e_from: int, exp_width: int) -> str:
    """``strconv.FormatFloat(value, 'g' or 'f' or 'e', -1, 64)``: the shortest digits that
    read back as ``value``, in ``%e`` form when the exponent is outside [e_below, e_from)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    exponent = int(exponent) + len(digit_tuple) - len(digits)
    point = len(digits) + exponent  # digits before the decimal point
    neg = "-" if sign else ""
    exp = point - 1
    if exp < e_below or exp >= e_from:
        mantissa = digits[0] + (f".{digits[1:]}" if len(digits) > 1 else "")
        return f"{neg}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):0{exp_width}d}"
    if point <= 0:
        return f"{neg}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{neg}{digits}{'0' * (point - len(digits))}"
    return f"{neg}{digits[:point]}.{digits[point:]}"


def json_marshal(value: Any) -> str:
    """``json.Marshal`` of a JSON value: compact, object keys sorted, strings escaped as
    ``encoding/json`` escapes them (``<``, ``>``, ``&``, U+2028 and U+2029 included)."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return _json_quote(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{_json_quote(str(k))}:{json_marshal(value[k])}"
                              for k in sorted(value, key=str)) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(json_marshal(v) for v in value) + "]"
    return json_number(value) if isinstance(value, float) else go_v(value)  # as %v


def _json_quote(text: str) -> str:
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in _JSON_ESCAPES:
            out.append(_JSON_ESCAPES[ch])
        elif code < 0x20 or ch in "<>&\u2028\u2029":
            out.append(f"\\u{code:04x}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append("\ufffd")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


#: What ``encoding/json``'s encoder escapes in strings beyond JSON's own escapes (its
#: default ``SetEscapeHTML(true)``, ``json.HTMLEscape``).
_HTML_ESCAPES = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"),
                 ("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))


def html_escape(encoded: bytes) -> bytes:
    """Encoded JSON as Go's ``json.NewEncoder(w).Encode`` writes it: ``<``, ``>``, ``&``,
    U+2028 and U+2029 escaped (``"<nil>"`` → ``"\\u003cnil\\u003e"``). These characters
    occur in JSON only inside strings, so replacing bytes is exact (UTF-8 never has the
    bytes of U+2028 inside another character). Returns ``encoded`` itself when there is
    nothing to escape (the common case: three byte searches and an ASCII check)."""
    if (encoded.find(b"<") < 0 and encoded.find(b">") < 0 and encoded.find(b"&") < 0
            and encoded.isascii()):
        return encoded
    for raw, escaped in _HTML_ESCAPES:
        encoded = encoded.replace(raw, escaped)
    return encoded
