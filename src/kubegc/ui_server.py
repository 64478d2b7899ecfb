"""The owner-graph page (``kubegc.tools.ui``) on kubegc's own HTTP server: ``ui_handler``
adapts ``UIApp.handle`` (``UIRequest`` → ``UIResponse``, a body or a stream of server-sent
events) to ``kubegc.server.http``; the composition root mounts it at ``/ui/`` of ``kubegc
serve`` (``APIServer.mount``), and ``kubegc ui`` serves it alone (``serve_ui``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from kubegc.api.auth import UserInfo
from kubegc.api.errors import StatusError
from kubegc.server.context import DebugHandler, status_response
from kubegc.server.http import AnyResponse, HTTPServer, Request, Response, StreamResponse
from kubegc.server.impersonation import ImpersonationError, internal_error_text
from kubegc.tools.ui import PREFIX, UIApp, UIRequest

#: (request) → the user it is served as (``APIServer.authenticate``)
Authenticate = Callable[[Request], Awaitable[UserInfo]]


def ui_handler(app: UIApp, authenticate: Authenticate | None = None) -> DebugHandler:
    """Serve ``app`` (``kubegc.tools.ui``) with kubegc's HTTP server. With
    ``authenticate`` (``kubegc serve``), a request for a login URL is authenticated as
    the API authenticates its own (401, impersonation and its 403 alike), so that the
    session it opens is the requester's."""

    async def handler(request: Request) -> AnyResponse:
        user = None
        if authenticate is not None and request.path == f"{PREFIX}/api/login":
            try:
                user = await authenticate(request)
            except StatusError as e:
                return status_response(e)
            except ImpersonationError as e:
                return Response(status=500, text=internal_error_text(request.path_qs, e))
        answer = await app.handle(UIRequest(request.method, request.path, request.query,
                                            request.headers, user))
        if answer.stream is None:
            return Response(body=answer.body, status=answer.status,
                            content_type=answer.content_type, headers=answer.headers)
        response = StreamResponse(status=answer.status, content_type=answer.content_type,
                                  headers=answer.headers)
        chunks = answer.stream
        try:
            await response.prepare(request)
            async for chunk in chunks:
                await response.write(chunk)
        except (ConnectionResetError, asyncio.CancelledError):
            pass  # the page went away, or the server stops
        finally:
            with contextlib.suppress(Exception):
                await chunks.aclose()  # type: ignore[attr-defined]
        with contextlib.suppress(ConnectionResetError, RuntimeError):
            await response.write_eof()
        return response

    return handler


async def serve_ui(app: UIApp, *, host: str, port: int) -> HTTPServer:
    """``kubegc ui``: ``app`` alone on ``host``:``port`` (plain HTTP; loopback only)."""
    page = ui_handler(app)

    async def handler(request: Request) -> AnyResponse:
        if request.path == PREFIX or request.path.startswith(PREFIX + "/"):
            return await page(request)
        if request.path == "/":
            return Response(status=303, headers={"Location": f"{PREFIX}/"})
        return Response(status=404, text=f"not found: the page is at {PREFIX}/\n")

    http = HTTPServer(handler, max_body=64 * 1024)
    bound = await http.start(host, port)
    app.base_url = f"http://{host if ':' not in host else f'[{host}]'}:{bound}"
    return http
