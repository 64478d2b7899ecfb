"""One connection's life: keep-alive and HTTP/1.0, pipelining, ``Expect: 100-continue``,
malformed input, handler failures, streams cut short by the client, and upgrades."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import logging
import socket
from collections.abc import Awaitable, Callable

import aiohttp
import pytest

from kubegc.server.http import Request, RequestEntityTooLarge, Response, StreamResponse
from kubegc.server.http.protocol import MAX_PIPELINE

from .harness import TIMEOUT, RawClient, build, echo, eventually, serving


async def round_trip(port: int) -> None:
    """A whole request on another connection: afterwards the server's loop has read
    whatever was sent to it before (used to order a write before a later step)."""
    other = await RawClient.connect(port)
    await other.request("GET", "/sync", headers={"Connection": "close"})
    await other.close()


# -- keep-alive, HTTP/1.0, Connection: close ------------------------------------------------


async def test_keep_alive_serves_several_requests_on_one_connection() -> None:
    connections: list[object] = []

    async def handler(request: Request) -> Response:
        connections.append(request.connection)
        return await echo(request)

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        for i in range(5):
            response = await client.request("POST", f"/r{i}", body=f"body {i}".encode())
            assert response.status == 200 and response.header("Connection") is None
            assert response.json()["path"] == f"/r{i}"
            assert response.json()["body"] == f"body {i}"
            assert response.json()["keep_alive"] is True
        await client.close()
    assert len(connections) == 5 and len({id(c) for c in connections}) == 1


async def test_aiohttp_session_reuses_one_connection() -> None:
    connections: set[int] = set()

    async def handler(request: Request) -> Response:
        connections.add(id(request.connection))
        return await echo(request)

    async with serving(handler) as server:
        connector = aiohttp.TCPConnector(limit=1)
        async with aiohttp.ClientSession(connector=connector) as session:
            for i in range(4):
                async with session.put(f"http://127.0.0.1:{server.port}/x?i={i}",
                                       data=b"payload") as got:
                    seen = await got.json()
                    assert seen["query"] == {"i": [str(i)]} and seen["body"] == "payload"
    assert len(connections) == 1


async def test_http_client_reuses_one_connection() -> None:
    connections: set[int] = set()

    async def handler(request: Request) -> Response:
        connections.add(id(request.connection))
        return await echo(request)

    async with serving(handler) as server:
        def talk() -> list[tuple[int, str]]:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=TIMEOUT)
            try:
                out = []
                for method in ("GET", "POST", "DELETE"):
                    conn.request(method, "/thing", body=b"abc" if method == "POST" else None)
                    response = conn.getresponse()
                    out.append((response.status, response.read().decode()))
                return out
            finally:
                conn.close()

        answers = await asyncio.to_thread(talk)
    assert [status for status, _ in answers] == [200, 200, 200]
    assert '"method":"POST"' in answers[1][1] and '"body":"abc"' in answers[1][1]
    assert len(connections) == 1


async def test_http10_without_keep_alive_closes_after_the_response() -> None:
    async with serving() as server:
        client = await RawClient.connect(server.port)
        response = await client.request("GET", "/old", version="1.0")
        assert response.status == 200 and response.header("Connection") == "close"
        assert response.json()["version"] == "1.0"
        assert await client.closed_by_server()


async def test_http10_with_keep_alive_stays_open() -> None:
    async with serving() as server:
        client = await RawClient.connect(server.port)
        for path in ("/one", "/two"):
            response = await client.request("GET", path, version="1.0",
                                            headers={"Connection": "keep-alive"})
            assert response.header("Connection") == "keep-alive"
            assert response.json()["path"] == path
        response = await client.request("GET", "/last", version="1.0")
        assert response.header("Connection") == "close"
        assert await client.closed_by_server()


async def test_connection_close_closes_after_its_response_and_drops_what_follows() -> None:
    paths: list[str] = []

    async def handler(request: Request) -> Response:
        paths.append(request.path)
        return await echo(request)

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        await client.send(build("GET", "/first") + build("GET", "/last", headers={
            "Connection": "close"}) + build("GET", "/never"))
        assert (await client.response()).header("Connection") is None
        last = await client.response()
        assert last.header("Connection") == "close" and last.json()["keep_alive"] is False
        assert await client.closed_by_server()
    assert paths == ["/first", "/last"]


async def test_a_stray_line_end_after_a_closing_request_does_not_lose_its_answer() -> None:
    # old clients end a POST body with an extra CRLF (RFC 9112 §2.2)
    async with serving() as server:
        client = await RawClient.connect(server.port)
        await client.send(build("POST", "/x", body=b"abc", headers={"Connection": "close"})
                          + b"\r\n")
        response = await client.response()
        assert response.json()["body"] == "abc" and response.header("Connection") == "close"
        assert await client.closed_by_server()


# -- pipelining --------------------------------------------------------------------------------


async def test_pipelined_requests_are_answered_in_order() -> None:
    async def handler(request: Request) -> Response:
        # the earlier requests take longer: order must come from the queue, not the timing
        for _ in range(10 - int(request.path[2:])):
            await asyncio.sleep(0)
        return Response(text=request.path)

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        await client.send(b"".join(build("GET", f"/p{i}") for i in range(10)))
        assert [(await client.response()).body for _ in range(10)] == [
            f"/p{i}".encode() for i in range(10)]
        await client.close()


async def test_more_pipelined_requests_than_the_queue_holds() -> None:
    count = MAX_PIPELINE * 3
    async with serving(max_body=64) as server:
        client = await RawClient.connect(server.port)
        await client.send(b"".join(build("POST", f"/p{i}", body=str(i).encode())
                                   for i in range(count)))
        for i in range(count):
            seen = (await client.response()).json()
            assert (seen["path"], seen["body"]) == (f"/p{i}", str(i))
        assert (await client.request("GET", "/after")).json()["path"] == "/after"
        await client.close()


async def test_a_request_split_across_many_writes() -> None:
    request = build("POST", "/split/path?q=1", body=b"0123456789",
                    headers={"X-Long-Header-Name": "long header value"})
    async with serving() as server:
        client = await RawClient.connect(server.port)
        for start in range(0, len(request), 7):
            await client.send(request[start:start + 7])
            await round_trip(server.port)  # each piece is its own read on the server
        seen = (await client.response()).json()
        assert seen["path_qs"] == "/split/path?q=1" and seen["body"] == "0123456789"
        assert seen["headers"]["x-long-header-name"] == "long header value"
        await client.close()


# -- Expect: 100-continue -------------------------------------------------------------------


async def test_expect_100_continue_is_answered_before_the_body() -> None:
    async with serving() as server:
        client = await RawClient.connect(server.port)
        await client.send(b"POST /e HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n"
                          b"Expect: 100-continue\r\n\r\n")
        interim = await asyncio.wait_for(client.reader.readuntil(b"\r\n\r\n"), TIMEOUT)
        assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
        await client.send(b"hello")
        assert (await client.response()).json()["body"] == "hello"
        await client.close()


async def test_no_100_continue_for_a_body_over_the_limit() -> None:
    async def handler(request: Request) -> Response:
        try:
            await request.read()
        except Exception as e:
            return Response(status=413, text=str(e))
        return Response(text="read")

    async with serving(handler, max_body=4) as server:
        client = await RawClient.connect(server.port)
        await client.send(b"POST /e HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n"
                          b"Expect: 100-continue\r\n\r\nhello")
        response = await client.response()  # the first thing back is the final answer
        assert response.status == 413 and response.body.endswith(b"limit is 4")
        await client.close()


def expect_too_large(length: int, path: str = "/big") -> bytes:
    """The head of a POST that announces a ``length``-byte body and waits for 100."""
    return (f"POST {path} HTTP/1.1\r\nHost: test\r\nContent-Length: {length}\r\n"
            f"Expect: 100-continue\r\n\r\n").encode()


def reading_handler(seen: list[str]) -> Callable[[Request], Awaitable[Response]]:
    """Reads the body; a body over the limit is a 413 (as kubegc's own handler does)."""
    async def handler(request: Request) -> Response:
        try:
            body = await request.read()
        except RequestEntityTooLarge as e:
            seen.append(f"{request.path}: {e}")
            return Response(status=413, text=str(e))
        seen.append(f"{request.path}: read {len(body)}")
        return Response(text=request.path)
    return handler


async def test_expect_100_over_the_limit_is_answered_at_once_without_the_body() -> None:
    seen: list[str] = []
    async with serving(reading_handler(seen), max_body=1024) as server:
        client = await RawClient.connect(server.port)
        await client.send(expect_too_large(10 * 1024 * 1024))
        # no body was sent: the answer cannot wait for it, and is not "100 Continue"
        response = await client.response()
        assert response.raw.startswith(b"HTTP/1.1 413 Request Entity Too Large\r\n")
        assert response.header("Connection") == "close"
        assert response.body == b"Request entity too large: limit is 1024"
        assert await client.closed_by_server()
    assert seen == ["/big: Request entity too large: limit is 1024"]


async def test_expect_100_over_the_limit_when_the_handler_does_not_read_the_body() -> None:
    async def handler(request: Request) -> Response:
        return Response(status=404, text="no such thing")

    async with serving(handler, max_body=1024) as server:
        client = await RawClient.connect(server.port)
        await client.send(expect_too_large(2048))
        response = await client.response()
        assert (response.status, response.body) == (404, b"no such thing")
        assert response.header("Connection") == "close"
        assert await client.closed_by_server()


async def test_expect_100_over_the_limit_behind_and_before_pipelined_requests() -> None:
    seen: list[str] = []
    async with serving(reading_handler(seen), max_body=1024) as server:
        client = await RawClient.connect(server.port)
        # what follows the refused head (part of its body, another request) is never read
        await client.send(build("POST", "/first", body=b"abc") + expect_too_large(4096)
                          + b"x" * 100 + build("GET", "/never"))
        first = await client.response()
        assert first.body == b"/first" and first.header("Connection") is None
        refused = await client.response()
        assert refused.status == 413 and refused.header("Connection") == "close"
        assert await client.closed_by_server()
    assert seen == ["/first: read 3", "/big: Request entity too large: limit is 1024"]


async def test_expect_100_over_the_limit_from_a_client_that_sends_the_body_anyway() -> None:
    """A client may send the body without waiting for 100 (RFC 9110 §10.1.1): it still
    gets the whole 413, not a connection reset by the close of unread input."""
    seen: list[str] = []
    body = b"b" * (4 * 1024 * 1024)
    async with serving(reading_handler(seen), max_body=1024) as server:
        client = await RawClient.connect(server.port)
        client.writer.write(expect_too_large(len(body)))

        async def upload() -> None:
            with contextlib.suppress(ConnectionError):
                for start in range(0, len(body), 65536):
                    client.writer.write(body[start:start + 65536])
                    await client.writer.drain()

        uploading = asyncio.ensure_future(upload())
        try:
            response = await client.response()
            assert response.status == 413 and response.header("Connection") == "close"
            assert response.body == b"Request entity too large: limit is 1024"
            assert await client.closed_by_server()
        finally:
            uploading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await uploading
    assert seen == ["/big: Request entity too large: limit is 1024"]


async def test_expect_100_within_the_limit_on_a_keep_alive_connection_goes_on() -> None:
    seen: list[str] = []
    async with serving(reading_handler(seen), max_body=1024) as server:
        client = await RawClient.connect(server.port)
        for i in range(2):
            await client.send(expect_too_large(1024, f"/ok{i}"))
            interim = await asyncio.wait_for(client.reader.readuntil(b"\r\n\r\n"), TIMEOUT)
            assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
            await client.send(b"k" * 1024)
            response = await client.response()
            assert response.body == f"/ok{i}".encode() and response.header("Connection") is None
        await client.close()
    assert seen == ["/ok0: read 1024", "/ok1: read 1024"]


async def test_aiohttp_client_with_expect_100() -> None:
    async with serving() as server, aiohttp.ClientSession() as session, \
            session.post(f"http://127.0.0.1:{server.port}/e", data=b"payload",
                         expect100=True) as got:
        seen = await got.json()
    assert seen["body"] == "payload" and seen["headers"]["expect"] == "100-continue"


# -- malformed input ---------------------------------------------------------------------------


@pytest.mark.parametrize("data", [
    pytest.param(b"GARBAGE\r\n\r\n", id="request-line"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: test\r\nNo colon here\r\n\r\n", id="header-line"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: t\r\nBad Name: x\r\n\r\n", id="header-name"),
    pytest.param(b"POST / HTTP/1.1\r\nHost: t\r\nContent-Length: abc\r\n\r\n",
                 id="content-length"),
    pytest.param(b"POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                 id="chunk-size"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\n"
                 b"\r\n", id="two-lengths"),
])
async def test_malformed_request_is_a_400_and_the_connection_closes(data: bytes) -> None:
    called: list[str] = []

    async def handler(request: Request) -> Response:
        called.append(request.path)
        return Response(text="no")

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        await client.send(data)
        response = await client.response()
        assert response.status == 400 and response.reason == "Bad Request"
        assert response.header("Connection") == "close"
        assert response.body.startswith(b"400 Bad Request")
        assert await client.closed_by_server()
    assert called == []


async def test_garbage_after_a_good_request_answers_the_good_one_first() -> None:
    async with serving() as server:
        client = await RawClient.connect(server.port)
        await client.send(build("GET", "/good") + b"GARBAGE\r\n\r\n")
        assert (await client.response()).json()["path"] == "/good"
        assert (await client.response()).status == 400
        assert await client.closed_by_server()


async def test_garbage_arriving_while_a_request_is_in_flight() -> None:
    entered, release = asyncio.Event(), asyncio.Event()

    async def handler(request: Request) -> Response:
        if request.path == "/slow":
            entered.set()
            await release.wait()
        return Response(text=request.path)

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        await client.send(build("GET", "/slow"))
        await eventually(entered, "the slow request to reach its handler")
        await client.send(b"\x00\x01 not http\r\n\r\n")
        await round_trip(server.port)
        release.set()
        assert (await client.response()).body == b"/slow"
        assert (await client.response()).status == 400
        assert await client.closed_by_server()


# -- handler failures --------------------------------------------------------------------------


async def test_a_handler_exception_is_a_500_and_the_server_goes_on(
        caplog: pytest.LogCaptureFixture) -> None:
    async def handler(request: Request) -> Response:
        if request.path == "/boom":
            raise RuntimeError("kaboom")
        return Response(text="fine")

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        with caplog.at_level(logging.ERROR, logger="kubegc.server.http.protocol"):
            response = await client.request("GET", "/boom?x=1")
        assert response.status == 500 and response.body == b"internal server error"
        assert "unhandled error serving GET /boom?x=1" in caplog.text
        assert "kaboom" in caplog.text
        # the same connection, and a new one, still work
        assert (await client.request("GET", "/ok")).body == b"fine"
        other = await RawClient.connect(server.port)
        assert (await other.request("GET", "/ok")).body == b"fine"
        await client.close()
        await other.close()


async def test_an_exception_after_a_stream_began_closes_the_connection() -> None:
    async def handler(request: Request) -> StreamResponse:
        response = StreamResponse()
        await response.prepare(request)
        await response.write(b"partial")
        raise RuntimeError("mid-stream")

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        await client.send(build("GET", "/watch"))
        status, *_ = await client.head()
        assert status == 200
        # the body is cut short: no terminating chunk, and the connection closes
        assert await client.read_to_eof() == b"7\r\npartial\r\n"


@pytest.mark.parametrize("stalled_in", ["wait", "write"])
async def test_client_disconnect_during_a_stream_cancels_the_handler(stalled_in: str) -> None:
    stalled, ended = asyncio.Event(), asyncio.Event()
    outcome: list[str] = []

    async def handler(request: Request) -> StreamResponse:
        response = StreamResponse()
        await response.prepare(request)
        await response.write(b"first")
        try:
            if stalled_in == "wait":  # a watch with nothing to say
                stalled.set()
                await asyncio.Event().wait()
            transport = request.connection.transport  # type: ignore[attr-defined]
            transport.set_write_buffer_limits(high=1024)
            while True:  # a watch writing to a client that does not read
                write = asyncio.ensure_future(response.write(b"w" * 65536))
                done, _ = await asyncio.wait({write}, timeout=0.2)
                if not done:
                    stalled.set()
                await write
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        except ConnectionResetError:
            outcome.append("reset")
            raise
        finally:
            ended.set()

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        await client.send(build("GET", "/watch"))
        await client.head()
        await eventually(stalled, "the stream to stall")
        assert not ended.is_set()
        client.writer.transport.abort()
        await eventually(ended, "the handler to end after the client left")
        assert outcome and outcome[0] in ("cancelled", "reset")
        if stalled_in == "wait":
            assert outcome == ["cancelled"]
        assert server.connections == set()


# -- upgrades ---------------------------------------------------------------------------------


UPGRADE = {"Connection": "Upgrade", "Upgrade": "websocket",
           "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13"}


async def test_an_upgrade_request_is_answered_as_a_normal_request_then_closed() -> None:
    async with serving() as server:
        client = await RawClient.connect(server.port)
        # a websocket frame right behind the request, in the same write
        await client.send(build("GET", "/exec", headers=UPGRADE) + b"\x81\x05hello")
        response = await client.response()
        assert response.status == 200 and response.header("Connection") == "close"
        seen = response.json()
        assert seen["path"] == "/exec" and seen["headers"]["upgrade"] == "websocket"
        assert await client.closed_by_server()


async def test_bytes_after_an_upgrade_request_do_not_lose_its_answer() -> None:
    entered, release = asyncio.Event(), asyncio.Event()

    async def handler(request: Request) -> Response:
        if request.path == "/sync":
            return Response(text="sync")
        entered.set()
        await release.wait()
        return Response(status=400, text="upgrade not supported")

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        await client.send(build("GET", "/exec", headers=UPGRADE))
        await eventually(entered, "the upgrade request to reach its handler")
        await client.send(b"\x81\x05hello")
        await round_trip(server.port)
        release.set()
        response = await client.response()
        assert response.status == 400 and response.body == b"upgrade not supported"
        assert response.header("Connection") == "close"
        assert await client.closed_by_server()


async def test_a_stream_to_a_client_that_is_gone_raises_on_write() -> None:
    entered, release, done = asyncio.Event(), asyncio.Event(), asyncio.Event()
    errors: list[BaseException] = []

    async def handler(request: Request) -> Response:
        # not a stream yet when the client leaves: the handler is not cancelled, and its
        # first write tells it the client is gone
        if request.path == "/sync":
            return Response(text="sync")
        entered.set()
        await release.wait()
        response = StreamResponse()
        try:
            await response.prepare(request)
            await response.write(b"late")
        except ConnectionResetError as e:
            errors.append(e)
        finally:
            done.set()
        return Response(text="unused")

    async with serving(handler) as server:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT)
        sock.sendall(build("GET", "/w"))
        await eventually(entered, "the request to reach its handler")
        sock.close()
        await round_trip(server.port)
        release.set()
        await eventually(done, "the handler to finish")
    assert len(errors) == 1
