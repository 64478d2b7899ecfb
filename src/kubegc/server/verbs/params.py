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
    try:
        return int(raw)
    except ValueError:
        raise errors.bad_request(f'invalid value for {name}: "{raw}"') from None


def field_validation(request: Request) -> str:
    """``fieldValidation`` (``Ignore``/``Warn``/``Strict``); upstream's default is Warn."""
    return request.query.get("fieldValidation", "") or "Warn"


def with_warnings(response: Response, warnings: list[str]) -> Response:
    """Attach ``Warning: 299 - "..."`` headers, as kube-apiserver reports warnings."""
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
