"""PUT: update (200), or create when the resource allows it (201)."""

from __future__ import annotations

from kubegc.api import errors
from kubegc.registry import Target
from kubegc.server.context import ServerContext, json_response
from kubegc.server.http import Request, Response
from kubegc.server.negotiation import decode_body
from kubegc.server.verbs.params import dry_run, field_manager, field_validation, with_warnings


async def update(ctx: ServerContext, request: Request, t: Target, name: str,
                 subresource: str) -> Response:
    body = decode_body(await request.read(), request.headers.get("Content-Type", ""),
                       t.info.kind)
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be an object")
    warnings: list[str] = []
    obj, created = await ctx.registry.update(
        t, name, body, subresource=subresource, dry_run=dry_run(request),
        field_manager=field_manager(request), field_validation=field_validation(request),
        warnings=warnings)
    return with_warnings(json_response(obj, status=201 if created else 200), warnings)
