"""Requests of a remote group sent to its backend (cf. kube-aggregator's
pkg/apiserver/handler_proxy.go ``proxyHandler.ServeHTTP``).

The user the request was authenticated (and authorized) as goes along in requestheader
form (``X-Remote-User``, ``X-Remote-Group``, ``X-Remote-Extra-<key>``: upstream's
``transport.SetAuthProxyHeaders``); the client's own credentials and impersonation headers
do not. While the APIService is not available the group answers 503 "service
unavailable" (plain text, as upstream's ``proxyError``), as it does when its Service
cannot be resolved or the backend cannot be reached.

Whole responses only: a watch of a remote resource is not streamed.
"""

from __future__ import annotations

import ssl
from urllib.parse import quote

import aiohttp

from kubegc.api import errors
from kubegc.api.auth import UserInfo
from kubegc.registry import Registry
from kubegc.registry.groups.apiregistration.aggregation import RemoteGroupVersion
from kubegc.server.http import Response
from kubegc.server.serviceresolver import resolve_endpoint, tls_context

#: kube-apiserver's default ``--request-timeout``
REQUEST_TIMEOUT = 60.0
_FORWARDED = ("accept", "content-type", "user-agent", "accept-encoding")


_CONTEXTS: dict[tuple[str, bool], ssl.SSLContext] = {}


def _context(ca_bundle: str, insecure: bool) -> ssl.SSLContext:
    """The client TLS context of a backend, verifying the host name unless insecure (one
    per caBundle: building one parses the bundle)."""
    key = (ca_bundle, insecure)
    context = _CONTEXTS.get(key)
    if context is None:
        context = tls_context(ca_bundle or None, insecure_skip_verify=insecure)
        context.check_hostname = not insecure
        if len(_CONTEXTS) > 64:
            _CONTEXTS.clear()
        _CONTEXTS[key] = context
    return context


def service_unavailable() -> Response:
    return Response(status=503, text="service unavailable\n",
                    headers={"X-Content-Type-Options": "nosniff"})


def user_headers(user: UserInfo | None) -> list[tuple[str, str]]:
    """``SetAuthProxyHeaders``: the user, each group, each extra value."""
    if user is None:
        return []
    out = [("X-Remote-User", user.name)]
    out += [("X-Remote-Group", group) for group in user.groups]
    for key, values in user.extra.items():
        out += [(f"X-Remote-Extra-{quote(key, safe='')}", value) for value in values]
    return out


async def forward(registry: Registry, session: aiohttp.ClientSession, remote: RemoteGroupVersion,
                  method: str, path_qs: str, body: bytes, user: UserInfo | None,
                  headers: dict[str, str] | None = None) -> tuple[int, str, bytes]:
    """One request to ``remote``'s backend: (status, content type, body); 503 when it is not
    available or cannot be reached."""
    unavailable = (503, "text/plain; charset=utf-8", b"service unavailable\n")
    if not remote.available:
        return unavailable
    api_service = await registry.get(registry.target("apiregistration.k8s.io", "v1",
                                                     "apiservices"), remote.api_service)
    spec = api_service.get("spec") or {}
    ref = spec.get("service") or {}
    try:
        endpoint = await resolve_endpoint(registry, str(ref.get("namespace") or ""),
                                          str(ref.get("name") or ""), int(ref.get("port") or 443))
    except errors.StatusError:
        return unavailable
    insecure = bool(spec.get("insecureSkipTLSVerify"))
    context = _context(str(spec.get("caBundle") or ""), insecure)
    # the certificate must name the Service's DNS name, as upstream's proxy transport's
    # ServerName says (the backend is dialled at its Endpoints' address)
    server_name = f"{ref.get('name') or ''}.{ref.get('namespace') or ''}.svc"
    sent = [(k, v) for k, v in (headers or {}).items() if k.lower() in _FORWARDED]
    sent += user_headers(user)
    try:
        async with session.request(method, endpoint.url + path_qs, data=body or None,
                                   headers=sent, ssl=context, allow_redirects=False,
                                   timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT),
                                   server_hostname=None if insecure else server_name) as resp:
            payload = await resp.read()
            return resp.status, resp.headers.get("Content-Type", ""), payload
    except (aiohttp.ClientError, OSError, TimeoutError):
        return unavailable
