"""What leaves the server: a ``Response`` as one head plus a Content-Length body, a
``StreamResponse`` as chunks written as they come (with back-pressure), repeated headers,
and HEAD answered with the head only."""

from __future__ import annotations

import asyncio
import http.client
import socket

import aiohttp
import pytest

from kubegc.server import APIServer
from kubegc.server.http import AnyResponse, Request, Response, ResponseHeaders, StreamResponse
from kubegc.server.http.response import render_head
from kubegc.server.verbs import watch

from .harness import TIMEOUT, RawClient, build, eventually, serving

DATE = b"Date: Thu, 01 Jan 2026 00:00:00 GMT\r\n\r\n"

# -- rendering, on its own ------------------------------------------------------------------


def test_response_headers_keep_order_repeat_on_add_and_replace_on_set() -> None:
    headers = ResponseHeaders({"Content-Type": "a/b"})
    headers.add("Warning", "one")
    headers.add("warning", "two")
    assert headers.getall("WARNING") == ["one", "two"]
    assert headers.get("Warning") == "one" and headers.get("nope") is None
    assert "content-type" in headers and "x" not in headers
    headers["WARNING"] = "three"  # replaces every earlier Warning, whatever its case
    assert list(headers) == [("Content-Type", "a/b"), ("WARNING", "three")]
    assert not ResponseHeaders() and headers


def test_render_head_exact_bytes() -> None:
    headers = ResponseHeaders()
    headers.add("Warning", '299 - "first"')
    headers.add("Warning", '299 - "second"')
    head = render_head(201, "application/json", headers, "Content-Length: 2\r\n", DATE)
    assert head == (b"HTTP/1.1 201 Created\r\n"
                    b'Warning: 299 - "first"\r\n'
                    b'Warning: 299 - "second"\r\n'
                    b"Content-Type: application/json\r\n"
                    b"Content-Length: 2\r\n" + DATE)


def test_render_head_a_content_type_header_wins_over_the_argument() -> None:
    headers = ResponseHeaders({"content-type": "application/vnd.kubernetes.protobuf"})
    head = render_head(200, "application/json", headers, "Content-Length: 0\r\n", DATE)
    assert b"application/json" not in head
    assert head.count(b"content-type: application/vnd.kubernetes.protobuf\r\n") == 1


def test_render_head_neutralises_line_breaks_in_values_and_unknown_statuses() -> None:
    headers = ResponseHeaders({"X-Evil": "a\r\nSet-Cookie: x=1\nb"})
    head = render_head(599, None, headers, "Content-Length: 0\r\n", DATE)
    assert head.startswith(b"HTTP/1.1 599 Unknown\r\n")
    assert b"X-Evil: a  Set-Cookie: x=1 b\r\n" in head
    assert b"\r\nSet-Cookie" not in head
    assert b"Content-Type" not in head  # none given, none invented


def test_response_render_and_head_only() -> None:
    response = Response(text="héllo", status=404)
    whole = response.render(DATE)
    assert whole == (b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\n"
                     b"Content-Length: 6\r\n") + DATE + "héllo".encode()
    assert response.render(DATE, head_only=True) == whole[:-6]
    assert Response(body=b"{}", content_type="application/json").render(DATE).endswith(
        b"Content-Type: application/json\r\nContent-Length: 2\r\n" + DATE + b"{}")


# -- through the server ----------------------------------------------------------------------


async def warnings(request: Request) -> Response:
    response = Response(text="warned", headers={"X-One": "1"})
    response.headers.add("Warning", '299 - "first"')
    response.headers.add("Warning", '299 - "second"')
    return response


async def test_a_header_added_twice_leaves_twice() -> None:
    async with serving(warnings) as server:
        client = await RawClient.connect(server.port)
        response = await client.request("GET", "/")
        assert response.headers_named("warning") == ['299 - "first"', '299 - "second"']
        assert b'\r\nWarning: 299 - "first"\r\nWarning: 299 - "second"\r\n' in response.raw
        assert response.header("X-One") == "1" and response.header("Date") is not None
        await client.close()
        async with aiohttp.ClientSession() as session, \
                session.get(f"http://127.0.0.1:{server.port}/") as got:
            assert got.headers.getall("Warning") == ['299 - "first"', '299 - "second"']
            assert await got.text() == "warned"


