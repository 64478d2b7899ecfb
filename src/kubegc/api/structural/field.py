"""``field.Error`` as kube-apiserver renders it for custom resources: the Status cause
constructors (``field.Required``, ``Invalid``, ``TypeInvalid``, ``NotSupported``,
``TooLong``, ``TooMany``, ``Duplicate``) and Go's rendering of the offending value
(``ErrorBody``: ``%q`` for strings, ``%v`` for numbers and booleans, ``%#v`` for the rest),
so that messages match upstream's byte for byte.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from kubegc.api.errors import StatusCause

#: field path of an error with no path upstream (``(*field.Path)(nil).String()``)
NIL_PATH = "<nil>"

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n",
            "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_quote(s: str) -> str:
    """``strconv.Quote``."""
    out = ['"']
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def _digits(f: float) -> tuple[bool, str, int]:
    """(negative, shortest round-trip digits, decimal exponent of the first digit)."""
    sign, digits, exponent = Decimal(repr(f)).normalize().as_tuple()
    text = "".join(map(str, digits)) or "0"
    assert isinstance(exponent, int)
    return bool(sign), text, exponent + len(text) - 1


def _float(f: float, *, e_below: float, e_from: int, pad: bool) -> str:
    if f == 0:
        return "0"
    neg, digits, exp = _digits(f)
    sign = "-" if neg else ""
    if exp < e_below or exp >= e_from:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        width = 2 if pad else 1
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):0{width}d}"
    if exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{digits}"
    if len(digits) <= exp + 1:
        return sign + digits + "0" * (exp + 1 - len(digits))
    return f"{sign}{digits[:exp + 1]}.{digits[exp + 1:]}"


def go_float(f: float) -> str:
    """``fmt.Sprint(float64)`` (``%g``, shortest): ``1.5``, ``2``, ``1e+06``."""
    return _float(f, e_below=-4, e_from=6, pad=True)


def json_number(f: float) -> str:
    """A float64 as ``encoding/json`` writes it: ``2``, ``1.5``, ``1e+21``."""
    return _float(f, e_below=-6, e_from=21, pad=False)


def go_sprint(value: Any) -> str:
    """``%v`` of a JSON scalar as Go decodes it (int64, float64, bool, string)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    return str(value)


def go_sharp(value: Any) -> str:
    """``%#v`` of a JSON value decoded into ``interface{}``."""
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, dict):
        inner = ", ".join(f"{go_quote(str(k))}:{go_sharp(value[k])}" for k in sorted(value))
        return "map[string]interface {}{" + inner + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(go_sharp(v) for v in value) + "}"
    return go_sprint(value)


def json_text(value: Any) -> str:
    """``json.Marshal`` of a JSON value (enum values in "supported values")."""
    if isinstance(value, float):
        return json_number(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, list):
        return "[" + ",".join(json_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{go_quote(str(k))}:{json_text(value[k])}"
                              for k in sorted(value)) + "}"
    return str(value)


def error_value(value: Any) -> str:
    """How ``field.Error.ErrorBody`` prints the bad value."""
    if value is None:
        return '"null"'
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool | int | float):
        return go_sprint(value)
    return go_sharp(value)


def _with_detail(text: str, detail: str) -> str:
    return f"{text}: {detail}" if detail else text


def required(path: str, detail: str = "") -> StatusCause:
    return StatusCause("FieldValueRequired", _with_detail("Required value", detail), path)


def invalid(path: str, value: Any, detail: str) -> StatusCause:
    return StatusCause("FieldValueInvalid",
                       _with_detail(f"Invalid value: {error_value(value)}", detail), path)


def type_invalid(path: str, value: Any, detail: str) -> StatusCause:
    return StatusCause("FieldValueTypeInvalid",
                       _with_detail(f"Invalid value: {error_value(value)}", detail), path)


def not_supported(path: str, value: Any, valid: Sequence[str]) -> StatusCause:
    detail = "supported values: " + ", ".join(go_quote(v) for v in valid) if valid else ""
    return StatusCause("FieldValueNotSupported",
                       _with_detail(f"Unsupported value: {error_value(value)}", detail), path)


def too_long(path: str, max_length: int) -> StatusCause:
    detail = f"may not be more than {max_length} bytes" if max_length >= 0 else (
        "value is too long")
    return StatusCause("FieldValueTooLong", f"Too long: {detail}", path)


def too_many(path: str, actual: int, max_quantity: int) -> StatusCause:
    detail = f"must have at most {max_quantity} items" if max_quantity >= 0 else (
        "has too many items")
    shown = f"Too many: {actual}" if actual >= 0 else "Too many"
    return StatusCause("FieldValueTooMany", f"{shown}: {detail}", path)


def duplicate(path: str, value: Any) -> StatusCause:
    return StatusCause("FieldValueDuplicate", f"Duplicate value: {error_value(value)}", path)
