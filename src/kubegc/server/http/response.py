"""Responses: ``Response`` (a whole body with Content-Length) and ``StreamResponse`` (a
chunked body written as it is produced: watches).

Both render their status line and headers into one ``bytes`` so that a small response
leaves in a single ``transport.write``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from http import HTTPStatus
from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    from kubegc.server.http.request import Request

_REASONS = {s.value: s.phrase for s in HTTPStatus}


class ResponseHeaders:
    """Response headers in order; names may repeat (``add``), ``[name] =`` replaces."""

    __slots__ = ("_items",)

    def __init__(self, initial: Mapping[str, str] | None = None) -> None:
        self._items: list[tuple[str, str]] = list(initial.items()) if initial else []

    def add(self, name: str, value: str) -> None:
        self._items.append((name, value))

    def __setitem__(self, name: str, value: str) -> None:
        lower = name.lower()
        self._items = [(n, v) for n, v in self._items if n.lower() != lower]
        self._items.append((name, value))

    def get(self, name: str, default: str | None = None) -> str | None:
        lower = name.lower()
        for n, v in self._items:
            if n.lower() == lower:
                return v
        return default

    def getall(self, name: str) -> list[str]:
        lower = name.lower()
        return [v for n, v in self._items if n.lower() == lower]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)


def render_head(status: int, content_type: str | None, headers: ResponseHeaders | None,
                framing: str, date: bytes) -> bytes:
    """Status line and headers, ending with the blank line. ``framing`` is the
    Content-Length or Transfer-Encoding header line."""
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}\r\n"]
    has_type = False
    if headers:
        for name, value in headers:
            if "\r" in value or "\n" in value:
                value = value.replace("\r", " ").replace("\n", " ")
            lines.append(f"{name}: {value}\r\n")
            has_type = has_type or name.lower() == "content-type"
    if content_type is not None and not has_type:
        lines.append(f"Content-Type: {content_type}\r\n")
    lines.append(framing)
    return "".join(lines).encode("latin-1", "replace") + date


class Response:
    """A complete response. ``text`` implies ``text/plain; charset=utf-8``."""

    __slots__ = ("_headers", "body", "content_type", "status")

    def __init__(self, *, body: bytes = b"", text: str | None = None, status: int = 200,
                 content_type: str | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        self.status = status
        if text is not None:
            body = text.encode()
            content_type = content_type or "text/plain; charset=utf-8"
        self.body = body
        self.content_type = content_type
        self._headers = ResponseHeaders(headers) if headers else None

    @property
    def headers(self) -> ResponseHeaders:
        if self._headers is None:
            self._headers = ResponseHeaders()
        return self._headers

    def render(self, date: bytes, *, head_only: bool = False) -> bytes:
        # 204 and 304 have no body and no Content-Length (net/http, RFC 9110 §8.6)
        framing = "" if self.status in (204, 304) else f"Content-Length: {len(self.body)}\r\n"
        head = render_head(self.status, self.content_type, self._headers, framing, date)
        return head if head_only else head + self.body


class BodyNotAllowed(ConnectionResetError):
    """A response to HEAD has no body (RFC 9110 §9.3.2). ``StreamResponse.prepare`` raises
    it once the head is sent (and ``write`` after that), so that the handler stops making
    a body as it does when its client has gone; the connection goes on."""

    def __init__(self) -> None:
        super().__init__("a response to HEAD has no body")


class StreamResponse:
    """A response whose body is written in chunks after ``prepare``. The connection
    applies back-pressure: ``write`` waits while the client does not read. To a HEAD
    request the head is the whole response: ``prepare`` sends it and raises
    ``BodyNotAllowed`` (Go's handlers see ``ErrBodyNotAllowed`` on their first write)."""

    __slots__ = ("_done", "_head_only", "_headers", "_request", "content_type", "prepared",
                 "status")

    def __init__(self, *, status: int = 200, headers: Mapping[str, str] | None = None,
                 content_type: str | None = None) -> None:
        self.status = status
        self.content_type = content_type
        self._headers = ResponseHeaders(headers) if headers else None
        self._request: Request | None = None
        self.prepared = False
        self._done = False
        self._head_only = False

    @property
    def headers(self) -> ResponseHeaders:
        if self._headers is None:
            self._headers = ResponseHeaders()
        return self._headers

    async def prepare(self, request: Request) -> None:
        """Send the status line and headers (for HEAD, all there is: raises
        ``BodyNotAllowed`` after)."""
        conn = _connection(request)
        self._request = request
        conn.start_stream(render_head(self.status, self.content_type, self._headers,
                                      "Transfer-Encoding: chunked\r\n", conn.date_line()))
        self.prepared = True
        if request.on_stream is not None:
            request.on_stream(self.status)
        if request.method == "HEAD":
            self._head_only = True
            raise BodyNotAllowed

    async def write(self, data: bytes) -> None:
        """One chunk; raises ``ConnectionResetError`` once the client has gone."""
        if not data:
            return
        assert self._request is not None, "write before prepare"
        if self._head_only:
            raise BodyNotAllowed
        conn = _connection(self._request)
        conn.write(b"%x\r\n%b\r\n" % (len(data), data))
        await conn.drain()

    def abort(self) -> None:
        """Cut the answer short after its head was sent: the connection is closed without
        the last chunk, so the client sees a broken response (Go's handlers panic with
        ``http.ErrAbortHandler``, which net/http does not log as an error)."""
        if self._done or self._request is None:
            return
        self._done = True
        _connection(self._request).close()

    async def write_eof(self) -> None:
        if self._done or self._request is None:
            return
        self._done = True
        conn = _connection(self._request)
        if not self._head_only:
            conn.write(b"0\r\n\r\n")
        conn.end_stream()


class _Connection(Protocol):
    """What a stream needs from its connection (``protocol.HttpProtocol``)."""

    def start_stream(self, head: bytes) -> None: ...
    def write(self, data: bytes) -> None: ...
    async def drain(self) -> None: ...
    def end_stream(self) -> None: ...
    def date_line(self) -> bytes: ...
    def close(self) -> None: ...


def _connection(request: Request) -> _Connection:
    conn = request.connection
    if conn is None:
        raise ConnectionResetError("the request has no connection")
    return cast(_Connection, conn)


#: What a handler returns.
AnyResponse = Response | StreamResponse

__all__ = ["AnyResponse", "BodyNotAllowed", "Response", "ResponseHeaders", "StreamResponse",
           "render_head"]
