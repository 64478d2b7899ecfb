"""POST: create (201 with the stored object: the bytes written, resourceVersion spliced in)."""

from __future__ import annotations

from kubegc.api import errors
from kubegc.registry import Target
from kubegc.server.context import ServerContext, encoded_response
from kubegc.server.http import Request, Response
from kubegc.server.negotiation import decode_body
from kubegc.server.verbs.params import dry_run, field_manager, field_validation, with_warnings


async def create(ctx: ServerContext, request: Request, t: Target) -> Response:
    body = decode_body(await request.read(), request.headers.get("Content-Type", ""),
                       t.info.kind)
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be an object")
    warnings: list[str] = []
    created = await ctx.registry.create_stored(
        t, body, dry_run=dry_run(request), field_manager=field_manager(request),
        field_validation=field_validation(request), warnings=warnings)
    return with_warnings(encoded_response(created.encoded(), 201),
                         warnings)
