"""HTTP/1.1 over ``asyncio.Protocol``, parsed by httptools (llhttp, Node's parser).

One ``HttpProtocol`` per connection. The parser's callbacks assemble a ``Request`` (whole
body buffered, at most ``max_body`` bytes kept); requests queue per connection and one
task answers them in order (keep-alive, pipelining). A ``Response`` leaves in one write; a
``StreamResponse`` (watch) writes chunks with back-pressure from ``pause_writing``. A body
announced over the limit with ``Expect: 100-continue`` is refused before it is sent: the
request is answered at once (413), its body never read, and the connection closes.

Why not aiohttp's server: measured at ~12k POST/s doing no work at all on this machine
(docs/architecture.md, "Our own HTTP/1.1 server"), against ~50k/s for a protocol like this
one; at kubegc's create rate aiohttp's per-request machinery was a quarter of the server's
CPU.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol, cast

import httptools

from kubegc.server.http.request import Headers, Request
from kubegc.server.http.response import AnyResponse, BodyNotAllowed, Response, StreamResponse
from kubegc.server.http.wire import (
    BodyRefused,
    HeadRefused,
    date_line,
    peer_certificate,
    plain,
)

log = logging.getLogger(__name__)

Handler = Callable[[Request], Awaitable[AnyResponse]]


class ConnectionOwner(Protocol):
    """What a connection uses of the ``HTTPServer`` that accepted it."""

    handler: Handler
    max_body: int
    connections: set[HttpProtocol]
    stopping: bool

    @property
    def loop(self) -> asyncio.AbstractEventLoop: ...

#: Queued (pipelined) requests before the connection stops reading.
MAX_PIPELINE = 32
#: A request's line and headers, at most (Go's ``http.DefaultMaxHeaderBytes``, which
#: kube-apiserver keeps); Go reads up to 4 KiB past it before it answers 431.
MAX_HEADER_BYTES = 1 << 20
HEAD_READ_LIMIT = MAX_HEADER_BYTES + 4096
#: Go's answers to a head it refuses (``conn.serve``: status line, then the same text)
HEAD_TOO_LARGE = "431 Request Header Fields Too Large"
NO_HOST = "missing required Host header"
#: Seconds a connection closing with its client's input unread (a refused body) goes on
#: reading, and dropping, it: closed at once, the unread input would make the kernel
#: answer with a reset that can destroy the response at the client (RFC 9112 §9.6; Go's
#: rstAvoidanceDelay is 0.5 s too).
LINGER = 0.5

class HttpProtocol(asyncio.Protocol):
    """One client connection. Owner of everything below: the event loop thread only."""

    def __init__(self, server: ConnectionOwner) -> None:
        self._server = server
        self._loop = server.loop
        self._handler = server.handler
        self._max_body = server.max_body
        self._parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        # the request being parsed
        self._url = b""
        self._headers: dict[str, str] = {}
        self._repeated: dict[str, list[str]] | None = None  # headers sent more than once
        self._body: list[bytes] = []
        self._body_size = 0
        self._too_large = False
        # a head is being read (until on_headers_complete): bytes fed to the parser for it,
        # and the size of its request line and headers
        self._in_head = True
        self._head_bytes = 0
        self._head_size = 0
        # requests parsed and not yet answered, and the task answering them
        self._pending: deque[Request] = deque()
        self._task: asyncio.Task[None] | None = None
        self._streaming = False  # a StreamResponse is being written
        self._reading_paused = False
        self._writing_paused = False
        self._drain_waiter: asyncio.Future[None] | None = None
        # after an upgrade or a parse error no more requests are read; a parse error is
        # answered 400 once the requests parsed before it have been answered
        self._input_done = False
        self._bad_request: bytes | None = None
        self._body_refused = False  # input stopped before a body it did not read
        self._lingering: asyncio.TimerHandle | None = None
        self.closed = False
        #: the verified client certificate (DER) of a TLS connection, or None
        self.peer_certificate: bytes | None = None
        self.idle_since = self._loop.time()

    # -- asyncio.Protocol ----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self._server.connections.add(self)
        self.peer_certificate = peer_certificate(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._server.connections.discard(self)
        self._pending.clear()
        if self._lingering is not None:
            self._lingering.cancel()
        waiter, self._drain_waiter = self._drain_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(ConnectionResetError("the client closed the connection"))
        if self._task is not None and self._streaming:
            self._task.cancel()  # a watch waiting for events would otherwise linger

    def data_received(self, data: bytes) -> None:
        if self._input_done:
            return
        if self._in_head:
            # What a head may hold is bounded before it is buffered (by the parser): one
            # still unfinished after HEAD_READ_LIMIT bytes is refused, so a client cannot
            # make the server hold more than that and one read.
            if self._head_bytes > HEAD_READ_LIMIT:
                self._refuse_head(plain(431, HEAD_TOO_LARGE[4:], HEAD_TOO_LARGE))
                return
            self._head_bytes += len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._upgrade_asked()
        except httptools.HttpParserError as e:
            self._parse_failed(e)

    def _upgrade_asked(self) -> None:
        """No protocol switch here (exec, port-forward): the request was queued and is
        answered; the connection closes after it."""
        self._input_done = True
        if self._pending:
            self._pending[-1].keep_alive = False
        elif self._task is None:
            self.close()

    def _parse_failed(self, e: httptools.HttpParserError) -> None:
        if self._input_done:
            # _refuse_body stopped the parser (its request is queued), or _refuse_head
            # did (its answer waits for the requests before it)
            if self._bad_request is not None and self._task is None:
                self._reject()
            return
        # The requests parsed before the error are answered first, then 400 and close
        # (no 400 when the connection closes anyway: bytes after "Connection: close").
        self._input_done = True
        self._bad_request = plain(400, "Bad Request", f"400 Bad Request: {e}")
        if self._task is None:
            self._reject()

    def _refuse_head(self, answer: bytes) -> None:
        """Stop reading at a head Go's server refuses; answer once the requests before it
        are answered, then close."""
        self._input_done = self._body_refused = True
        self._bad_request = answer
        if self._task is None:
            self._reject()

    def _reject(self) -> None:
        """End a connection whose input stopped: 400 after a parse error (431 or 400 for a
        refused head), then close (lingering when the client may still be sending)."""
        if self.transport is not None and not self.transport.is_closing():
            if self._bad_request is not None:
                self.transport.write(self._bad_request)
            if self._body_refused:
                self._close_unread()
            else:
                self.transport.close()

    def pause_writing(self) -> None:
        self._writing_paused = True

    def resume_writing(self) -> None:
        self._writing_paused = False
        waiter, self._drain_waiter = self._drain_waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- httptools callbacks -------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._url = b""
        self._head_size = 0
        self._headers = {}
        self._repeated = None
        self._body = []
        self._body_size = 0
        self._too_large = False

    def on_url(self, url: bytes) -> None:
        self._url += url
        self._head_size += len(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._head_size += len(name) + len(value) + 4  # ": " and CRLF
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        old = self._headers.get(key)
        if old is None:
            self._headers[key] = text
            return
        self._headers[key] = f"{old}, {text}"
        if self._repeated is None:
            self._repeated = {}
        self._repeated.setdefault(key, [old]).append(text)

    def on_headers_complete(self) -> None:
        self._in_head, self._head_bytes = False, 0
        if self._head_size > MAX_HEADER_BYTES:
            self._refuse_head(plain(431, HEAD_TOO_LARGE[4:], HEAD_TOO_LARGE))
            raise HeadRefused
        if "host" not in self._headers and self._parser.get_http_version() == "1.1":
            # net/http's readRequest: HTTP/1.1 requires a Host header (RFC 9112 §3.2)
            self._refuse_head(plain(400, f"Bad Request: {NO_HOST}",
                                     f"400 Bad Request: {NO_HOST}"))
            raise HeadRefused
        length = self._headers.get("content-length", "")
        if length.isdigit() and int(length) > self._max_body:
            self._too_large = True  # answered 413 once the body has gone by
            if self._headers.get("expect", "").lower() == "100-continue":
                self._refuse_body()
        elif self._headers.get("expect", "").lower() == "100-continue" and self.transport:
            self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def _refuse_body(self) -> None:
        """``Expect: 100-continue`` and a Content-Length over the limit: no "100 Continue",
        so the client does not send the body; the request goes to its handler at once,
        bodiless (``read()`` raises ``RequestEntityTooLarge``, a 413, as Go's net/http
        answers before the body). The body is never read, so nothing after this head is:
        parsing stops here (the exception, caught in ``data_received``) and the connection
        closes after the answer."""
        self._input_done = self._body_refused = True
        self.on_message_complete()
        self._pending[-1].keep_alive = False
        raise BodyRefused

    def on_body(self, body: bytes) -> None:
        if self._too_large:
            return
        self._body_size += len(body)
        if self._body_size > self._max_body:
            self._too_large = True
            self._body = []
            return
        self._body.append(body)

    def on_message_complete(self) -> None:
        parser = self._parser
        body = self._body[0] if len(self._body) == 1 else b"".join(self._body)
        request = Request(parser.get_method().decode("latin-1"), self._url.decode("latin-1"),
                          Headers(self._headers, self._repeated),
                          version=parser.get_http_version(),
                          keep_alive=parser.should_keep_alive(), body=body,
                          too_large=self._max_body if self._too_large else 0, connection=self,
                          peer_certificate=self.peer_certificate)
        self._body = []
        self._in_head = True
        self._pending.append(request)
        if len(self._pending) >= MAX_PIPELINE and self.transport and not self._reading_paused:
            self._reading_paused = True
            self.transport.pause_reading()
        if self._task is None:
            self._task = self._loop.create_task(self._serve())

    # -- answering -------------------------------------------------------------------------

    async def _serve(self) -> None:
        try:
            while self._pending and not self.closed:
                request = self._pending.popleft()
                if self._reading_paused and len(self._pending) < MAX_PIPELINE // 2:
                    self._reading_paused = False
                    if self.transport is not None:
                        self.transport.resume_reading()
                await self._respond(request)
                if not request.keep_alive or self._server.stopping:
                    if self._body_refused:
                        self._close_unread()
                    else:
                        self.close()
                    return
            if self._input_done and not self._pending:
                self._reject()
        finally:
            self._task = None
            self.idle_since = self._loop.time()

    async def _respond(self, request: Request) -> None:
        try:
            response = await self._handler(request)
        except asyncio.CancelledError:
            if self.closed or self._server.stopping:
                return
            raise
        except BodyNotAllowed:
            self.end_stream()  # HEAD, answered by a stream: the head was all of it
            return
        except Exception:
            log.exception("unhandled error serving %s %s", request.method, request.path_qs)
            if self._streaming:
                self.close()
                return
            response = Response(status=500, text="internal server error")
        if self.closed or self.transport is None:
            return
        if isinstance(response, StreamResponse):
            if response.prepared:
                await response.write_eof()
                return
            response = Response(status=500, text="a stream was returned unprepared")
        self._send(request, response)

    def _send(self, request: Request, response: Response) -> None:
        """Write a whole response, with the Connection header the request calls for."""
        if self.transport is None:
            return
        if not request.keep_alive or self._server.stopping:
            response.headers["Connection"] = "close"
        elif request.version == "1.0":
            response.headers["Connection"] = "keep-alive"
        self.transport.write(response.render(date_line(), head_only=request.method == "HEAD"))

    # -- what StreamResponse uses ---------------------------------------------------------

    def date_line(self) -> bytes:
        return date_line()

    def start_stream(self, head: bytes) -> None:
        self._streaming = True
        self.write(head)

    def write(self, data: bytes) -> None:
        if self.closed or self.transport is None or self.transport.is_closing():
            raise ConnectionResetError("the client closed the connection")
        self.transport.write(data)

    async def drain(self) -> None:
        if self.closed:
            raise ConnectionResetError("the client closed the connection")
        if not self._writing_paused:
            return
        waiter = self._drain_waiter
        if waiter is None:
            waiter = self._drain_waiter = self._loop.create_future()
        await waiter

    def end_stream(self) -> None:
        self._streaming = False

    # -- lifecycle ---------------------------------------------------------------------------

    def _close_unread(self) -> None:
        """Close after a refused body (or head) the client may be sending anyway: end the
        sending side only (TLS has no half-close: it just stops writing), drop what arrives
        (``_input_done``), and close once the client closes (``eof_received``) or after
        ``LINGER`` seconds, so the answer is read before a reset can destroy it."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        if transport.can_write_eof():
            transport.write_eof()
        self._lingering = self._loop.call_later(LINGER, self.close)

    @property
    def busy(self) -> bool:
        return self._task is not None

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def shutdown(self) -> None:
        """Server stop: close now when idle; cancel a stream (a watch never ends by
        itself); let any other request finish (``_serve`` closes after it)."""
        if self._task is None:
            self.close()
        elif self._streaming:
            self._task.cancel()

    def cancel(self) -> None:
        """Server stop, once its timeout has passed: cancel the request still running."""
        if self._task is not None:
            self._task.cancel()

    async def wait_done(self) -> None:
        task = self._task
        if task is not None:
            with contextlib.suppress(BaseException):
                await asyncio.shield(task)


__all__ = ["MAX_PIPELINE", "Handler", "HttpProtocol", "date_line"]
