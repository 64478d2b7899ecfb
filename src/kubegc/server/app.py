"""The request handler: authentication, non-resource endpoints, and dispatch.

Every error leaves as a Kubernetes ``Status``; an unexpected exception becomes a 500
``InternalError`` for that request only (logged), never a dead server.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from typing import Any

import orjson

from kubegc.api import errors
from kubegc.api.errors import StatusError
from kubegc.api.limits import MAX_REQUEST_BODY_BYTES
from kubegc.registry.crd import resource_info_for, schema_for
from kubegc.server import discovery, openapi
from kubegc.server.context import ServerContext, json_response, status_response
from kubegc.server.http import AnyResponse, Handler, Request, RequestEntityTooLarge, Response
from kubegc.server.request_info import parse_resource_path
from kubegc.server.routes import handle_resource

log = logging.getLogger(__name__)

KUBERNETES_VERSION = {
    "major": "1", "minor": "32", "gitVersion": "v1.32.0+kubegc",
    "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
    "buildDate": "2026-11-30T00:00:00Z", "goVersion": "go1.23.3", "compiler": "gc",
    "platform": "linux/amd64",
}
_PUBLIC = frozenset({"/healthz", "/livez", "/readyz", "/version", "/version/"})
#: Request bodies up to 3 MiB, as kube-apiserver's default.
MAX_BODY = MAX_REQUEST_BODY_BYTES


def build_handler(ctx: ServerContext) -> Handler:
    """The handler of every request the HTTP server receives."""

    async def dispatch(request: Request) -> AnyResponse:
        try:
            if ctx.token is not None and request.path not in _PUBLIC:
                _authenticate(request, ctx.token)
            return await _route(ctx, request)
        except StatusError as e:
            return status_response(e)
        except RequestEntityTooLarge as e:
            return status_response(StatusError(413, "RequestEntityTooLarge", str(e)))
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        except Exception as e:
            log.exception("internal error serving %s %s", request.method, request.path_qs)
            return status_response(errors.internal_error(f"{type(e).__name__}: {e}"))

    return dispatch


def _authenticate(request: Request, token: str) -> None:
    header = request.headers.get("Authorization", "")
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip(), token):
        raise errors.unauthorized()


async def _route(ctx: ServerContext, request: Request) -> AnyResponse:
    path = request.path.rstrip("/") or "/"
    if path in ("/healthz", "/livez"):
        return Response(text="ok")
    if path == "/readyz":
        if ctx.ready():
            return Response(text="ok")
        return Response(text="[-]controllers not ready\nreadyz check failed", status=503)
    if path == "/version":
        return json_response(KUBERNETES_VERSION)
    if path.startswith("/openapi/"):
        return _openapi(ctx, request, path)
    for prefix, handler in ctx.debug_handlers.items():
        if path == prefix or path.startswith(prefix + "/"):
            return await handler(request)
    if request.method == "GET":
        found = _discovery(ctx, request, path)
        if found is not None:
            return found
    info = parse_resource_path(path)
    if info is None:
        raise errors.route_not_found()
    return await handle_resource(ctx, request, info)


def _discovery(ctx: ServerContext, request: Request, path: str) -> Response | None:
    catalog = ctx.registry.catalog
    parts = [p for p in path.split("/") if p]
    if path in ("/api", "/apis"):
        version = discovery.negotiate_discovery(request.headers.get("Accept", ""))
        if version is not None:
            doc = (discovery.aggregated_core if path == "/api" else discovery.aggregated_groups)(
                catalog, version)
            return _typed_json(doc, discovery.discovery_content_type(version))
        if path == "/api":
            return json_response(discovery.legacy_api_versions(ctx.server_address))
        return json_response(discovery.legacy_group_list(catalog))
    found: dict[str, Any] | None
    if len(parts) == 2 and parts[0] == "api":
        found = discovery.legacy_resource_list(catalog, "", parts[1])
    elif len(parts) == 2 and parts[0] == "apis":
        found = discovery.legacy_group(catalog, parts[1])
    elif len(parts) == 3 and parts[0] == "apis":
        found = discovery.legacy_resource_list(catalog, parts[1], parts[2])
    else:
        return None
    if found is None:
        raise errors.route_not_found()
    return json_response(found)


def _typed_json(doc: Any, content_type: str) -> Response:
    response = Response(body=orjson.dumps(doc))
    response.headers["Content-Type"] = content_type
    return response


def _crd_schemas(ctx: ServerContext) -> dict[tuple[str, str, str], dict[str, Any]]:
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for crd in ctx.registry.crds.values():
        info = resource_info_for(crd)
        if info is None:
            continue
        for version in info.versions:
            schema = schema_for(crd, version)
            if schema is not None:
                out[(info.group, version, info.kind)] = schema
    return out


_openapi_cache: dict[tuple[Any, ...], Any] = {}


def _openapi(ctx: ServerContext, request: Request, path: str) -> Response:
    """OpenAPI v3 documents, cached until the catalog or a CRD changes."""
    catalog = ctx.registry.catalog
    version_key = (id(ctx), catalog.generation, tuple(sorted(
        (n, c["metadata"].get("resourceVersion", "")) for n, c in ctx.registry.crds.items())))
    cache_key = (*version_key, path)
    if cache_key not in _openapi_cache:
        if len(_openapi_cache) > 256:
            _openapi_cache.clear()
        _openapi_cache[cache_key] = _openapi_document(ctx, path)
    doc = _openapi_cache[cache_key]
    if doc is None:
        raise errors.route_not_found()
    return json_response(doc)


def _openapi_document(ctx: ServerContext, path: str) -> Any:
    catalog = ctx.registry.catalog
    if path == "/openapi/v3":
        return openapi.openapi_v3_index(catalog, _crd_schemas(ctx))
    if path.startswith("/openapi/v3/"):
        gv = openapi.parse_group_version_path(path[len("/openapi/v3/"):])
        if gv is not None:
            return openapi.openapi_v3_group_version(catalog, gv[0], gv[1], _crd_schemas(ctx))
    return None
