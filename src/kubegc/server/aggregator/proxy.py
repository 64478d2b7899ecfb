"""Requests of a remote group sent to its backend (cf. kube-aggregator's
pkg/apiserver/handler_proxy.go ``proxyHandler.ServeHTTP`` and apimachinery's
``proxy.UpgradeAwareHandler``).

The user the request was authenticated (and authorized) as goes along in requestheader
form (``X-Remote-User``, ``X-Remote-Group``, ``X-Remote-Extra-<key>``: upstream's
``transport.SetAuthProxyHeaders``), over TLS presenting the front-proxy client certificate
(``transport.ProxyTransport``); the client's own credentials and impersonation headers do
not. While the APIService is not available the group answers 503 "service unavailable"
(plain text, as upstream's ``proxyError``), as it does when its Service cannot be resolved
or the backend cannot be reached.

A response is passed on as the backend writes it: one with a Content-Length whole, any
other (a watch, a chunked list) chunk by chunk (``httputil.ReverseProxy`` flushing each
write, as upstream's long-running requests are). The client's disconnect cancels the
handler, which closes the backend connection; the backend's end of the stream ends the
client's. A long-running request (a watch) has no request timeout, as upstream's
``longRunningRequestCheck`` exempts it. Protocol upgrades (exec, attach, port-forward on
an aggregated resource) are refused: kubegc's HTTP server switches no protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import quote

import aiohttp

from kubegc.api import errors
from kubegc.api.auth import UserInfo
from kubegc.registry import Registry
from kubegc.registry.groups.apiregistration.aggregation import RemoteGroupVersion
from kubegc.server.aggregator.transport import ProxyTransport
from kubegc.server.http import AnyResponse, Request, Response, StreamResponse
from kubegc.server.serviceresolver import resolve_endpoint

#: kube-apiserver's default ``--request-timeout``
REQUEST_TIMEOUT = 60.0
#: a long-running request: no total timeout, only the connection's
LONG_RUNNING_TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=REQUEST_TIMEOUT)
_FORWARDED = ("accept", "content-type", "user-agent", "accept-encoding")
#: response headers passed back (hop-by-hop and framing ones are the server's own)
_RETURNED = ("content-type", "cache-control", "warning", "audit-id", "retry-after",
             "location", "x-content-type-options")
#: the subresources upstream's ``longRunningRequestCheck`` exempts from the timeout
_LONG_RUNNING_SUBRESOURCES = frozenset({"attach", "exec", "proxy", "log", "portforward"})
UNAVAILABLE = (503, "text/plain; charset=utf-8", b"service unavailable\n")


def service_unavailable(text: str = "service unavailable\n") -> Response:
    return Response(status=503, text=text, headers={"X-Content-Type-Options": "nosniff"})


def user_headers(user: UserInfo | None) -> list[tuple[str, str]]:
    """``SetAuthProxyHeaders``: the user, each group, each extra value."""
    if user is None:
        return []
    out = [("X-Remote-User", user.name)]
    out += [("X-Remote-Group", group) for group in user.groups]
    for key, values in user.extra.items():
        out += [(f"X-Remote-Extra-{quote(key, safe='')}", value) for value in values]
    return out


def long_running(path_qs: str) -> bool:
    """A watch (``?watch=true`` or the legacy ``/watch/`` path), or a streaming
    subresource (``log``, ``exec``, ...)."""
    path, _, query = path_qs.partition("?")
    params = dict(p.partition("=")[::2] for p in query.split("&") if p)
    if params.get("watch", "").lower() in ("true", "1") or params.get("follow") == "true":
        return True
    parts = [p for p in path.split("/") if p]
    return (len(parts) > 3 and parts[3] == "watch") or (
        len(parts) > 4 and parts[-1] in _LONG_RUNNING_SUBRESOURCES)


def is_upgrade(request: Request) -> bool:
    """``httpstream.IsUpgradeRequest``: ``Connection: Upgrade`` with an ``Upgrade``."""
    connection = request.headers.get("Connection", "").lower()
    return "upgrade" in [t.strip() for t in connection.split(",")] and bool(
        request.headers.get("Upgrade"))


@dataclass(frozen=True, slots=True)
class Call:
    """One request for a backend."""

    method: str
    path_qs: str
    body: bytes
    user: UserInfo | None
    headers: dict[str, str]


class BackendProxy:
    """Sends calls to the backends of remote group-versions."""

    def __init__(self, registry: Registry, transport: ProxyTransport) -> None:
        self.registry = registry
        self.transport = transport

    @contextlib.asynccontextmanager
    async def open(self, session: aiohttp.ClientSession, remote: RemoteGroupVersion, call: Call
                   ) -> AsyncIterator[aiohttp.ClientResponse | None]:
        """The backend's response to ``call`` (headers read, body not yet), or None when
        the backend cannot be resolved or reached; closed on exit."""
        registry = self.registry
        api_service = await registry.get(registry.target("apiregistration.k8s.io", "v1",
                                                         "apiservices"), remote.api_service)
        spec = api_service.get("spec") or {}
        ref = spec.get("service") or {}
        try:
            endpoint = await resolve_endpoint(registry, str(ref.get("namespace") or ""),
                                              str(ref.get("name") or ""),
                                              int(ref.get("port") or 443))
        except errors.StatusError:
            yield None
            return
        insecure = bool(spec.get("insecureSkipTLSVerify"))
        context = self.transport.context(str(spec.get("caBundle") or ""), insecure)
        # the certificate must name the Service's DNS name, as upstream's proxy transport's
        # ServerName says (the backend is dialled at its Endpoints' address)
        server_name = f"{ref.get('name') or ''}.{ref.get('namespace') or ''}.svc"
        sent = [(k, v) for k, v in call.headers.items() if k.lower() in _FORWARDED]
        sent += user_headers(call.user)
        timeout = (LONG_RUNNING_TIMEOUT if long_running(call.path_qs)
                   else aiohttp.ClientTimeout(total=REQUEST_TIMEOUT))
        try:
            resp = await session.request(
                call.method, endpoint.url + call.path_qs, data=call.body or None,
                headers=sent, ssl=context, allow_redirects=False, timeout=timeout,
                server_hostname=None if insecure else server_name)
        except (aiohttp.ClientError, OSError, TimeoutError):
            yield None
            return
        try:
            yield resp
        finally:
            resp.close()  # a stream not read to its end: the connection goes with it

    async def forward(self, session: aiohttp.ClientSession, remote: RemoteGroupVersion,
                      call: Call) -> tuple[int, str, bytes]:
        """The whole response: (status, content type, body); 503 when it is not
        available or cannot be reached."""
        if not remote.available:
            return UNAVAILABLE
        async with self.open(session, remote, call) as resp:
            if resp is None:
                return UNAVAILABLE
            try:
                payload = await resp.read()
            except (aiohttp.ClientError, OSError, TimeoutError):
                return UNAVAILABLE
            return resp.status, resp.headers.get("Content-Type", ""), payload

    async def serve(self, session: aiohttp.ClientSession, remote: RemoteGroupVersion,
                    request: Request, user: UserInfo | None) -> AnyResponse:
        """``request`` answered by the backend, streamed unless it has a length."""
        if not remote.available:
            return service_unavailable()
        if is_upgrade(request):
            # as upstream's responder.Error answers an upgrade that cannot be made
            return service_unavailable("error trying to reach service: protocol upgrades "
                                       "are not proxied by kubegc\n")
        call = Call(request.method, request.path_qs, await request.read(), user,
                    dict(request.headers.items()))
        async with self.open(session, remote, call) as resp:
            if resp is None:
                return service_unavailable()
            headers = {k: v for k, v in resp.headers.items() if k.lower() in _RETURNED}
            if (resp.content_length is not None or request.method == "HEAD"
                    or resp.status in (204, 304)):
                try:
                    body = await resp.read()
                except (aiohttp.ClientError, OSError, TimeoutError):
                    return service_unavailable()
                return Response(status=resp.status, body=body, headers=headers)
            return await _stream(request, resp, headers)


async def _stream(request: Request, resp: aiohttp.ClientResponse, headers: dict[str, str]
                  ) -> StreamResponse:
    """Copy the backend's body to the client as it comes; either side's end ends both."""
    response = StreamResponse(status=resp.status, headers=headers)
    try:
        await response.prepare(request)
        async for chunk in resp.content.iter_any():
            await response.write(chunk)
    except (ConnectionResetError, asyncio.CancelledError):
        return response  # the client went: the backend's connection is closed on return
    except (aiohttp.ClientError, OSError, TimeoutError):
        pass  # the backend went: the client's stream ends
    with contextlib.suppress(ConnectionResetError, RuntimeError):
        await response.write_eof()
    return response
