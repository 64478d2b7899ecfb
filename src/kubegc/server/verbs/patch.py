"""PATCH: JSON patch, merge patch, strategic merge patch, server-side apply."""

from __future__ import annotations

from kubegc.registry import Target
from kubegc.server.context import ServerContext, json_response
from kubegc.server.http import Request, Response
from kubegc.server.verbs.params import (
    dry_run,
    field_manager,
    field_validation,
    flag,
    with_warnings,
)


async def patch(ctx: ServerContext, request: Request, t: Target, name: str,
                subresource: str) -> Response:
    content_type = request.headers.get("Content-Type", "").split(";")[0].strip()
    warnings: list[str] = []
    obj, created = await ctx.registry.patch(
        t, name, content_type, await request.read(), subresource=subresource,
        dry_run=dry_run(request), field_manager=request.query.get("fieldManager", "") or (
            field_manager(request) if content_type != "application/apply-patch+yaml" else ""),
        force=flag(request, "force"), field_validation=field_validation(request),
        warnings=warnings)
    return with_warnings(json_response(obj, status=201 if created else 200), warnings)
