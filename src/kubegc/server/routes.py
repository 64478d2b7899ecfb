"""Dispatch a resource request to its verb handler (cf. ``registerResourceHandlers``)."""

from __future__ import annotations

from kubegc.api import errors
from kubegc.registry import Target
from kubegc.server.context import ServerContext, json_response
from kubegc.server.http import AnyResponse, Request, Response
from kubegc.server.request_info import RequestInfo
from kubegc.server.verbs import (
    binding,
    componentstatus,
    create,
    delete,
    get,
    patch,
    review,
    scale,
    selfsubjectreview,
    token,
    tokenreview,
    update,
    watch,
)
from kubegc.server.verbs.params import flag


async def handle_resource(ctx: ServerContext, request: Request,
                          info: RequestInfo) -> AnyResponse:
    t = ctx.registry.target(info.group, info.version, info.resource, info.namespace)
    if t.info.group == "" and t.info.resource == "componentstatuses":  # computed, not stored
        if info.subresource or info.namespace:
            raise errors.route_not_found()
        return await componentstatus.serve(ctx, request, t, info.name)
    if t.info.group == "" and t.info.resource == "bindings":  # create-only, not stored
        if info.name or not info.namespace:
            raise _not_allowed(t.gr, request.method)
        return await binding.create(ctx, request, info.namespace)
    if (t.info.group, t.info.resource) == ("authentication.k8s.io", "selfsubjectreviews"):
        if info.name or info.namespace or info.subresource:  # create-only, not stored
            raise errors.route_not_found()
        return await selfsubjectreview.create(ctx, request)
    if t.info.group == "authorization.k8s.io":  # reviews: create-only, not stored
        if info.subresource or (t.info.namespaced and not info.namespace):
            raise errors.route_not_found()
        return await review.create(ctx, request, t, info.name)
    if (t.info.group, t.info.resource) == ("authentication.k8s.io", "tokenreviews"):
        if info.namespace:  # create-only, not stored, cluster-scoped
            raise errors.route_not_found()
        if info.name or info.subresource or request.method != "POST":
            raise _not_allowed(t.gr, request.method)
        return await tokenreview.create(ctx, request)
    method = request.method
    if info.subresource:
        return await _subresource(ctx, request, info, t)
    if info.name:
        if method == "GET":
            if info.watch_path or flag(request, "watch"):
                return await watch.watch(ctx, request, t, info.name)
            return await get.get(ctx, request, t, info.name)
        if method == "PUT":
            return await update.update(ctx, request, t, info.name, "")
        if method == "PATCH":
            return await patch.patch(ctx, request, t, info.name, "")
        if method == "DELETE":
            return await delete.delete(ctx, request, t, info.name)
        raise _not_allowed(t.gr, method)
    if t.info.namespaced is False and info.namespace:
        raise errors.route_not_found()
    if method == "GET":
        if info.watch_path or flag(request, "watch"):
            return await watch.watch(ctx, request, t)
        return await get.list_(ctx, request, t)
    if method == "POST":
        if t.info.namespaced and not info.namespace:
            raise errors.route_not_found()
        return await create.create(ctx, request, t)
    if method == "DELETE":
        if not t.info.supports("deletecollection"):
            raise _not_allowed(t.gr, method)
        return await delete.delete_collection(ctx, request, t)
    raise _not_allowed(t.gr, method)


async def _subresource(ctx: ServerContext, request: Request, info: RequestInfo,
                       t: Target) -> AnyResponse:
    if not t.info.has_subresource(info.subresource):
        raise errors.route_not_found()
    method = request.method
    if info.subresource == "binding":
        return await binding.create(ctx, request, info.namespace, info.name)
    if info.subresource == "token":
        return await token.create(ctx, request, info.namespace, info.name)
    if info.subresource == "scale":
        return await scale.scale(ctx, request, t, info.name)
    if info.subresource == "log":
        obj = await ctx.registry.get(t, info.name)
        text = f"(kubegc simulates pod {obj['metadata']['name']}: there is no container log)\n"
        return Response(text=text, content_type="text/plain")
    if info.subresource == "finalize":
        if method != "PUT":
            raise _not_allowed(t.gr, method)
        return await update.update(ctx, request, t, info.name, "finalize")
    if method == "GET":
        return json_response(await ctx.registry.get(t, info.name))
    if method == "PUT":
        return await update.update(ctx, request, t, info.name, info.subresource)
    if method == "PATCH":
        return await patch.patch(ctx, request, t, info.name, info.subresource)
    raise _not_allowed(t.gr, method)


def _not_allowed(gr: errors.GroupResource, method: str) -> errors.StatusError:
    return errors.StatusError(405, "MethodNotAllowed",
                              "the server does not allow this method on the requested resource",
                              group=gr.group, kind=gr.resource)


__all__ = ["handle_resource"]
