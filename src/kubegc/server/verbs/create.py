"""POST: create (201 with the stored object: the bytes written, resourceVersion spliced in),
or a create-only resource's answer (a review, a binding's Status, a TokenRequest)."""

from __future__ import annotations

from typing import Any

from kubegc.api import errors
from kubegc.registry import Target
from kubegc.registry.generic.rest import Creater, NamedCreater, Storage, WriteOptions
from kubegc.registry.generic.target import Created
from kubegc.server.context import ServerContext, encoded_response, json_response
from kubegc.server.faults.requestlog import note_created_name
from kubegc.server.http import Request, Response
from kubegc.server.negotiation import decode_body
from kubegc.server.verbs.params import dry_run, field_manager, field_validation, with_warnings


def write_options(request: Request) -> WriteOptions:
    """A write's options from its query (``CreateOptions`` / ``UpdateOptions``)."""
    return WriteOptions(dry_run=dry_run(request), field_manager=field_manager(request),
                        field_validation=field_validation(request))


async def body_object(request: Request, kind: str) -> dict[str, Any]:
    """The request's body, decoded as its Content-Type says; it must be an object."""
    body = decode_body(await request.read(), request.headers.get("Content-Type", ""), kind)
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be an object")
    return body


def _kind(storage: Storage, t: Target) -> str:
    return storage.kind.kind if storage.kind is not None else t.info.kind


async def create(ctx: ServerContext, request: Request, storage: Storage, t: Target,
                 name: str = "") -> Response:
    if not isinstance(storage, Creater):
        raise errors.method_not_supported(t.gr, "create")
    body = await body_object(request, t.info.kind)
    note_created_name(request, body)  # for the request log (server/faults/requestlog.py)
    options = write_options(request)
    created = await storage.create(t, body, options)
    response = (encoded_response(created.encoded(), 201) if isinstance(created, Created)
                else json_response(created, 201))
    return with_warnings(response, options.warnings)


async def create_named(ctx: ServerContext, request: Request, storage: Storage, t: Target,
                       name: str) -> Response:
    """POST to an object's subresource (``pods/<name>/binding``,
    ``serviceaccounts/<name>/token``)."""
    if not isinstance(storage, NamedCreater):
        raise errors.method_not_supported(t.gr, "create")
    body = await body_object(request, _kind(storage, t))
    options = write_options(request)
    answer = await storage.create_named(t, name, body, options)
    return with_warnings(json_response(answer, 201), options.warnings)
