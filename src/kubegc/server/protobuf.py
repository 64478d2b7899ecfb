"""Decode ``application/vnd.kubernetes.protobuf`` request bodies into JSON-shaped objects.

kubectl's generator commands (``kubectl create namespace|configmap|secret|deployment|job|
cronjob|service|serviceaccount``) POST protobuf and have no JSON fallback, so the server
decodes them here and then handles the object exactly like a JSON body.

Wire format (k8s.io/apimachinery/pkg/runtime/serializer/protobuf): the 4-byte magic
``k8s\\x00`` followed by a ``runtime.Unknown`` {1: typeMeta{1: apiVersion, 2: kind}, 2: raw,
3: contentEncoding, 4: contentType}; ``raw`` is the typed message, decoded with the field
tables of ``protobuf_schema``. The result is what ``kubectl ... --dry-run=client -o json``
prints for the same command: unset scalars are omitted, pointer scalars keep an explicit
zero, nested structs appear even when empty (``"status": {}``), a zero ``Time`` is ``null``
(``"creationTimestamp": null``), bytes become base64, ``Time`` becomes RFC 3339.

Errors: a body without the magic or with broken wire data is 400 BadRequest; a kind without
a field table, or a compressed body, is 415 UnsupportedMediaType.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from kubegc.api import errors
from kubegc.api.limits import go_int, nesting_exceeds, without_surrogates
from kubegc.registry.typed.messages import EXCEEDED_MAX_DEPTH
from kubegc.server.protobuf_schema import MESSAGES, TOP_LEVEL

PROTOBUF_MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

VARINT, FIXED64, LENGTH_DELIMITED, FIXED32 = 0, 1, 2, 5


class WireError(ValueError):
    """The bytes are not valid protobuf wire format."""


class WireField(NamedTuple):
    number: int
    wire_type: int
    value: int | bytes  # an int for VARINT/FIXED32/FIXED64, bytes for LENGTH_DELIMITED


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """An unsigned varint at ``pos``; returns ``(value, next_pos)``."""
    result = shift = 0
    while True:
        if pos >= len(data):
            raise WireError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 64:
            raise WireError("varint longer than 10 bytes")


def iter_fields(data: bytes) -> Iterator[WireField]:
    """The fields of one message, in wire order (groups are rejected)."""
    pos = 0
    while pos < len(data):
        key, pos = read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0")
        if wire_type == VARINT:
            value, pos = read_varint(data, pos)
            yield WireField(number, wire_type, value)
        elif wire_type in (FIXED64, FIXED32):
            size = 8 if wire_type == FIXED64 else 4
            if pos + size > len(data):
                raise WireError("truncated fixed-width field")
            yield WireField(number, wire_type, int.from_bytes(data[pos:pos + size], "little"))
            pos += size
        elif wire_type == LENGTH_DELIMITED:
            length, pos = read_varint(data, pos)
            if pos + length > len(data):
                raise WireError("truncated length-delimited field")
            yield WireField(number, wire_type, data[pos:pos + length])
            pos += length
        else:
            raise WireError(f"unsupported wire type {wire_type}")


def _signed64(value: int) -> int:
    """int32/int64 varints carry negatives as 64-bit two's complement."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _as_int(field: WireField) -> int:
    if not isinstance(field.value, int):
        raise WireError(f"field {field.number}: expected a number")
    return _signed64(field.value)


def _as_bytes(field: WireField) -> bytes:
    if not isinstance(field.value, bytes):
        raise WireError(f"field {field.number}: expected length-delimited data")
    return field.value


# --- apimachinery special types --------------------------------------------------------