async def test_head_gets_content_length_and_no_body() -> None:
    async def handler(request: Request) -> Response:
        return Response(body=b"0123456789", content_type="text/plain")

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        await client.send(build("HEAD", "/") + build("GET", "/"))
        head = await client.response(head_only=True)
        assert head.status == 200 and head.header("Content-Length") == "10"
        assert head.raw.endswith(b"\r\n\r\n")
        # the next bytes on the wire are the GET's status line: the HEAD sent no body
        got = await client.response()
        assert got.raw.startswith(b"HTTP/1.1 200 OK\r\n") and got.body == b"0123456789"
        await client.close()

        def with_http_client() -> tuple[int, str | None, bytes]:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=TIMEOUT)
            try:
                conn.request("HEAD", "/")
                response = conn.getresponse()
                return response.status, response.getheader("Content-Length"), response.read()
            finally:
                conn.close()

        assert await asyncio.to_thread(with_http_client) == (200, "10", b"")


async def test_stream_chunked_framing_exact_bytes() -> None:
    async def handler(request: Request) -> StreamResponse:
        response = StreamResponse(content_type="application/json")
        response.headers["X-Stream"] = "yes"
        await response.prepare(request)
        await response.write(b"hello")
        await response.write(b"")  # nothing: an empty chunk would end the body
        await response.write(b"x" * 20)
        await response.write_eof()
        await response.write_eof()  # once only
        return response

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        response = await client.request("GET", "/watch")
        head_end = response.raw.index(b"\r\n\r\n") + 4
        head, body = response.raw[:head_end], response.raw[head_end:]
        assert head.startswith(b"HTTP/1.1 200 OK\r\nX-Stream: yes\r\n"
                               b"Content-Type: application/json\r\n"
                               b"Transfer-Encoding: chunked\r\nDate: ")
        assert b"Content-Length" not in head
        assert body == b"5\r\nhello\r\n14\r\n" + b"x" * 20 + b"\r\n0\r\n\r\n"
        # the stream ended cleanly: the connection serves the next request
        assert (await client.request("GET", "/watch")).chunks == [b"hello", b"x" * 20]
        await client.close()


async def test_a_stream_returned_without_write_eof_is_ended_by_the_server() -> None:
    async def handler(request: Request) -> StreamResponse:
        response = StreamResponse()
        await response.prepare(request)
        await response.write(b"only")
        return response

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        response = await client.request("GET", "/")
        assert response.raw.endswith(b"4\r\nonly\r\n0\r\n\r\n")
        assert (await client.request("GET", "/")).body == b"only"
        await client.close()


async def test_an_unprepared_stream_is_a_500() -> None:
    async def handler(request: Request) -> StreamResponse:
        return StreamResponse()

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        response = await client.request("GET", "/")
        assert response.status == 500
        assert response.body == b"a stream was returned unprepared"
        await client.close()


async def test_aiohttp_client_reads_a_stream_chunk_by_chunk() -> None:
    sent = asyncio.Event()
    go_on = asyncio.Event()

    async def handler(request: Request) -> StreamResponse:
        response = StreamResponse(content_type="application/json")
        await response.prepare(request)
        await response.write(b'{"type":"ADDED"}\n')
        sent.set()
        await go_on.wait()  # the first event must arrive before the stream goes on
        await response.write(b'{"type":"DELETED"}\n')
        await response.write_eof()
        return response

    async with serving(handler) as server, aiohttp.ClientSession() as session, \
            session.get(f"http://127.0.0.1:{server.port}/w") as got:
        assert got.headers["Transfer-Encoding"] == "chunked"
        first = await asyncio.wait_for(got.content.readline(), TIMEOUT)
        assert first == b'{"type":"ADDED"}\n' and sent.is_set()
        go_on.set()
        assert await asyncio.wait_for(got.content.read(), TIMEOUT) == b'{"type":"DELETED"}\n'


async def test_stream_write_waits_while_the_client_does_not_read() -> None:
    """Back-pressure: with small socket buffers and a client that reads nothing, ``write``
    stops returning long before the body is out, and the server buffers a bounded amount;
    once the client reads, everything arrives in order."""
    chunk = b"c" * 65536
    count = 32  # 2 MiB: far more than the shrunk socket buffers hold
    blocked = asyncio.Event()
    finished = asyncio.Event()
    progress: dict[str, int] = {"written": 0, "max_buffered": 0}

    async def handler(request: Request) -> StreamResponse:
        transport = request.connection.transport  # type: ignore[attr-defined]
        transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF,
                                                      8192)
        transport.set_write_buffer_limits(high=65536)
        response = StreamResponse()
        await response.prepare(request)
        for i in range(count):
            write = asyncio.ensure_future(response.write(chunk))
            done, _ = await asyncio.wait({write}, timeout=0.2)
            if not done:
                blocked.set()  # a write that does not return while the client reads nothing
            await write
            progress["written"] = i + 1
            progress["max_buffered"] = max(progress["max_buffered"],
                                           transport.get_write_buffer_size())
        await response.write_eof()
        finished.set()
        return response

    async with serving(handler) as server:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
        sock.setblocking(False)
        await asyncio.wait_for(asyncio.get_running_loop().sock_connect(
            sock, ("127.0.0.1", server.port)), TIMEOUT)
        reader, writer = await asyncio.open_connection(sock=sock)
        client = RawClient(reader, writer)
        await client.send(build("GET", "/watch"))
        await eventually(blocked, "a stream write to wait for the client")
        assert not finished.is_set()
        assert progress["written"] < count // 2
        # what the server holds in memory stays near the high-water mark, not the body
        assert progress["max_buffered"] <= 65536 + len(chunk)
        response = await client.response()
        assert len(response.body) == count * len(chunk) and set(response.body) == {ord("c")}
        await eventually(finished, "the stream to end")
        assert progress["written"] == count
        await client.close()


