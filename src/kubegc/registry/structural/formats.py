"""String formats a CRD schema can ask for, validated as kube-openapi's ``strfmt.Default``
registry does; every other format (``int32``, ``int64``, ``float``, ``double``, …) is
dropped when the schema is compiled, as ``StripUnsupportedFormatsPostProcess`` does
upstream, so it validates nothing."""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Callable
from datetime import date
from urllib.parse import urlsplit

_UUID = r"^[0-9a-f]{8}-?[0-9a-f]{4}-?%s-?%s-?[0-9a-f]{12}$"
_TIME = re.compile(r"^(\d{2}):(\d{2}):(\d{2})(\.\d+)?(z|[+-]\d{2}:\d{2})$")
_DURATION = re.compile(
    r"^[-+]?(\d+(\.\d*)?\s*(ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|"
    r"seconds?|minutes?|hours?|days?|weeks?)\s*)+$")
_HOSTNAME = re.compile(
    r"^([a-zA-Z0-9](-?[a-zA-Z0-9]{0,62})?|([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+"
    r"[a-zA-Z]{2,63})$")
_MAC = re.compile(r"^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$")


def _regex(pattern: str, flags: int = 0) -> Callable[[str], bool]:
    compiled = re.compile(pattern, flags)
    return lambda value: compiled.search(value) is not None


def _is_date(value: str) -> bool:
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return len(value) == 10


def _is_date_time(value: str) -> bool:
    day, sep, rest = value.lower().partition("t")
    m = _TIME.match(rest) if sep else None
    return bool(m and _is_date(day) and m[1] <= "23" and m[2] <= "59" and m[3] <= "59")


def _is_ip(version: int) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        try:
            return ipaddress.ip_address(value).version == version
        except ValueError:
            return False
    return check


def _is_cidr(value: str) -> bool:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return False
    return "/" in value


def _is_uri(value: str) -> bool:
    if value.startswith("/"):
        return True
    try:
        return bool(urlsplit(value).scheme)
    except ValueError:
        return False


def _is_byte(value: str) -> bool:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


_VALIDATORS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": _regex(r"^[0-9a-fA-F]{24}$"),
    "uri": _is_uri,
    "email": _regex(r"^[^@\s<>]+@[^@\s<>]+$"),
    "hostname": lambda v: len(v) <= 255 and _HOSTNAME.match(v) is not None,
    "ipv4": _is_ip(4),
    "ipv6": _is_ip(6),
    "cidr": _is_cidr,
    "mac": lambda v: _MAC.match(v) is not None,
    "uuid": _regex(_UUID % ("[0-9a-f]{4}", "[0-9a-f]{4}"), re.I),
    "uuid3": _regex(_UUID % ("3[0-9a-f]{3}", "[0-9a-f]{4}"), re.I),
    "uuid4": _regex(_UUID % ("4[0-9a-f]{3}", "[89ab][0-9a-f]{3}"), re.I),
    "uuid5": _regex(_UUID % ("5[0-9a-f]{3}", "[89ab][0-9a-f]{3}"), re.I),
    "isbn": _regex(r"^(?:\d{9}[\dXx]|(?:97[89][- ]?)?\d{1,5}[- ]?\d+[- ]?\d+[- ]?[\dXx])$"),
    "isbn10": _regex(r"^(?:\d{9}[\dXx]|\d{1,5}[- ]\d+[- ]\d+[- ][\dXx])$"),
    "isbn13": _regex(r"^(?:97[89][- ]?)?\d{1,5}[- ]?\d+[- ]?\d+[- ]?\d$"),
    "creditcard": lambda v: re.fullmatch(
        r"4\d{12}(?:\d{3})?|5[1-5]\d{14}|6(?:011|5\d\d)\d{12}|3[47]\d{13}|3(?:0[0-5]|[68]\d)"
        r"\d{11}|(?:2131|1800|35\d{3})\d{11}", re.sub(r"\D", "", v)) is not None,
    "ssn": _regex(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$"),
    "hexcolor": _regex(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"),
    "rgbcolor": _regex(r"^rgb\(\s*\d{1,3}\s*,\s*\d{1,3}\s*,\s*\d{1,3}\s*\)$"),
    "byte": _is_byte,
    "password": lambda v: True,
    "date": _is_date,
    "duration": lambda v: _DURATION.match(v) is not None,
    "datetime": _is_date_time,
}


def supported_format(name: object) -> str:
    """``name`` if kube-apiserver validates it (``date-time`` and ``datetime`` alike), else
    ``""``."""
    if not isinstance(name, str):
        return ""
    return name if name.replace("-", "") in _VALIDATORS else ""


def format_valid(name: str, value: str) -> bool:
    """Whether ``value`` is in format ``name`` (a name ``supported_format`` kept)."""
    return _VALIDATORS[name.replace("-", "")](value)
