"""TLS on a connection whose first bytes have been looked at: plain HTTP sent to the TLS
port is answered as Go's ``net/http`` answers it (``conn.serve``: a TLS record header that
looks like HTTP gets ``400 Client sent an HTTP request to an HTTPS server.``); anything
else goes on as TLS.

The listener accepts plain TCP; each connection starts with a ``TlsSniffer`` that reads
the first bytes and then hands the connection to the loop's SSL protocol (what
``loop.start_tls`` builds: uvloop's, else ``asyncio.sslproto.SSLProtocol``) with those
bytes, so the handshake sees all of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from asyncio import sslproto
from collections.abc import Callable
from typing import Any

#: ``tlsRecordHeaderLooksLikeHTTP``: the first five bytes of a plain HTTP request
HTTP_STARTS = (b"GET /", b"HEAD ", b"POST ", b"PUT /", b"OPTIO")
#: Go's exact answer (HTTP/1.0, no headers) before it closes the connection
PLAIN_HTTP_ANSWER = (b"HTTP/1.0 400 Bad Request\r\n\r\n"
                     b"Client sent an HTTP request to an HTTPS server.\n")
#: seconds a TLS handshake may take (asyncio's default)
HANDSHAKE_TIMEOUT = 60.0


class TlsSniffer(asyncio.Protocol):
    """The first protocol of a TLS-port connection, until its first five bytes arrived."""

    def __init__(self, loop: asyncio.AbstractEventLoop, context: ssl.SSLContext,
                 app_factory: Callable[[], asyncio.Protocol]) -> None:
        self._loop = loop
        self._context = context
        self._app_factory = app_factory
        self._transport: asyncio.Transport | None = None
        self._head = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._head += data
        transport = self._transport
        if transport is None or len(self._head) < 5:
            return
        if self._head[:5] in HTTP_STARTS:
            transport.write(PLAIN_HTTP_ANSWER)
            transport.close()
            return
        self._start_tls(transport, self._head)

    def eof_received(self) -> bool | None:
        if self._transport is not None:
            self._transport.close()
        return None

    def _start_tls(self, transport: asyncio.Transport, first: bytes) -> None:
        waiter = self._loop.create_future()
        waiter.add_done_callback(_retrieve)
        tls = _ssl_protocol(self._loop)(
            self._loop, self._app_factory(), self._context, waiter, server_side=True,
            ssl_handshake_timeout=HANDSHAKE_TIMEOUT)
        transport.set_protocol(tls)
        tls.connection_made(transport)
        view = memoryview(first)
        while view:
            buffer = tls.get_buffer(len(view))
            n = min(len(buffer), len(view))
            buffer[:n] = view[:n]
            tls.buffer_updated(n)
            view = view[n:]


def _ssl_protocol(loop: asyncio.AbstractEventLoop) -> Any:
    """The loop's own SSL protocol (uvloop's is compiled, and what its ``create_server``
    uses), else asyncio's."""
    if type(loop).__module__.startswith("uvloop"):
        with contextlib.suppress(ImportError, AttributeError):
            from uvloop import loop as uvloop_loop

            return uvloop_loop.SSLProtocol  # type: ignore[attr-defined]
    return sslproto.SSLProtocol


def _retrieve(waiter: asyncio.Future[None]) -> None:
    """A failed handshake is the client's business (asyncio logs it at debug level)."""
    if not waiter.cancelled():
        waiter.exception()


__all__ = ["PLAIN_HTTP_ANSWER", "TlsSniffer"]
