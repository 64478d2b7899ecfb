"""Query-parameter helpers shared by the verb handlers."""

from __future__ import annotations

from aiohttp import web

from kubegc.api import errors


def flag(request: web.Request, name: str) -> bool:
    return request.query.get(name, "").lower() in ("true", "1")


def dry_run(request: web.Request) -> bool:
    values = request.query.getall("dryRun", [])
    for v in values:
        if v != "All":
            raise errors.bad_request(f'Unsupported dry run value: "{v}"')
    return bool(values)


def int_param(request: web.Request, name: str, default: int = 0) -> int:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise errors.bad_request(f'invalid value for {name}: "{raw}"') from None


def field_manager(request: web.Request, default: str = "") -> str:
    manager = request.query.get("fieldManager", "")
    if len(manager) > 128:
        raise errors.invalid("", "", "", [errors.field_error(
            "FieldValueTooLong", "fieldManager", "must have at most 128 characters")])
    if not manager:
        agent = request.headers.get("User-Agent", default or "unknown")
        manager = agent.split("/")[0][:128]
    return manager
