"""kube-aggregator's part of the server: APIServices and the groups served by other
API servers (cf. staging/src/k8s.io/kube-aggregator).

* ``autoregister``: a Local APIService for every group-version this server serves;
* ``available_controller``: the ``Available`` condition of each APIService, and the remote
  group-versions (``Registry.aggregation``) that discovery lists and the proxy serves;
* ``proxy``: a remote group's requests sent to its backend (streamed), 503 while it is
  unavailable;
* ``transport``: the TLS to a backend, presenting the front-proxy client certificate;
* ``openapi_controller``: the remote groups' OpenAPI documents, downloaded for
  ``/openapi/v2`` and ``/openapi/v3`` to merge.

``Aggregator`` runs the controllers as tasks of the server and proxies for the server's
routes and for the in-process client (``Registry.aggregation.proxy``, and ``.stream`` for
its watches).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import aiohttp

from kubegc.api import errors
from kubegc.api.auth import UserInfo
from kubegc.api.clock import Clock
from kubegc.registry import Registry
from kubegc.registry.groups.apiregistration.aggregation import (
    RemoteGroupVersion,
    response_error,
)
from kubegc.server.aggregator.available_controller import AvailableConditionController
from kubegc.server.aggregator.openapi_controller import OpenAPIAggregationController
from kubegc.server.aggregator.proxy import BackendProxy, Call
from kubegc.server.aggregator.transport import ProxyTransport
from kubegc.server.http import AnyResponse, Request

__all__ = ["Aggregator", "AvailableConditionController"]


class Aggregator:
    """Ownership: started and stopped with the server; the controller's task is the only
    writer of ``registry.aggregation``."""

    def __init__(self, registry: Registry, *, clock: Clock,
                 transport: ProxyTransport | None = None) -> None:
        self.registry = registry
        self.transport = transport or ProxyTransport()
        self.controller = AvailableConditionController(registry, clock=clock,
                                                       transport=self.transport)
        self.backends = BackendProxy(registry, self.transport)
        self.openapi = OpenAPIAggregationController(registry, self.backends,
                                                    self.controller.session)
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        await self.controller.sync_all()
        self.registry.aggregation.proxy = self.proxy
        self.registry.aggregation.stream = self.stream
        self._tasks = [
            asyncio.create_task(self.controller.run(), name="apiservice-availability"),
            asyncio.create_task(self.openapi.run(), name="apiservice-openapi")]

    async def stop(self) -> None:
        self.registry.aggregation.proxy = None
        self.registry.aggregation.stream = None
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.controller.close()

    def remote_for(self, path: str) -> RemoteGroupVersion | None:
        """The remote group-version ``/apis/<group>/<version>[/...]`` addresses, if any."""
        parts = path.split("/", 4)
        if len(parts) < 4 or parts[0] != "" or parts[1] != "apis":
            return None
        return self.registry.aggregation.lookup(parts[2], parts[3])

    async def proxy(self, method: str, path_qs: str, body: bytes, user: UserInfo | None
                    ) -> tuple[int, str, bytes]:
        path = path_qs.partition("?")[0]
        remote = self.remote_for(path)
        if remote is None:
            return 404, "text/plain; charset=utf-8", b"404 page not found\n"
        call = Call(method, path_qs, body, user, {"Accept": "application/json",
                                                  "Content-Type": "application/json"})
        return await self.backends.forward(self.controller.session(), remote, call)

    async def stream(self, path_qs: str, user: UserInfo | None) -> AsyncIterator[bytes]:
        """The lines of a streamed GET (a watch) of a remote resource, as they come."""
        remote = self.remote_for(path_qs.partition("?")[0])
        if remote is None:
            raise errors.route_not_found()
        call = Call("GET", path_qs, b"", user, {"Accept": "application/json"})
        async with self.backends.open(self.controller.session(), remote, call) as resp:
            if resp is None or not remote.available:
                raise response_error(503, b"")
            if resp.status != 200:
                raise response_error(resp.status, await resp.read())
            try:
                async for line in resp.content:
                    yield line
            except (aiohttp.ClientError, OSError, TimeoutError):
                return  # the backend went: the watch ends, as over HTTP

    async def serve(self, request: Request, remote: RemoteGroupVersion,
                    user: UserInfo | None) -> AnyResponse:
        return await self.backends.serve(self.controller.session(), remote, request, user)
