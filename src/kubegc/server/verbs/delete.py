"""DELETE of one object and DELETE of a collection; DeleteOptions from query and body."""

from __future__ import annotations

from typing import Any

import orjson

from kubegc.api import errors
from kubegc.api.limits import may_nest_deeper, nesting_exceeds
from kubegc.api.meta import DeleteOptions
from kubegc.registry import Target
from kubegc.registry.generic.decoding import check_delete_options
from kubegc.registry.generic.rest import CollectionDeleter, GracefulDeleter, ListOptions, Storage
from kubegc.registry.typed.messages import too_deep
from kubegc.registry.validation.objectmeta import parse_delete_options
from kubegc.server.context import ServerContext, json_response
from kubegc.server.http import Request, Response
from kubegc.server.protobuf import PROTOBUF_MEDIA_TYPE, decode_protobuf_body
from kubegc.server.verbs.params import int_param


async def delete_options(request: Request) -> DeleteOptions:
    """DeleteOptions merged from the query and the JSON body (body wins), as upstream,
    checked (``ValidateDeleteOptions``)."""
    options: dict[str, Any] = {}
    q = request.query
    if "gracePeriodSeconds" in q:
        options["gracePeriodSeconds"] = int_param(request, "gracePeriodSeconds")
    if "propagationPolicy" in q:
        options["propagationPolicy"] = q["propagationPolicy"]
    if "orphanDependents" in q:
        options["orphanDependents"] = q["orphanDependents"].lower() == "true"
    if q.getall("dryRun", []):
        options["dryRun"] = q.getall("dryRun")
    body = await request.read()
    content_type = request.headers.get("Content-Type", "").split(";")[0].strip()
    if body.strip():
        decoded = _decode_body(body, content_type)
        if not isinstance(decoded, dict):
            raise errors.bad_request("DeleteOptions must be an object")
        check_delete_options(decoded)
        for key in ("gracePeriodSeconds", "propagationPolicy", "orphanDependents",
                    "preconditions", "dryRun"):
            if decoded.get(key) is not None:
                options[key] = decoded[key]
    return parse_delete_options(options)


def _decode_body(body: bytes, content_type: str) -> Any:
    """A DeleteOptions body as JSON values, nested no deeper than any body
    (``api.limits.MAX_NESTING``, with Go's "exceeded max depth")."""
    if content_type == PROTOBUF_MEDIA_TYPE:
        return decode_protobuf_body(body)
    try:
        decoded = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        if str(e).startswith(_ORJSON_TOO_DEEP):
            raise too_deep(DELETE_OPTIONS, body) from None
        raise errors.bad_request(f"couldn't decode DeleteOptions: {e}") from None
    if may_nest_deeper(body, yaml=False) and nesting_exceeds(decoded):
        raise too_deep(DELETE_OPTIONS, body)
    return decoded


DELETE_OPTIONS = "DeleteOptions"
#: orjson's error past its own nesting limit (1024)
_ORJSON_TOO_DEEP = "depth limit exceeded"


async def delete(ctx: ServerContext, request: Request, storage: Storage, t: Target,
                 name: str) -> Response:
    if not isinstance(storage, GracefulDeleter):
        raise errors.method_not_supported(t.gr, "delete")
    options = await delete_options(request)
    obj, removed = await storage.delete(t, name, options)
    answer = storage.deleted_answer(t, name, obj) if removed else None
    return json_response(obj if answer is None else answer)


async def delete_collection(ctx: ServerContext, request: Request, storage: Storage, t: Target,
                            name: str = "") -> Response:
    if not isinstance(storage, CollectionDeleter):
        raise errors.method_not_supported(t.gr, "deletecollection")
    options = await delete_options(request)
    listed = await storage.delete_collection(t, options, ListOptions(
        label_selector=request.query.get("labelSelector", ""),
        field_selector=request.query.get("fieldSelector", "")))
    return json_response(listed)
