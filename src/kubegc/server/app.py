"""The request handler: authentication, impersonation, authorization, non-resource
endpoints, and dispatch (kube-apiserver's handler chain: ``WithAuthentication``,
``WithImpersonation``, ``WithAuthorization``).

Every error leaves as a Kubernetes ``Status``; an unexpected exception becomes a 500
``InternalError`` for that request only (logged), never a dead server.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from kubegc.api import errors
from kubegc.api.auth import Decision, UserInfo, as_user, request_user
from kubegc.api.errors import StatusError
from kubegc.api.limits import MAX_REQUEST_BODY_BYTES, ensure_recursion_headroom
from kubegc.api.version import BINARY_GIT_VERSION, BINARY_VERSION
from kubegc.api.warning import recording
from kubegc.server import discovery
from kubegc.server.audit import Auditor, RequestAudit
from kubegc.server.context import DebugHandler, ServerContext, json_response, status_response
from kubegc.server.http import AnyResponse, Handler, Request, RequestEntityTooLarge, Response
from kubegc.server.impersonation import ImpersonationError, impersonate, internal_error_text
from kubegc.server.openapi_handler import serve_openapi
from kubegc.server.request_info import parse_resource_path, request_attributes
from kubegc.server.routes import handle_resource
from kubegc.server.serviceresolver import WebhookServiceResolver
from kubegc.server.verbs.params import with_warnings

log = logging.getLogger(__name__)

#: ``/version``'s fields of the binary (``ctx.version.info`` adds the emulated version's)
KUBERNETES_VERSION = {
    "major": str(BINARY_VERSION.major), "minor": str(BINARY_VERSION.minor),
    "gitVersion": BINARY_GIT_VERSION,
    "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
    "buildDate": "2026-11-30T00:00:00Z", "goVersion": "go1.23.3", "compiler": "gc",
    "platform": "linux/amd64",
}
#: Request bodies up to 3 MiB, as kube-apiserver's default.
MAX_BODY = MAX_REQUEST_BODY_BYTES


def build_handler(ctx: ServerContext) -> Handler:
    """The handler of every request the HTTP server receives. The registry's storages
    that answer for the server learn it here: componentstatuses ask whether it is ready,
    TokenReviews ask its authenticators."""
    ctx.registry.components_healthy = ctx.ready
    ctx.registry.token_authenticator = ctx.authentication
    ctx.registry.admission.webhooks.client.resolver = WebhookServiceResolver(ctx.registry)
    ensure_recursion_headroom()  # a body nested to the limit is walked, never a 500

    async def dispatch(request: Request) -> AnyResponse:
        mounted = _mounted(ctx, request.path)
        if mounted is not None:
            return await _guarded(mounted(request), request)
        if ctx.auditor is None:
            return await _guarded(_serve(ctx, request, None), request)
        return await _audited(ctx, ctx.auditor, request)

    return dispatch


class _AuditSlot:
    """What the audit filter learns of a request as it is served."""

    __slots__ = ("audit", "authenticated", "failure")

    def __init__(self) -> None:
        self.audit: RequestAudit | None = None
        self.authenticated = False
        self.failure: BaseException | None = None


async def _serve(ctx: ServerContext, request: Request, slot: _AuditSlot | None
                 ) -> AnyResponse:
    """Authentication, (audit,) impersonation, authorization, then the route."""
    user = await ctx.authentication.authenticate(request)
    attrs = request_attributes(user, request.method, request.path, request.query)
    if slot is not None and ctx.auditor is not None:
        slot.authenticated = True
        slot.audit = audit = ctx.auditor.begin(request, attrs)
        if audit is not None:
            request.on_stream = audit.stream_started
    served = impersonate(ctx.registry.authorizer, user, request.headers)
    if served is not user:
        attrs = request_attributes(served, request.method, request.path, request.query)
        if slot is not None and slot.audit is not None:
            slot.audit.impersonated(served)
    decision, reason = ctx.registry.authorizer.authorize(attrs)
    if slot is not None and slot.audit is not None:
        slot.audit.authorized(decision, reason)
    if decision is not Decision.ALLOW:
        raise errors.forbidden_request(attrs, reason)
    with as_user(served):
        return await ctx.faults.serve(attrs, request, lambda: _route(ctx, request))


async def _audited(ctx: ServerContext, auditor: Auditor, request: Request) -> AnyResponse:
    """``WithAudit`` around the rest of the chain (and ``WithFailedAuthenticationAudit``
    for a request that did not authenticate)."""
    slot = _AuditSlot()
    response: AnyResponse | None = None
    try:
        response = await _guarded(_serve(ctx, request, slot), request, slot)
        return response
    finally:
        audit = slot.audit
        if audit is not None and slot.failure is not None:
            audit.panic(slot.failure)
        elif audit is not None:
            audit.complete(request, response)
        elif not slot.authenticated and isinstance(response, Response):
            auditor.failed_authentication(request, response)


async def _guarded(serving: Awaitable[AnyResponse], request: Request,
                   slot: _AuditSlot | None = None) -> AnyResponse:
    """The response, with the warnings recorded while serving (``WithWarningRecorder``:
    an admission webhook's, on success or failure)."""
    with recording() as warnings:
        response = await _answered(serving, request, slot)
    if warnings and isinstance(response, Response):
        with_warnings(response, warnings)
    return response


async def _answered(serving: Awaitable[AnyResponse], request: Request,
                    slot: _AuditSlot | None) -> AnyResponse:
    """The response, or the Status of what went wrong: an unexpected exception is a 500
    ``InternalError`` for this request only (logged)."""
    try:
        return await serving
    except StatusError as e:
        return status_response(e)
    except ImpersonationError as e:
        return Response(status=500, text=internal_error_text(request.path_qs, e),
                        headers={"X-Content-Type-Options": "nosniff"})
    except RequestEntityTooLarge as e:
        return status_response(StatusError(413, "RequestEntityTooLarge", str(e)))
    except (ConnectionResetError, asyncio.CancelledError):
        raise
    except Exception as e:
        log.exception("internal error serving %s %s", request.method, request.path_qs)
        if slot is not None:
            slot.failure = e
        return status_response(errors.internal_error(f"{type(e).__name__}: {e}"))


async def authenticate_request(ctx: ServerContext, request: Request) -> UserInfo:
    """Who the request is served as: its authenticated user, or the user it impersonates
    (``WithAuthentication`` then ``WithImpersonation``). Raises the 401 or 403 Status, or
    ``ImpersonationError`` (a plain-text 500, as upstream)."""
    user = await ctx.authentication.authenticate(request)
    return impersonate(ctx.registry.authorizer, user, request.headers)


def _mounted(ctx: ServerContext, path: str) -> DebugHandler | None:
    for prefix, handler in ctx.mounts.items():
        if path == prefix or path.startswith(prefix + "/"):
            return handler
    return None


def _ok(ctx: ServerContext) -> Response:
    return Response(text="ok")


def _readyz(ctx: ServerContext) -> Response:
    if ctx.ready():
        return Response(text="ok")
    return Response(text="[-]controllers not ready\nreadyz check failed", status=503)


def _version(ctx: ServerContext) -> Response:
    # responsewriters.WriteRawJSON: json.MarshalIndent, no trailing newline
    return Response(body=json.dumps(ctx.version.info(KUBERNETES_VERSION), indent=2).encode(),
                    content_type="application/json")


#: the health endpoints and /version
_FIXED: dict[str, Callable[[ServerContext], Response]] = {
    "/healthz": _ok, "/livez": _ok, "/readyz": _readyz, "/version": _version}


async def _route(ctx: ServerContext, request: Request) -> AnyResponse:
    path = request.path.rstrip("/") or "/"
    fixed = _FIXED.get(path)
    if fixed is not None:
        return fixed(ctx)
    if path.startswith("/openapi/"):
        return serve_openapi(ctx, request, path)
    for prefix, handler in ctx.debug_handlers.items():
        if path == prefix or path.startswith(prefix + "/"):
            return await handler(request)
    if ctx.aggregator is not None:
        remote = ctx.aggregator.remote_for(path)
        if remote is not None:
            return await ctx.aggregator.serve(request, remote, request_user())
    if request.method == "GET":
        found = _discovery(ctx, request, path)
        if found is not None:
            return found
    info = parse_resource_path(path)
    if info is None:
        raise errors.route_not_found()
    return await handle_resource(ctx, request, info)


def _discovery(ctx: ServerContext, request: Request, path: str) -> Response | None:
    catalog, remote = ctx.registry.catalog, ctx.registry.aggregation
    parts = [p for p in path.split("/") if p]
    if path in ("/api", "/apis"):
        version = discovery.negotiate_discovery(request.headers.get("Accept", ""))
        if version is not None:
            doc = (discovery.aggregated_core if path == "/api" else discovery.aggregated_groups)(
                catalog, version, remote)
            return _typed_json(doc, discovery.discovery_content_type(version))
        if path == "/api":
            return json_response(discovery.legacy_api_versions(ctx.server_address))
        return json_response(discovery.legacy_group_list(catalog, remote))
    found: dict[str, Any] | None
    if len(parts) == 2 and parts[0] == "api":
        found = discovery.legacy_resource_list(catalog, "", parts[1])
    elif len(parts) == 2 and parts[0] == "apis":
        found = discovery.legacy_group(catalog, parts[1], remote)
    elif len(parts) == 3 and parts[0] == "apis":
        found = discovery.legacy_resource_list(catalog, parts[1], parts[2])
    else:
        return None
    if found is None:
        raise errors.route_not_found()
    return json_response(found)


def _typed_json(doc: Any, content_type: str) -> Response:
    response = json_response(doc)
    response.headers["Content-Type"] = content_type
    return response
