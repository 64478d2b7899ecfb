"""The server's lifecycle: listening, stopping (streams cancelled, other requests given
their time, idle connections closed), the keep-alive sweep, TLS, and uvloop."""

from __future__ import annotations

import asyncio
import http.client
import ssl
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from kubegc.server.http import HTTPServer, Request, RequestEntityTooLarge, Response, StreamResponse
from kubegc.server.tls import serving_credentials

from .harness import TIMEOUT, RawClient, build, echo, eventually, serving


async def test_start_picks_a_free_port_and_stop_stops_listening() -> None:
    server = HTTPServer(echo, max_body=16)
    await HTTPServer(echo, max_body=16).stop()  # never started: nothing to do
    port = await server.start("127.0.0.1", 0)
    assert port == server.port and port > 0
    client = await RawClient.connect(port)
    assert (await client.request("GET", "/up")).status == 200
    await client.close()
    await server.stop()
    await server.stop()  # twice is harmless
    with pytest.raises(ConnectionRefusedError):
        await RawClient.connect(port)


async def test_stop_cancels_streams() -> None:
    streaming, ended = asyncio.Event(), asyncio.Event()
    outcome: list[str] = []

    async def handler(request: Request) -> StreamResponse:
        response = StreamResponse()
        await response.prepare(request)
        await response.write(b"event")
        streaming.set()
        try:
            await asyncio.Event().wait()  # a watch: never ends by itself
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        finally:
            ended.set()
        return response

    server = HTTPServer(handler, max_body=16)
    await server.start("127.0.0.1", 0)
    client = await RawClient.connect(server.port)
    await client.send(build("GET", "/watch"))
    await client.head()
    await eventually(streaming, "the stream to start")
    loop = asyncio.get_running_loop()
    began = loop.time()
    await asyncio.wait_for(server.stop(timeout=3.0), TIMEOUT)
    assert loop.time() - began < 1.0  # a stream is not waited for
    assert ended.is_set() and outcome == ["cancelled"]
    assert (await client.read_to_eof()).startswith(b"5\r\nevent\r\n")


async def test_stop_lets_a_request_finish_and_closes_idle_connections() -> None:
    entered, release = asyncio.Event(), asyncio.Event()

    async def handler(request: Request) -> Response:
        if request.path == "/slow":
            entered.set()
            await release.wait()
        return Response(text=request.path)

    server = HTTPServer(handler, max_body=16)
    await server.start("127.0.0.1", 0)
    idle = await RawClient.connect(server.port)
    assert (await idle.request("GET", "/first")).header("Connection") is None
    busy = await RawClient.connect(server.port)
    await busy.send(build("GET", "/slow"))
    await eventually(entered, "the slow request to reach its handler")

    stopping = asyncio.create_task(server.stop(timeout=TIMEOUT))
    assert await idle.closed_by_server()  # at once, not after the busy one
    with pytest.raises(ConnectionRefusedError):
        await RawClient.connect(server.port)
    assert not stopping.done()
    release.set()
    response = await busy.response()
    assert response.body == b"/slow" and response.header("Connection") == "close"
    assert await busy.closed_by_server()
    await asyncio.wait_for(stopping, TIMEOUT)


async def test_stop_cancels_a_request_that_outlives_the_timeout() -> None:
    entered, ended = asyncio.Event(), asyncio.Event()
    outcome: list[str] = []

    async def handler(request: Request) -> Response:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            outcome.append("cancelled")
            raise
        finally:
            ended.set()
        return Response(text="never")

    server = HTTPServer(handler, max_body=16)
    await server.start("127.0.0.1", 0)
    client = await RawClient.connect(server.port)
    await client.send(build("GET", "/stuck"))
    await eventually(entered, "the request to reach its handler")
    await asyncio.wait_for(server.stop(timeout=0.1), TIMEOUT)
    # once stop() has returned, no handler of this server is left running
    assert ended.is_set() and outcome == ["cancelled"]
    assert await client.closed_by_server()


async def test_idle_sweep_closes_idle_connections_but_not_busy_ones() -> None:
    entered, release = asyncio.Event(), asyncio.Event()

    async def handler(request: Request) -> Response:
        if request.path == "/slow":
            entered.set()
            await release.wait()
        return Response(text=request.path)

    async with serving(handler, keepalive_timeout=0.05) as server:
        silent = await RawClient.connect(server.port)  # connected, never asked anything
        idle = await RawClient.connect(server.port)
        assert (await idle.request("GET", "/once")).status == 200
        busy = await RawClient.connect(server.port)
        await busy.send(build("GET", "/slow"))
        await eventually(entered, "the slow request to reach its handler")
        assert await idle.closed_by_server()
        assert await silent.closed_by_server()
        # the sweeps that closed those saw the busy one too, and left it open
        release.set()
        assert (await busy.response()).body == b"/slow"
        # idle from now on: swept in turn
        assert await busy.closed_by_server()
        assert server.connections == set()


