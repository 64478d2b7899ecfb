"""The debug endpoints the composition root mounts on the API server beside the
controllers it runs (``kubegc.cluster``): each answers from a running part — the controller
manager's documents, the registry's access configuration and open watches, the cluster's
``settle``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import orjson

from kubegc.controllermanager import ControllerManager
from kubegc.registry import Registry
from kubegc.server.context import DebugHandler
from kubegc.server.http import Request, Response

#: ``Cluster.settle``: (timeout, stuck_after) -> None, raises TimeoutError
Settle = Callable[..., Awaitable[None]]


def documents_handler(manager: ControllerManager) -> DebugHandler:
    """``/debug/controllers/...``: the documents of the components running now (a
    standby runs none: 404 naming the leader)."""
    async def handler(request: Request) -> Response:
        document = manager.debug_documents().get(request.path.rstrip("/"))
        if document is None:
            leader = "" if manager.is_leading() else (
                f": this server does not run the controllers (leader: "
                f"{manager.leader() or 'none'})")
            return Response(status=404, text=f"no such document{leader}")
        content_type, body = document(dict(request.query))
        return Response(body=body, headers={"Content-Type": content_type})

    return handler


def access_handler(registry: Registry | None, authorization_modes: Sequence[str]
                   ) -> DebugHandler:
    """``GET /debug/kubegc/access``: the authorizers and admission plugins this server
    runs (``--authorization-mode``, ``--enable-admission-plugins``), so that ``kubegc
    doctor`` can say whether OwnerReferencesPermissionEnforcement applies."""
    async def handler(request: Request) -> Response:
        plugins = sorted(registry.admission.enabled) if registry is not None else []
        return Response(body=orjson.dumps({
            "authorizationModes": list(authorization_modes),
            "admissionPlugins": plugins}), content_type="application/json")

    return handler


def watchers_handler(registry: Registry | None) -> DebugHandler:
    """``GET /debug/kubegc/watchers``: open watches by storage key prefix."""
    async def handler(request: Request) -> Response:
        prefixes = registry.cache.watcher_prefixes() if registry is not None else {}
        return Response(body=orjson.dumps(dict(sorted(prefixes.items()))),
                        content_type="application/json")

    return handler


def settle_handler(settle: Settle) -> DebugHandler:
    """``GET /debug/kubegc/settle?timeout=30[&stuckAfter=N]``: returns once the cluster
    is quiet (for tests driving a ``kubegc serve`` process over HTTP); 504 with what
    keeps it busy on timeout, or as soon as it is stuck (``settle``'s ``stuck_after``)."""
    async def handler(request: Request) -> Response:
        try:
            timeout = float(request.query.get("timeout", "30"))
        except ValueError:
            timeout = 30.0
        stuck = request.query.get("stuckAfter")
        if stuck is not None and not (stuck.isdigit() and int(stuck) > 0):
            return Response(status=400, text=f"stuckAfter: not a positive integer: {stuck!r}")
        try:
            await settle(timeout, stuck_after=int(stuck) if stuck else None)
        except TimeoutError as e:
            return Response(status=504, text=str(e))
        return Response(text="settled")

    return handler