def _time(data: bytes, *, micro: bool) -> str | None:
    seconds = nanos = 0
    for f in iter_fields(data):
        if f.number == 1:
            seconds = _as_int(f)
        elif f.number == 2:
            nanos = _as_int(f)
    if seconds == 0 and nanos == 0:
        return None  # the zero Time, which JSON renders as null
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds)
    if micro:
        return (moment + timedelta(microseconds=nanos // 1000)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _int_or_string(data: bytes) -> int | str:
    kind, int_val, str_val = 0, 0, ""
    for f in iter_fields(data):
        if f.number == 1:
            kind = _as_int(f)
        elif f.number == 2:
            int_val = _as_int(f)
        elif f.number == 3:
            str_val = _as_bytes(f).decode()
    return str_val if kind == 1 else int_val


def _single_string(data: bytes) -> str:
    """``resource.Quantity`` {1: string}."""
    return next((_as_bytes(f).decode() for f in iter_fields(data) if f.number == 1), "")


def _raw_json(data: bytes) -> Any:
    """``FieldsV1``/``RawExtension`` {1: raw JSON bytes}."""
    raw = next((_as_bytes(f) for f in iter_fields(data) if f.number == 1), b"")
    if not raw:
        return None
    try:  # numbers as Go reads them; nesting bounded (``api.limits``)
        value = json.loads(raw, parse_int=go_int)
    except RecursionError:
        raise WireError(f"raw JSON: {EXCEEDED_MAX_DEPTH}") from None
    if nesting_exceeds(value):
        raise WireError(f"raw JSON: {EXCEEDED_MAX_DEPTH}")
    return without_surrogates(value)


_SPECIAL = {
    "Time": lambda data: _time(data, micro=False),
    "MicroTime": lambda data: _time(data, micro=True),
    "IntOrString": _int_or_string,
    "Quantity": _single_string,
    "FieldsV1": _raw_json,
}

# --- schema-driven decoding ------------------------------------------------------------


def _scalar(field: WireField, kind: str) -> Any:
    if kind == "string":
        return _as_bytes(field).decode()
    if kind == "bytes":
        return base64.b64encode(_as_bytes(field)).decode()
    if kind == "bool":
        return _as_int(field) != 0
    if kind == "int":
        return _as_int(field)
    return _value(_as_bytes(field), kind)


def _value(data: bytes, kind: str) -> Any:
    """A length-delimited value of a message or special type."""
    if kind in _SPECIAL:
        return _SPECIAL[kind](data)
    if kind not in MESSAGES:
        raise WireError(f"no field table for message {kind}")
    return decode_message(data, kind)


def _map_entry(data: bytes, value_kind: str) -> tuple[str, Any]:
    key: str = ""
    value: Any = "" if value_kind in ("string", "bytes", "Quantity") else None
    for f in iter_fields(data):
        if f.number == 1:
            key = _as_bytes(f).decode()
        elif f.number == 2:
            value = _scalar(f, value_kind)
    return key, value


def _is_zero(value: Any) -> bool:
    return value is None or value == "" or value is False or (
        isinstance(value, int) and not isinstance(value, bool) and value == 0)


def _repeated(out: dict[str, Any], name: str, field: WireField, kind: str) -> None:
    items = out.setdefault(name, [])
    if kind == "int" and field.wire_type == LENGTH_DELIMITED:
        packed = _as_bytes(field)
        pos = 0
        while pos < len(packed):
            value, pos = read_varint(packed, pos)
            items.append(_signed64(value))
        return
    items.append(_scalar(field, kind))


def decode_message(data: bytes, message: str) -> dict[str, Any]:
    """Decode one message with the ``MESSAGES[message]`` field table."""
    schema = MESSAGES[message]
    out: dict[str, Any] = {}
    for field in iter_fields(data):
        if field.number not in schema:
            continue  # a field kubegc has no table entry for
        name, kind = schema[field.number]
        if kind.startswith("[]"):
            _repeated(out, name, field, kind[2:])
        elif kind.startswith("map:"):
            key, value = _map_entry(_as_bytes(field), kind[4:])
            out.setdefault(name, {})[key] = value
        elif kind.startswith("inline:"):
            out.update(decode_message(_as_bytes(field), kind[7:]))
        elif kind.startswith("*"):
            out[name] = _scalar(field, kind[1:])
        elif kind in ("string", "int", "bool", "bytes"):
            value = _scalar(field, kind)
            if _is_zero(value):
                out.pop(name, None)  # Go marshals unset non-pointer scalars as zero
            else:
                out[name] = value
        else:
            out[name] = _scalar(field, kind)
    return out


def decode_protobuf_body(data: bytes) -> dict[str, Any]:
    """A kubectl protobuf request body as the JSON object it stands for.

    Raises 400 BadRequest for bytes that are not a Kubernetes protobuf envelope and 415
    UnsupportedMediaType for kinds (or encodings) kubegc cannot decode.
    """
    if not data.startswith(MAGIC):
        raise errors.bad_request(
            "provided data does not appear to be a protobuf message, expected prefix"
            " [107 56 115 0]")
    try:
        envelope = _envelope(data[len(MAGIC):])
        api_version, kind, raw, encoding = envelope
        if encoding:
            raise errors.unsupported_media_type(
                f'protobuf bodies with contentEncoding "{encoding}" are not supported')
        message = TOP_LEVEL.get((api_version, kind))
        if message is None:
            supported = ", ".join(f"{v} {k}" for v, k in TOP_LEVEL)
            raise errors.unsupported_media_type(
                f"kubegc cannot decode {PROTOBUF_MEDIA_TYPE} bodies of {api_version} {kind};"
                f" send it as application/json (protobuf is decoded for: {supported})")
        body = decode_message(raw, message)
    except (WireError, UnicodeDecodeError, ValueError) as err:  # JSON's errors are ValueErrors
        raise errors.bad_request(f"unable to decode protobuf body: {err}") from None
    return {"apiVersion": api_version, "kind": kind, **body}


class _Envelope(NamedTuple):
    api_version: str
    kind: str
    raw: bytes
    content_encoding: str


def _envelope(data: bytes) -> _Envelope:
    """``runtime.Unknown``: type meta, raw message, content encoding."""
    api_version = kind = encoding = ""
    raw = b""
    for field in iter_fields(data):
        if field.number == 1:
            for meta in iter_fields(_as_bytes(field)):
                if meta.number == 1:
                    api_version = _as_bytes(meta).decode()
                elif meta.number == 2:
                    kind = _as_bytes(meta).decode()
        elif field.number == 2:
            raw = _as_bytes(field)
        elif field.number == 3:
            encoding = _as_bytes(field).decode()
    return _Envelope(api_version, kind, raw, encoding)
