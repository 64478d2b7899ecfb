"""A harness for the HTTP server's tests: a real ``HTTPServer`` on a free loopback port
with a small handler (``serving``), and a raw HTTP/1.1 client over ``asyncio`` streams
that keeps the exact bytes of each response (``RawClient``).

Every wait has a deadline (``TIMEOUT``): a test that would hang fails instead.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import orjson

from kubegc.server.http import AnyResponse, HTTPServer, Request, Response

#: Seconds any single network wait in these tests may take.
TIMEOUT = 5.0

Handler = Callable[[Request], Awaitable[AnyResponse]]


async def echo(request: Request) -> Response:
    """Describes the request it was given, as JSON."""
    body = await request.read()
    return Response(body=orjson.dumps({
        "method": request.method,
        "path": request.path,
        "path_qs": request.path_qs,
        "query": {name: request.query.getall(name) for name in request.query},
        "headers": dict(request.headers),
        "body": body.decode("latin-1"),
        "version": request.version,
        "keep_alive": request.keep_alive,
    }), content_type="application/json")


@asynccontextmanager
async def serving(handler: Handler = echo, *, max_body: int = 1024,
                  keepalive_timeout: float = 75.0, ssl_context: ssl.SSLContext | None = None,
                  stop_timeout: float = 1.0) -> AsyncIterator[HTTPServer]:
    """An ``HTTPServer`` listening on 127.0.0.1 and a free port, stopped afterwards."""
    server = HTTPServer(handler, max_body=max_body, keepalive_timeout=keepalive_timeout)
    await server.start("127.0.0.1", 0, ssl_context=ssl_context)
    try:
        yield server
    finally:
        await server.stop(timeout=stop_timeout)


@dataclass
class RawResponse:
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    raw: bytes  # status line, headers and body as they arrived
    chunks: list[bytes] = field(default_factory=list)  # a chunked body's chunks

    def header(self, name: str) -> str | None:
        values = self.headers_named(name)
        return values[0] if values else None

    def headers_named(self, name: str) -> list[str]:
        return [v for n, v in self.headers if n.lower() == name.lower()]

    def json(self) -> Any:
        return orjson.loads(self.body)


class RawClient:
    """One TCP (or TLS) connection; writes bytes as given, reads responses exactly."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def connect(cls, port: int, *, ssl_context: ssl.SSLContext | None = None,
                      limit: int = 2 ** 16) -> RawClient:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(
            "127.0.0.1", port, ssl=ssl_context, limit=limit), TIMEOUT)
        return cls(reader, writer)

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await asyncio.wait_for(self.writer.drain(), TIMEOUT)

    async def request(self, method: str, target: str, *, headers: dict[str, str] | None = None,
                      body: bytes = b"", version: str = "1.1") -> RawResponse:
        await self.send(build(method, target, headers=headers, body=body, version=version))
        return await self.response(head_only=method == "HEAD")

    async def head(self) -> tuple[int, str, list[tuple[str, str]], bytes]:
        """The status line and headers of the next response."""
        raw = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), TIMEOUT)
        lines = raw.decode("latin-1").split("\r\n")
        version, status, reason = lines[0].split(" ", 2)
        assert version == "HTTP/1.1", lines[0]
        headers = []
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers.append((name, value.strip()))
        return int(status), reason, headers, raw

    async def response(self, *, head_only: bool = False) -> RawResponse:
        """The next response, read by its framing (Content-Length, chunked, or to EOF)."""
        status, reason, headers, raw = await self.head()
        names = {n.lower(): v for n, v in headers}
        chunks: list[bytes] = []
        if head_only or status in (100, 101, 204, 304):
            body = b""
        elif names.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size_line = await asyncio.wait_for(self.reader.readuntil(b"\r\n"), TIMEOUT)
                size = int(size_line.strip(), 16)
                data = await asyncio.wait_for(self.reader.readexactly(size + 2), TIMEOUT)
                raw += size_line + data
                assert data.endswith(b"\r\n"), data[-10:]
                if size == 0:
                    break
                chunks.append(data[:-2])
                body += data[:-2]
        elif "content-length" in names:
            body = await asyncio.wait_for(
                self.reader.readexactly(int(names["content-length"])), TIMEOUT)
            raw += body
        else:
            body = await self.read_to_eof()
            raw += body
        return RawResponse(status, reason, headers, body, raw, chunks)

    async def read_to_eof(self) -> bytes:
        return await asyncio.wait_for(self.reader.read(), TIMEOUT)

    async def closed_by_server(self) -> bool:
        """True once the server closes the connection with nothing more to send."""
        return await self.read_to_eof() == b""

    async def close(self) -> None:
        self.writer.close()
        with suppress(ConnectionError, ssl.SSLError):
            await asyncio.wait_for(self.writer.wait_closed(), TIMEOUT)


def build(method: str, target: str, *, headers: dict[str, str] | None = None,
          body: bytes = b"", version: str = "1.1") -> bytes:
    """The bytes of one request; Host always, Content-Length when there is a body."""
    lines = [f"{method} {target} HTTP/{version}", "Host: test"]
    given = {k.lower() for k in headers or {}}
    if body and "content-length" not in given and "transfer-encoding" not in given:
        lines.append(f"Content-Length: {len(body)}")
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


async def eventually(event: asyncio.Event, what: str) -> None:
    """Wait for ``event`` with the deadline; fail naming ``what`` when it never comes."""
    try:
        await asyncio.wait_for(event.wait(), TIMEOUT)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


__all__ = ["TIMEOUT", "RawClient", "RawResponse", "build", "echo", "eventually", "serving"]