# -- HEAD to a stream --------------------------------------------------------------------------


@pytest.mark.parametrize("style", ["watch", "naive"])
async def test_head_to_a_stream_sends_the_head_only_and_the_connection_goes_on(
        style: str) -> None:
    """A HEAD answered by a stream: the status line and headers, no chunk, no last chunk;
    the handler is stopped as when the client leaves, whether it catches that ("watch":
    stops on ``ConnectionResetError``, as the watch verb does) or lets it out ("naive")."""
    ended: list[str] = []

    async def handler(request: Request) -> StreamResponse:
        response = StreamResponse(content_type="application/json")
        response.headers["X-Stream"] = "yes"
        try:
            await response.prepare(request)
            await response.write(b"event\n")
            if style == "watch" and request.path != "/end":
                await asyncio.Event().wait()  # no more events, ever
            await response.write_eof()
        except ConnectionResetError:
            ended.append(f"{request.method} reset")
            if style == "naive":
                raise
        else:
            ended.append(f"{request.method} done")
        await response.write_eof()
        return response

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        await client.send(build("HEAD", "/w") + build("GET", "/end", headers={
            "Connection": "close"}))
        head = await client.response(head_only=True)
        assert head.status == 200 and head.header("X-Stream") == "yes"
        assert head.header("Content-Type") == "application/json"
        assert head.header("Transfer-Encoding") == "chunked"
        assert head.header("Connection") is None
        # the next bytes on the wire are the GET's status line: the HEAD sent no body
        rest = await client.read_to_eof()
        assert rest.startswith(b"HTTP/1.1 200 OK\r\n"), rest[:40]
        assert rest.endswith(b"\r\n\r\n6\r\nevent\n\r\n0\r\n\r\n")
        assert ended == ["HEAD reset", "GET done"]

        def with_http_client() -> list[tuple[int, str | None, bytes]]:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=TIMEOUT)
            try:
                out = []
                for _ in range(2):  # the connection serves a second HEAD
                    conn.request("HEAD", "/w")
                    response = conn.getresponse()
                    out.append((response.status, response.getheader("X-Stream"),
                                response.read()))
                return out
            finally:
                conn.close()

        assert await asyncio.to_thread(with_http_client) == [(200, "yes", b"")] * 2


async def test_head_to_a_stream_after_a_prepared_error_status() -> None:
    """HEAD to a stream that begins with a non-200 status keeps that status."""
    async def handler(request: Request) -> StreamResponse:
        response = StreamResponse(status=410)
        try:
            await response.prepare(request)
            await response.write(b"gone")
        except ConnectionResetError:
            pass
        await response.write_eof()
        return response

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        await client.send(build("HEAD", "/w") + build("HEAD", "/w"))
        for _ in range(2):
            head = await client.response(head_only=True)
            assert head.status == 410 and head.header("Transfer-Encoding") == "chunked"
        await client.close()


async def test_head_to_kubegcs_watch_ends_the_watch(api_server: APIServer) -> None:
    """The real watch verb answers HEAD with the head only and closes its watch (the
    resource routes answer HEAD 405 before reaching it; this calls the verb directly)."""
    ctx = api_server.ctx
    target = ctx.registry.target("", "v1", "configmaps", "default")

    async def handler(request: Request) -> AnyResponse:
        if request.query.get("watch") == "true":
            return await watch.watch(ctx, request, ctx.registry.storage(target), target)
        return Response(text=str(ctx.registry.cache.watcher_count()))

    path = "/api/v1/namespaces/default/configmaps"
    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        await client.send(build("HEAD", f"{path}?watch=true") * 2 + build("GET", path))
        for _ in range(2):
            head = await client.response(head_only=True)
            assert head.status == 200 and head.header("Content-Type") == "application/json"
            assert head.header("Transfer-Encoding") == "chunked"
        # the next bytes are the GET's answer: no watch is left open
        assert (await client.response()).body == b"0"
        await client.close()