def tls_contexts(directory: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """The server's context (a CA-signed certificate for 127.0.0.1) and a client's that
    trusts only that CA."""
    creds = serving_credentials(directory, ["127.0.0.1"])
    client = ssl.create_default_context(cadata=creds.ca_cert_pem.decode())
    return creds.ssl_context(), client


async def test_tls(tmp_path: Path) -> None:
    async def handler(request: Request) -> Response | StreamResponse:
        if request.path == "/watch":
            response = StreamResponse()
            await response.prepare(request)
            await response.write(b"secure event")
            await response.write_eof()
            return response
        return await echo(request)

    server_ctx, client_ctx = tls_contexts(tmp_path)
    async with serving(handler, ssl_context=server_ctx) as server:
        raw = await RawClient.connect(server.port, ssl_context=client_ctx)
        assert (await raw.request("POST", "/a", body=b"one")).json()["body"] == "one"
        assert (await raw.request("GET", "/watch")).chunks == [b"secure event"]
        assert (await raw.request("GET", "/b", headers={"Connection": "close"})).status == 200
        assert await raw.closed_by_server()

        async with aiohttp.ClientSession() as session:
            for _ in range(2):
                async with session.get(f"https://127.0.0.1:{server.port}/c?x=1",
                                       ssl=client_ctx) as got:
                    assert (await got.json())["query"] == {"x": ["1"]}

        def with_http_client() -> tuple[int, bytes]:
            conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=client_ctx,
                                               timeout=TIMEOUT)
            try:
                conn.request("GET", "/watch")
                response = conn.getresponse()
                return response.status, response.read()
            finally:
                conn.close()

        assert await asyncio.to_thread(with_http_client) == (200, b"secure event")

        # a client that does not trust the CA is refused by its own TLS check
        with pytest.raises(ssl.SSLCertVerificationError):
            await RawClient.connect(server.port, ssl_context=ssl.create_default_context())


# -- under uvloop -------------------------------------------------------------------------------


async def smoke() -> None:
    """Keep-alive, bodies, pipelining, a stream (and HEAD to it), a body refused before it
    was sent, a client leaving mid-stream, and stop."""
    left = asyncio.Event()

    async def handler(request: Request) -> Response | StreamResponse:
        if request.path == "/big":
            try:
                await request.read()
            except RequestEntityTooLarge as e:
                return Response(status=413, text=str(e))
        if request.path.startswith("/watch"):
            response = StreamResponse()
            await response.prepare(request)
            await response.write(b"ev")
            if request.path == "/watch/forever":
                try:
                    await asyncio.Event().wait()
                finally:
                    left.set()
            await response.write_eof()
            return response
        return await echo(request)

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        assert (await client.request("POST", "/a%20b?q=1", body=b"xyz")).json() == {
            "method": "POST", "path": "/a b", "path_qs": "/a%20b?q=1", "query": {"q": ["1"]},
            "headers": {"host": "test", "content-length": "3"}, "body": "xyz",
            "version": "1.1", "keep_alive": True}
        await client.send(build("POST", "/c", headers={"Transfer-Encoding": "chunked"},
                                body=b"2\r\nhi\r\n0\r\n\r\n") + build("GET", "/next"))
        assert (await client.response()).json()["body"] == "hi"
        assert (await client.response()).json()["path"] == "/next"
        response = await client.request("GET", "/watch")
        assert response.raw.endswith(b"\r\n\r\n2\r\nev\r\n0\r\n\r\n")
        await client.send(build("HEAD", "/watch") + build("GET", "/after-head"))
        assert (await client.response(head_only=True)).header("Transfer-Encoding") == "chunked"
        assert (await client.response()).json()["path"] == "/after-head"
        assert (await client.request("GET", "/bad", headers={"Bad Name": "x"})).status == 400
        assert await client.closed_by_server()

        # Expect: 100-continue over the limit, the body sent anyway: 413, then EOF
        refused = await RawClient.connect(server.port)
        await refused.send(b"POST /big HTTP/1.1\r\nHost: test\r\nContent-Length: 1048576\r\n"
                           b"Expect: 100-continue\r\n\r\n")
        refused.writer.write(b"b" * 1048576)
        assert (await refused.response()).status == 413
        assert await refused.closed_by_server()

        leaving = await RawClient.connect(server.port)
        await leaving.send(build("GET", "/watch/forever"))
        await leaving.head()
        leaving.writer.transport.abort()
        await eventually(left, "the stream's handler to be cancelled")


def _uvloop_factory() -> asyncio.AbstractEventLoop:
    uvloop = pytest.importorskip("uvloop")
    loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
    return loop


@pytest.mark.parametrize("loop_factory", [asyncio.new_event_loop, _uvloop_factory],
                         ids=["asyncio", "uvloop"])
def test_smoke_on_each_event_loop(
        loop_factory: Callable[[], asyncio.AbstractEventLoop]) -> None:
    loop = loop_factory()
    try:
        run: Coroutine[Any, Any, None] = asyncio.wait_for(smoke(), 4 * TIMEOUT)
        loop.run_until_complete(run)
    finally:
        loop.close()
