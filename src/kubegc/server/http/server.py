"""``HTTPServer``: listen, hand each connection an ``HttpProtocol``, close idle
keep-alive connections, and stop cleanly (watches cancelled, other requests finished)."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable

from kubegc.server.http.protocol import Handler, HttpProtocol
from kubegc.server.http.tls_sniff import TlsSniffer


class HTTPServer:
    def __init__(self, handler: Handler, *, max_body: int,
                 keepalive_timeout: float = 75.0) -> None:
        self.handler = handler
        self.max_body = max_body
        self.keepalive_timeout = keepalive_timeout
        self.connections: set[HttpProtocol] = set()
        self.stopping = False
        self.port = 0
        self._server: asyncio.Server | None = None
        self._sweeper: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None, "the server is not started"
        return self._loop

    async def start(self, host: str, port: int, *, ssl_context: ssl.SSLContext | None = None,
                    backlog: int = 1024) -> int:
        """Listen; returns the port (``port=0`` picks a free one)."""
        loop = self._loop = asyncio.get_running_loop()
        factory: Callable[[], asyncio.Protocol] = lambda: HttpProtocol(self)  # noqa: E731
        if ssl_context is not None:  # TLS after a look at the first bytes (tls_sniff)
            app = factory
            factory = lambda: TlsSniffer(loop, ssl_context, app)  # noqa: E731
        self._server = await loop.create_server(factory, host, port, backlog=backlog,
                                                reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]
        self._schedule_sweep()
        return self.port

    def _schedule_sweep(self) -> None:
        self._sweeper = self.loop.call_later(min(15.0, self.keepalive_timeout), self._sweep)

    def _sweep(self) -> None:
        """Close keep-alive connections idle for ``keepalive_timeout`` (aiohttp's 75 s)."""
        deadline = self.loop.time() - self.keepalive_timeout
        for conn in list(self.connections):
            if not conn.busy and conn.idle_since < deadline:
                conn.close()
        self._schedule_sweep()

    async def stop(self, timeout: float = 1.0) -> None:
        """Stop listening, cancel streams, give other requests ``timeout`` s to finish
        (then cancel them, and give them ``timeout`` s more to unwind), then close every
        connection."""
        if self._server is None:
            return
        self.stopping = True
        if self._sweeper is not None:
            self._sweeper.cancel()
        self._server.close()
        for conn in list(self.connections):
            conn.shutdown()
        busy = [conn for conn in self.connections if conn.busy]
        if busy:
            _, late = await asyncio.wait(
                [asyncio.ensure_future(conn.wait_done()) for conn in busy], timeout=timeout)
            if late:
                for conn in busy:
                    conn.cancel()
                await asyncio.wait(late, timeout=timeout)
        for conn in list(self.connections):
            conn.close()
        self._server = None


__all__ = ["HTTPServer"]
