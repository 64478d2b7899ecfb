"""PATCH: JSON patch, merge patch, strategic merge patch, server-side apply."""

from __future__ import annotations

from kubegc.api import errors
from kubegc.registry import Target
from kubegc.registry.generic.rest import Patcher, Storage, WriteOptions
from kubegc.server.context import ServerContext, json_response
from kubegc.server.http import Request, Response
from kubegc.server.verbs.params import (
    dry_run,
    field_manager,
    field_validation,
    flag,
    with_warnings,
)

APPLY = "application/apply-patch+yaml"


async def patch(ctx: ServerContext, request: Request, storage: Storage, t: Target,
                name: str) -> Response:
    if not isinstance(storage, Patcher):
        raise errors.method_not_supported(t.gr, "patch")
    content_type = request.headers.get("Content-Type", "").split(";")[0].strip()
    # an apply names its manager; any other patch defaults it from the User-Agent
    manager = request.query.get("fieldManager", "") or (
        field_manager(request) if content_type != APPLY else "")
    options = WriteOptions(dry_run=dry_run(request), field_manager=manager,
                           field_validation=field_validation(request),
                           force=flag(request, "force"))
    obj, created = await storage.patch(t, name, content_type, await request.read(), options)
    return with_warnings(json_response(obj, status=201 if created else 200), options.warnings)
