"""The API types that decode JSON themselves, with their upstream error messages:
``resource.Quantity`` (``ParseQuantity``), ``metav1.Time`` / ``MicroTime`` (Go's
``time.Parse`` with ``time.RFC3339`` / ``RFC3339Micro``), ``[]byte`` (base64, as
``encoding/json`` decodes it with ``base64.StdEncoding``).

Each ``check_*`` returns the error text Go would produce, or None when the value decodes.
May import: stdlib only.
"""

from __future__ import annotations

import calendar
import re
from fractions import Fraction

SPLIT_RE = r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG = f"quantities must match the regular expression '{SPLIT_RE}'"
ERR_NUMERIC = "unable to parse quantity's numeric part"
ERR_SUFFIX = "unable to parse quantity's suffix"
_SPLIT = re.compile(SPLIT_RE)
_SUFFIXES = frozenset(("", "n", "u", "m", "k", "M", "G", "T", "P", "E",
                       "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))
_EXPONENT = re.compile(r"^[eE][-+]?[0-9]+$")


def check_quantity(text: str) -> str | None:
    """``resource.ParseQuantity`` (after ``UnmarshalJSON`` strips the quotes and spaces)."""
    text = text.strip()
    if text == "0":
        return None
    match = _SPLIT.match(text)
    if not text or match is None:
        return ERR_FORMAT_WRONG
    number, suffix = match.group(1), match.group(2)
    digits = number.lstrip("+-")
    if digits.count(".") > 1 or not digits.replace(".", ""):
        return ERR_FORMAT_WRONG
    if suffix not in _SUFFIXES and not _EXPONENT.match(suffix):
        return ERR_SUFFIX
    return None


_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15,
            "E": 18}


def quantity_value(text: str) -> Fraction | None:
    """The exact value of a quantity (``resource.Quantity``'s ``Cmp`` compares these), or
    None when ``check_quantity`` refuses it."""
    text = text.strip()
    if check_quantity(text) is not None:
        return None
    match = _SPLIT.match(text)
    if match is None:
        return Fraction(0)
    number, suffix = Fraction(match.group(1)), match.group(2)
    if suffix in _DECIMAL:
        return number * Fraction(10) ** _DECIMAL[suffix]
    if suffix.endswith("i"):
        return number * Fraction(1024) ** ("KMGTPE".index(suffix[0]) + 1)
    return number * Fraction(10) ** int(suffix[1:])


RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"


class _Bad(Exception):
    def __init__(self, layout_elem: str, value_elem: str, message: str = "") -> None:
        super().__init__(message)
        self.layout_elem, self.value_elem, self.message = layout_elem, value_elem, message


#: the form Kubernetes writes (``2026-01-01T00:01:00Z``, with a fraction for MicroTime):
#: valid whenever its day exists, so the full parse runs only for the others
_CANONICAL = {
    RFC3339: re.compile(r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T"
                        r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?Z"),
    RFC3339_MICRO: re.compile(r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T"
                              r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{6}Z"),
}


def check_time(text: str, layout: str = RFC3339) -> str | None:
    """Go's ``time.Parse(layout, text)`` for the two layouts the API uses; the error is
    ``time.ParseError``'s text."""
    if _CANONICAL[layout].fullmatch(text) and int(text[8:10]) <= 28:
        return None
    try:
        _parse(text, layout == RFC3339_MICRO)
    except _Bad as e:
        if e.message:
            return f"parsing time {_quote(text)}{e.message}"
        return (f"parsing time {_quote(text)} as {_quote(layout)}: cannot parse "
                f"{_quote(e.value_elem)} as {_quote(e.layout_elem)}")
    return None


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _getnum(value: str, fixed: bool, elem: str) -> tuple[int, str]:
    if not value[:1].isdigit() or not value[:1].isascii():
        raise _Bad(elem, value)
    if not value[1:2].isdigit() or not value[1:2].isascii():
        if fixed:
            raise _Bad(elem, value)
        return int(value[0]), value[1:]
    return int(value[:2]), value[2:]


def _literal(value: str, prefix: str) -> str:
    if not value.startswith(prefix):
        raise _Bad(prefix, value)
    return value[len(prefix):]


def _parse(value: str, micro: bool) -> None:
    hold = value
    year_text, value = value[:4], value[4:]
    if len(year_text) < 4 or not (year_text.isascii() and year_text.isdigit()):
        raise _Bad("2006", hold)
    year = int(year_text)
    value = _literal(value, "-")
    month, value = _getnum(value, True, "01")
    if not 1 <= month <= 12:
        raise _Bad("01", value, ": month out of range")
    value = _literal(value, "-")
    day, value = _getnum(value, True, "02")
    value = _literal(value, "T")
    hour, value = _getnum(value, False, "15")
    if hour >= 24:
        raise _Bad("15", value, ": hour out of range")
    value = _literal(value, ":")
    minute, value = _getnum(value, True, "04")
    if minute >= 60:
        raise _Bad("04", value, ": minute out of range")
    value = _literal(value, ":")
    second, value = _getnum(value, True, "05")
    if second >= 60:
        raise _Bad("05", value, ": second out of range")
    if micro:
        frac = value[:7]
        if len(frac) < 7 or frac[0] not in ".," or not (frac[1:].isascii() and
                                                       frac[1:].isdigit()):
            raise _Bad(".000000", value)
        value = value[7:]
    elif len(value) >= 2 and value[0] in ".," and value[1].isdigit():
        n = 1
        while n < len(value) and value[n].isascii() and value[n].isdigit():
            n += 1
        value = value[n:]
    value = _zone(value)
    if value:
        raise _Bad("", value, f": extra text: {_quote(value)}")
    if day < 1 or day > calendar.monthrange(year, month)[1]:
        raise _Bad("", value, ": day out of range")


def _zone(value: str) -> str:
    if value.startswith("Z"):
        return value[1:]
    if len(value) < 6 or value[3] != ":" or value[0] not in "+-":
        raise _Bad("Z07:00", value)
    for part in (value[1:3], value[4:6]):
        if not (part.isascii() and part.isdigit()):
            raise _Bad("Z07:00", value)
    if int(value[1:3]) > 24:
        raise _Bad("Z07:00", value[6:], ": time zone offset hour out of range")
    if int(value[4:6]) > 60:
        raise _Bad("Z07:00", value[6:], ": time zone offset minute out of range")
    return value[6:]


_B64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def check_base64(text: str) -> str | None:
    """``base64.StdEncoding.Decode`` as ``encoding/json`` runs it on a ``[]byte`` field:
    ``illegal base64 data at input byte N`` (N as Go counts it) or None."""
    src = text.encode()
    si = 0
    while True:
        si, bad = _quantum(src, si)
        if bad is not None:
            return f"illegal base64 data at input byte {bad}"
        if si >= len(src):
            return None


def _quantum(src: bytes, si: int) -> tuple[int, int | None]:
    """One 4-character quantum of ``Encoding.decodeQuantum``: (next index, bad offset)."""
    j = 0
    while j < 4:
        if si == len(src):
            if j == 0:
                return si, None
            return si, si - j  # a partial quantum (StdEncoding pads)
        c = src[si]
        si += 1
        if c in _B64:
            j += 1
            continue
        if c in b"\r\n":
            continue
        if c != ord("="):
            return si, si - 1
        if j in (0, 1):
            return si, si - 1
        if j == 2:
            while si < len(src) and src[si] in b"\r\n":
                si += 1
            if si == len(src):
                return si, len(src)
            if src[si] != ord("="):
                return si, si - 1
            si += 1
        while si < len(src) and src[si] in b"\r\n":
            si += 1
        if si < len(src):
            return si, si
        return si, None
    return si, None
