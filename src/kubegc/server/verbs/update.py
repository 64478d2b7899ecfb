"""PUT: update (200), or create when the resource allows it (201)."""

from __future__ import annotations

from kubegc.api import errors
from kubegc.registry import Target
from kubegc.registry.generic.rest import Storage, Updater
from kubegc.server.context import ServerContext, json_response
from kubegc.server.http import Request, Response
from kubegc.server.verbs.create import body_object, write_options
from kubegc.server.verbs.params import with_warnings


async def update(ctx: ServerContext, request: Request, storage: Storage, t: Target,
                 name: str) -> Response:
    if not isinstance(storage, Updater):
        raise errors.method_not_supported(t.gr, "update")
    body = await body_object(request, storage.kind.kind if storage.kind else t.info.kind)
    options = write_options(request)
    obj, created = await storage.update(t, name, body, options)
    return with_warnings(json_response(obj, status=201 if created else 200), options.warnings)
