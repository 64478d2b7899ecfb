"""The HTTP surface of kubegc: routing from the resource catalog, discovery, OpenAPI,
tables, patch types, watch streaming, Status errors, authentication and health.

``APIServer`` serves a ``Registry`` over HTTP(S) on the running event loop, with kubegc's
own HTTP/1.1 server (``server/http``).
May import: ``kubegc.api``, ``kubegc.storage`` (types only), ``kubegc.registry``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from dataclasses import dataclass, field

from kubegc.api.auth import UserInfo
from kubegc.api.clock import Clock
from kubegc.api.version import EffectiveVersion
from kubegc.registry import Registry
from kubegc.server.aggregator import Aggregator
from kubegc.server.aggregator.transport import ProxyTransport
from kubegc.server.app import MAX_BODY, authenticate_request, build_handler
from kubegc.server.audit import Auditor
from kubegc.server.authentication_trust import AuthenticationTrust, required_data
from kubegc.server.authn import (
    Authentication,
    RequestAuthenticator,
    TokenAuthenticator,
    static_token,
)
from kubegc.server.context import DebugHandler, ServerContext
from kubegc.server.fault_endpoints import (
    FAULTS_PATH,
    REQUESTS_PATH,
    faults_handler,
    requests_handler,
)
from kubegc.server.frontproxy import FrontProxy
from kubegc.server.http import HTTPServer, Request
from kubegc.server.tls import ServingCredentials, serving_credentials


@dataclass
class ServingOptions:
    """Where and how to serve (the defaults are ``kubegc.cluster_config.ClusterConfig``'s)."""

    host: str
    port: int  # 0: pick a free port
    ssl_context: ssl.SSLContext | None = None
    token: str | None = None  # the admin credential's bearer token
    #: further authenticators (token file, client certificates, ServiceAccount tokens)
    token_authenticators: list[TokenAuthenticator] = field(default_factory=list)
    request_authenticators: list[RequestAuthenticator] = field(default_factory=list)
    anonymous_auth: bool = True  # kube-apiserver's --anonymous-auth
    #: the ServiceAccount token authenticators (``authn.serviceaccount``), tried after the
    #: others; unlike those they do not make a plain-HTTP server without credentials
    #: secured: there an uncredentialed request stays privileged, a ServiceAccount's token
    #: is that ServiceAccount
    service_account_authenticators: list[TokenAuthenticator] = field(default_factory=list)
    #: --api-audiences (kube-apiserver's default: the ServiceAccount issuer)
    api_audiences: tuple[str, ...] = ()
    #: the audit policy and log (--audit-policy-file, --audit-log-*); None: no auditing
    auditor: Auditor | None = None
    #: the version ``/version`` reports (``--emulated-version``)
    version: EffectiveVersion = field(default_factory=EffectiveVersion)
    #: the CA of the client certificates accepted (``client-ca-file`` of the
    #: extension-apiserver-authentication ConfigMap)
    client_ca_pem: bytes | None = None
    #: the front proxy's certificate and requestheader trust (``--proxy-client-*``,
    #: ``--requestheader-*``); None: the aggregator presents no certificate
    front_proxy: FrontProxy | None = None

    def authentication(self) -> Authentication:
        tokens = ([static_token(self.token)] if self.token is not None else [])
        tokens += self.token_authenticators
        unsecured = not tokens and not self.request_authenticators
        return Authentication(request_authenticators=list(self.request_authenticators),
                              token_authenticators=[*tokens,
                                                    *self.service_account_authenticators],
                              anonymous=self.anonymous_auth, unsecured=unsecured,
                              api_audiences=self.api_audiences)


class APIServer:
    def __init__(self, registry: Registry, *, clock: Clock, options: ServingOptions) -> None:
        self.options = options
        self.ctx = ServerContext(registry=registry, clock=clock,
                                 authentication=options.authentication())
        self.ctx.auditor = options.auditor
        front_proxy = options.front_proxy
        self.ctx.aggregator = Aggregator(registry, clock=clock, transport=ProxyTransport(
            front_proxy.client_cert if front_proxy is not None else None))
        self._trust = AuthenticationTrust(registry, required_data(options.client_ca_pem,
                                                                  front_proxy))
        self._trust_task: asyncio.Task[None] | None = None
        self.ctx.version = options.version
        self.add_debug_handler(FAULTS_PATH, faults_handler(self.ctx.faults))
        self.add_debug_handler(REQUESTS_PATH, requests_handler(self.ctx.faults))
        self._http: HTTPServer | None = None
        self.port = options.port

    def add_debug_handler(self, path: str, handler: DebugHandler) -> None:
        self.ctx.debug_handlers[path] = handler

    async def authenticate(self, request: Request) -> UserInfo:
        """The user ``request`` is served as, as the API decides it for its own requests
        (authentication, then impersonation): for a mounted handler that needs to know
        (the owner-graph page's ``/ui/api/login``). Raises what ``authenticate_request``
        raises."""
        return await authenticate_request(self.ctx, request)

    def mount(self, prefix: str, handler: DebugHandler) -> None:
        """Serve every path under ``prefix`` with ``handler``, which authenticates its
        requests itself (the API's authentication does not run there)."""
        self.ctx.mounts[prefix.rstrip("/")] = handler

    async def start(self) -> None:
        http = HTTPServer(build_handler(self.ctx), max_body=MAX_BODY)
        self.port = await http.start(self.options.host, self.options.port,
                                     ssl_context=self.options.ssl_context)
        self._http = http
        self.ctx.server_address = f"{self.options.host}:{self.port}"
        if self.ctx.aggregator is not None:
            await self.ctx.aggregator.start()
        if self._trust.required:
            await self._trust.sync()
            self._trust_task = asyncio.create_task(self._trust.run(),
                                                   name="cluster-authentication-trust")

    async def stop(self) -> None:
        self.ctx.faults.clear()  # a fault never outlives the server: what it hung goes on
        if self._trust_task is not None:
            self._trust_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._trust_task
        if self.ctx.aggregator is not None:
            await self.ctx.aggregator.stop()
        if self._http is not None:
            await self._http.stop(timeout=1.0)
            self._http = None
        if self.ctx.auditor is not None:
            self.ctx.auditor.backend.close()

    @property
    def url(self) -> str:
        scheme = "https" if self.options.ssl_context is not None else "http"
        host = self.options.host if ":" not in self.options.host else f"[{self.options.host}]"
        return f"{scheme}://{host}:{self.port}"


__all__ = ["APIServer", "ServingCredentials", "ServingOptions", "serving_credentials"]
