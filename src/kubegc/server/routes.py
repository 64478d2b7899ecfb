"""Route a resource request to the verb of the storage it addresses (cf. the handler
installer's ``registerResourceHandlers``).

What a path serves follows from the interfaces its storage implements
(``kubegc.registry.generic.rest``), as upstream registers routes from them: a collection
path serves LIST and WATCH (``Lister``, ``Watcher``), POST (``Creater``) and DELETE
(``CollectionDeleter``); an object's path GET (``Getter``), PUT (``Updater``), PATCH
(``Patcher``), DELETE (``GracefulDeleter``) and POST (``NamedCreater``, to a
subresource); a subresource's GET may be a ``Connecter``'s raw answer. A namespaced
resource's collection across namespaces serves LIST and WATCH only. A path no interface
of its storage serves is 404 (go-restful finds no route); a method none serves on a
served path is 405. No resource is known here by its name.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Awaitable, Callable

from kubegc.api import errors
from kubegc.registry import Target, not_allowed
from kubegc.registry.generic import rest
from kubegc.server.context import ServerContext
from kubegc.server.http import AnyResponse, Request, Response
from kubegc.server.request_info import RequestInfo
from kubegc.server.verbs import create, delete, get, patch, update, watch
from kubegc.server.verbs.params import flag, with_warnings

Handler = Callable[[ServerContext, Request, rest.Storage, Target, str], Awaitable[AnyResponse]]


class Path(enum.Enum):
    """The shapes of a resource path upstream's installer registers routes on."""

    COLLECTION = "collection"  # /<resource>, /namespaces/<ns>/<resource>
    ALL_NAMESPACES = "all-namespaces"  # /<resource> of a namespaced resource
    ITEM = "item"  # .../<resource>/<name>, .../<resource>/<name>/<subresource>
    WATCH = "watch"  # the legacy /watch/ prefix


async def _list_or_watch(ctx: ServerContext, request: Request, storage: rest.Storage,
                         t: Target, name: str) -> AnyResponse:
    if flag(request, "watch"):
        return await watch.watch(ctx, request, storage, t)
    return await get.list_(ctx, request, storage, t)


async def _get_or_watch(ctx: ServerContext, request: Request, storage: rest.Storage,
                        t: Target, name: str) -> AnyResponse:
    if flag(request, "watch"):
        return await watch.watch(ctx, request, storage, t, name)
    return await get.get(ctx, request, storage, t, name)


async def _watch(ctx: ServerContext, request: Request, storage: rest.Storage,
                 t: Target, name: str) -> AnyResponse:
    return await watch.watch(ctx, request, storage, t, name)


@functools.lru_cache(maxsize=256)
def routes(storage_class: type[rest.Storage], path: Path) -> dict[str, Handler]:
    """The methods a storage of ``storage_class`` serves on ``path``, and their handlers
    (cached per class: a storage's interfaces are its class's)."""
    s = storage_class
    found: dict[str, Handler | None] = {}
    if path is Path.WATCH:
        found["GET"] = _watch if issubclass(s, rest.Watcher) else None
    elif path in (Path.COLLECTION, Path.ALL_NAMESPACES):
        found["GET"] = _list_or_watch if issubclass(s, (rest.Lister, rest.Watcher)) else None
        if path is Path.COLLECTION:
            found["POST"] = create.create if issubclass(s, rest.Creater) else None
            found["DELETE"] = (delete.delete_collection
                               if issubclass(s, rest.CollectionDeleter) else None)
    else:
        connects = getattr(s, "connect_methods", ()) if issubclass(s, rest.Connecter) else ()
        found["GET"] = (_get_or_watch if issubclass(s, rest.Getter)
                        else get.connect if "GET" in connects else None)
        found["PUT"] = update.update if issubclass(s, rest.Updater) else None
        found["PATCH"] = patch.patch if issubclass(s, rest.Patcher) else None
        found["DELETE"] = delete.delete if issubclass(s, rest.GracefulDeleter) else None
        found["POST"] = create.create_named if issubclass(s, rest.NamedCreater) else None
    return {method: handler for method, handler in found.items() if handler is not None}


def _path(info: RequestInfo, t: Target) -> Path:
    if info.watch_path:
        return Path.WATCH
    if info.name:
        return Path.ITEM
    if t.info.namespaced and not info.namespace:
        return Path.ALL_NAMESPACES
    return Path.COLLECTION


async def handle_resource(ctx: ServerContext, request: Request,
                          info: RequestInfo) -> AnyResponse:
    t, storage = ctx.registry.route(info.group, info.version, info.resource, info.namespace,
                                    info.subresource)
    if info.namespace and not t.info.namespaced:
        raise errors.route_not_found()
    served = routes(type(storage), _path(info, t))
    if not served:
        raise errors.route_not_found()
    handler = served.get(request.method)
    if handler is None:
        raise not_allowed(t)
    response = await handler(ctx, request, storage, t, info.name)
    if storage.deprecation and isinstance(response, Response):
        with_warnings(response, [storage.deprecation])
    return response


__all__ = ["Path", "handle_resource", "routes"]
