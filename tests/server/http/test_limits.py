"""The limits Go's net/http puts on what a client sends, on a real socket: a request head
over 1 MiB is answered 431 before more of it is read, HTTP/1.1 needs a ``Host`` header,
and plain HTTP sent to the TLS port gets Go's 400."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from pathlib import Path

import pytest

from kubegc.server.http import Request, Response
from kubegc.server.http.protocol import MAX_HEADER_BYTES

from .harness import TIMEOUT, RawClient, build, serving
from .test_server import tls_contexts

CHUNK = b"a" * 65536


async def send_big_header(client: RawClient, total: int) -> None:
    """A request whose one header is ``total`` bytes, sent piecewise until the server stops
    reading (it may close while we still send)."""
    with contextlib.suppress(ConnectionError, TimeoutError):
        await client.send(b"GET / HTTP/1.1\r\nHost: test\r\nX-Big: ")
        for _ in range(total // len(CHUNK)):
            await client.send(CHUNK)
        await client.send(b"\r\n\r\n")


async def test_a_head_over_1_mib_is_a_431_and_the_rest_is_not_read() -> None:
    called: list[str] = []

    async def handler(request: Request) -> Response:
        called.append(request.path)
        return Response(text="no")

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        sender = asyncio.create_task(send_big_header(client, 32 * 1024 * 1024))
        response = await client.response()
        assert (response.status, response.reason) == (431, "Request Header Fields Too Large")
        assert response.body == b"431 Request Header Fields Too Large"
        assert response.header("Connection") == "close"
        await asyncio.wait_for(sender, TIMEOUT)  # stopped: the server closed long before
        assert await client.closed_by_server()
    assert called == []


async def test_a_head_just_under_the_limit_is_served() -> None:
    async with serving() as server:
        client = await RawClient.connect(server.port)
        value = "v" * (MAX_HEADER_BYTES - 200)
        response = await client.request("GET", "/ok", headers={"X-Big": value})
        assert response.status == 200 and response.json()["headers"]["x-big"] == value
        await client.close()


async def test_a_head_of_many_headers_over_the_limit_is_a_431() -> None:
    async with serving() as server:
        client = await RawClient.connect(server.port)
        headers = {f"X-H{i}": "v" * 1000 for i in range(1100)}
        with contextlib.suppress(ConnectionError):
            await client.send(build("GET", "/", headers=headers))
        assert (await client.response()).status == 431


async def test_requests_before_a_refused_head_are_answered_first() -> None:
    async with serving() as server:
        client = await RawClient.connect(server.port)
        await client.send(build("GET", "/first"))
        sender = asyncio.create_task(send_big_header(client, 4 * 1024 * 1024))
        assert (await client.response()).json()["path"] == "/first"
        assert (await client.response()).status == 431
        await asyncio.wait_for(sender, TIMEOUT)


async def test_http_1_1_without_host_is_a_400() -> None:
    async with serving() as server:
        client = await RawClient.connect(server.port)
        await client.send(b"GET /x HTTP/1.1\r\nAccept: */*\r\n\r\n")
        response = await client.response()
        assert (response.status, response.reason) == (
            400, "Bad Request: missing required Host header")
        assert response.body == b"400 Bad Request: missing required Host header"
        assert await client.closed_by_server()


async def test_http_1_0_without_host_is_served() -> None:
    async with serving() as server:
        client = await RawClient.connect(server.port)
        await client.send(b"GET /x HTTP/1.0\r\n\r\n")
        response = await client.response()
        assert response.status == 200 and response.json()["path"] == "/x"


@pytest.mark.parametrize("start", [b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"POST /api",
                                   b"HEAD /", b"PUT /x", b"OPTIONS * HTTP/1.1"])
async def test_plain_http_on_the_tls_port_gets_gos_400(tmp_path: Path, start: bytes) -> None:
    server_ctx, _ = tls_contexts(tmp_path)
    async with serving(ssl_context=server_ctx) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(start)
        answer = await asyncio.wait_for(reader.read(), TIMEOUT)
        writer.close()
    assert answer == (b"HTTP/1.0 400 Bad Request\r\n\r\n"
                      b"Client sent an HTTP request to an HTTPS server.\n")


async def test_tls_still_works_when_the_hello_arrives_piecewise(tmp_path: Path) -> None:
    """The first bytes the server looks at may come in pieces: 2, then 1, then the rest."""
    server_ctx, client_ctx = tls_contexts(tmp_path)
    async with serving(ssl_context=server_ctx) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        tls = client_ctx.wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
        first = True
        while True:
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                data = outgoing.read()
                pieces = [data[:2], data[2:3], data[3:]] if first else [data]
                first = False
                for piece in pieces:
                    writer.write(piece)
                    await writer.drain()
                incoming.write(await asyncio.wait_for(reader.read(65536), TIMEOUT))
        tls.write(build("GET", "/tls", headers={"Connection": "close"}))
        writer.write(outgoing.read())
        answer = b""
        while b"/tls" not in answer:
            incoming.write(await asyncio.wait_for(reader.read(65536), TIMEOUT))
            with contextlib.suppress(ssl.SSLWantReadError):
                answer += tls.read(65536)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
