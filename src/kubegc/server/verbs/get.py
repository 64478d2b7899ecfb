"""GET of one object and LIST (plain, Table, or PartialObjectMetadata), and the raw GET of a
connecter (``pods/log``)."""

from __future__ import annotations

from typing import Any

from kubegc.api import errors
from kubegc.api.types import Obj
from kubegc.registry import Target
from kubegc.registry.generic.rest import (
    Connecter,
    EncodedGetter,
    EncodedLister,
    Getter,
    Lister,
    ListOptions,
    Storage,
)
from kubegc.registry.validation.objectmeta import validate_list_options
from kubegc.server.context import (
    ServerContext,
    can_stream,
    encoded_response,
    encoded_stream_response,
    json_response,
)
from kubegc.server.http import AnyResponse, Request, Response
from kubegc.server.negotiation import Shape, partial_metadata, partial_metadata_list, response_shape
from kubegc.server.tables import table_version, to_table
from kubegc.server.verbs.params import int_param


def table(ctx: ServerContext, request: Request, t: Target, objects: list[Obj],
          list_metadata: dict[str, Any]) -> dict[str, Any]:
    """``objects`` as the Table ``kubectl get`` asked for."""
    return to_table(
        ctx.registry.table(t), objects, now=ctx.clock.now(),
        include_object=request.query.get("includeObject", "Metadata"),
        version=table_version(request.headers.get("Accept", "")) or "v1",
        list_metadata=list_metadata)


async def get(ctx: ServerContext, request: Request, storage: Storage, t: Target,
              name: str) -> Response:
    if not isinstance(storage, Getter):
        raise errors.method_not_supported(t.gr, "get")
    await ctx.registry.ensure_fresh(request.query.get("resourceVersion", ""))
    shape = response_shape(request.headers.get("Accept", ""))
    if shape is Shape.OBJECT and isinstance(storage, EncodedGetter):
        encoded = await storage.get_encoded(t, name)
        if encoded is not None:
            return encoded_response(encoded)
    obj = await storage.get(t, name)
    if shape is Shape.TABLE:
        return json_response(table(ctx, request, t, [obj], {
            "resourceVersion": obj["metadata"].get("resourceVersion", "")}))
    if shape is Shape.METADATA:
        return json_response(partial_metadata(obj))
    return json_response(obj)


def list_options(request: Request) -> ListOptions:
    """A LIST's options from its query, checked as ``ValidateListOptions`` (422)."""
    q = request.query
    causes = validate_list_options(q.get("resourceVersion", ""), q.get("resourceVersionMatch", ""),
                                   q.get("continue", ""), "sendInitialEvents" in q)
    if causes:
        raise errors.invalid("ListOptions", "meta.k8s.io", "", causes)
    return ListOptions(
        label_selector=q.get("labelSelector", ""), field_selector=q.get("fieldSelector", ""),
        limit=int_param(request, "limit"), continue_=q.get("continue", ""),
        resource_version=q.get("resourceVersion", ""),
        resource_version_match=q.get("resourceVersionMatch", ""))


async def list_(ctx: ServerContext, request: Request, storage: Storage, t: Target,
                name: str = "") -> AnyResponse:
    if not isinstance(storage, Lister):
        raise errors.method_not_supported(t.gr, "list")
    options = list_options(request)
    await ctx.registry.ensure_fresh(options.resource_version, options.resource_version_match)
    shape = response_shape(request.headers.get("Accept", ""))
    if shape is Shape.OBJECT and isinstance(storage, EncodedLister):
        return await _list_encoded(request, storage, t, options) or await _list_decoded(
            ctx, request, storage, t, options, shape)
    return await _list_decoded(ctx, request, storage, t, options, shape)


async def _list_encoded(request: Request, storage: EncodedLister, t: Target,
                        options: ListOptions) -> AnyResponse | None:
    """The list from the stored bytes: streamed when it can be (a deprecated API's answer
    carries a Warning header added once it is made: never streamed), else whole; None when
    the storage must decode it."""
    if can_stream(request) and storage.deprecation is None:
        pieces = await storage.list_encoded_stream(t, options)
        if pieces is not None:
            return await encoded_stream_response(request, pieces)
    encoded = await storage.list_encoded(t, options)
    return None if encoded is None else encoded_response(encoded)


async def _list_decoded(ctx: ServerContext, request: Request, storage: Lister, t: Target,
                        options: ListOptions, shape: Shape) -> Response:
    listed = await storage.list(t, options)
    if shape is Shape.TABLE:
        return json_response(table(ctx, request, t, listed["items"], listed["metadata"]))
    if shape is Shape.METADATA:
        return json_response(partial_metadata_list(listed))
    return json_response(listed)


async def connect(ctx: ServerContext, request: Request, storage: Storage, t: Target,
                  name: str) -> Response:
    """A connecter's raw answer (``pods/log``'s text)."""
    if not isinstance(storage, Connecter):
        raise errors.method_not_supported(t.gr, "connect")
    raw = await storage.connect(t, name)
    return Response(body=raw.body, content_type=raw.content_type)
