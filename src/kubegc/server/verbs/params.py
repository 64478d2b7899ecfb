"""Query-parameter helpers shared by the verb handlers."""

from __future__ import annotations

from kubegc.api import errors
from kubegc.server.http import Request, Response


def flag(request: Request, name: str) -> bool:
    return request.query.get(name, "").lower() in ("true", "1")


def dry_run(request: Request) -> bool:
    values = request.query.getall("dryRun", [])
    for v in values:
        if v != "All":
            raise errors.bad_request(f'Unsupported dry run value: "{v}"')
    return bool(values)


def int_param(request: Request, name: str, default: int = 0) -> int:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    return parse_int64(raw)


def parse_int64(raw: str) -> int:
    """``strconv.ParseInt(raw, 10, 64)``, as query parameters are converted upstream
    (``runtime.Convert_Slice_string_To_int64``): 400 with its error text."""
    digits = raw[1:] if raw[:1] in ("+", "-") else raw
    if not digits or not (digits.isascii() and digits.isdigit()):
        raise errors.bad_request(f'strconv.ParseInt: parsing "{raw}": invalid syntax')
    value = int(raw)
    if not -(2 ** 63) <= value < 2 ** 63:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{raw}": value out of range')
    return value


def field_validation(request: Request) -> str:
    """``fieldValidation`` (``Ignore``/``Warn``/``Strict``); upstream's default is Warn."""
    return request.query.get("fieldValidation", "") or "Warn"


#: kube-apiserver's warning recorder (``filters/warning.go``): warnings past 4 Ki runes in
#: all are each cut to 256 runes, and those that still do not fit are dropped
TRUNCATE_AT_TOTAL_RUNES = 4 * 1024
TRUNCATE_ITEM_RUNES = 256


def with_warnings(response: Response, warnings: list[str]) -> Response:
    """Attach ``Warning: 299 - "..."`` headers, as kube-apiserver reports warnings."""
    if sum(map(len, warnings)) > TRUNCATE_AT_TOTAL_RUNES:
        kept, written = [], 0
        for text in warnings:
            text = text[:TRUNCATE_ITEM_RUNES]
            if written + len(text) > TRUNCATE_AT_TOTAL_RUNES:
                break
            kept.append(text)
            written += len(text)
        warnings = kept
    for text in warnings:
        escaped = text.replace("\\", "\\\\").replace('"', '\\"')
        response.headers.add("Warning", f'299 - "{escaped}"')
    return response


def field_manager(request: Request, default: str = "") -> str:
    manager = request.query.get("fieldManager", "")
    if len(manager) > 128:
        raise errors.invalid("", "", "", [errors.field_error(
            "FieldValueTooLong", "fieldManager", "must have at most 128 characters")])
    if not manager:
        agent = request.headers.get("User-Agent", default or "unknown")
        manager = agent.split("/")[0][:128]
    return manager
