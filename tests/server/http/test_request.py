"""What a handler sees of a request: method, decoded path and raw target, query, headers,
and the body (Content-Length or chunked, bounded by ``max_body``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import aiohttp
import orjson
import pytest

from kubegc.server import APIServer
from kubegc.server.app import MAX_BODY
from kubegc.server.http import Headers, Query, Request, RequestEntityTooLarge, Response

from .harness import TIMEOUT, RawClient, serving

# -- Headers, Query and Request on their own ------------------------------------------------


def test_headers_are_case_insensitive_and_read_only() -> None:
    headers = Headers({"content-type": "application/json", "x-a": "1, 2"})
    assert headers["Content-Type"] == headers["CONTENT-TYPE"] == "application/json"
    assert headers.get("X-A") == "1, 2"
    assert headers.get("missing") is None
    assert headers.get("Missing", "dflt") == "dflt"
    assert "X-a" in headers and "x-b" not in headers
    assert headers.__contains__(3) is False  # not a str: never a header
    assert list(headers) == ["content-type", "x-a"] and len(headers) == 2
    with pytest.raises(KeyError):
        headers["nope"]
    assert not hasattr(headers, "__setitem__")


def test_query_first_value_every_value_and_blank_values() -> None:
    query = Query("a=1&b=&a=2&c&d=x%20y+z&e=%26%3D")
    assert query["a"] == query.get("a") == "1"
    assert query.getall("a") == ["1", "2"]
    assert query["b"] == "" and query["c"] == ""  # blank values are kept, not dropped
    assert query["d"] == "x y z"
    assert query["e"] == "&="
    assert query.get("missing") is None
    assert query.getall("missing", []) == []
    with pytest.raises(KeyError):
        query.getall("missing")
    assert list(query) == ["a", "b", "c", "d", "e"] and len(query) == 5
    assert len(Query("")) == 0


def test_request_path_is_decoded_and_path_qs_is_raw() -> None:
    request = Request("GET", "/api/v1/namespaces/a%20b/configmaps/x%2Fy?labelSelector=a%3Db",
                      Headers({}))
    assert request.path == "/api/v1/namespaces/a b/configmaps/x/y"
    assert request.path_qs == "/api/v1/namespaces/a%20b/configmaps/x%2Fy?labelSelector=a%3Db"
    assert request.query["labelSelector"] == "a=b"
    plain = Request("GET", "/healthz", Headers({}))
    assert plain.path == "/healthz" and len(plain.query) == 0


async def test_request_read_gives_the_body_or_raises_when_it_was_too_large() -> None:
    assert await Request("POST", "/", Headers({}), body=b"abc").read() == b"abc"
    with pytest.raises(RequestEntityTooLarge) as info:
        await Request("POST", "/", Headers({}), body=b"", too_large=3145728).read()
    assert str(info.value) == "Request entity too large: limit is 3145728"
    assert info.value.limit == 3145728


# -- the same, through the server ----------------------------------------------------------


async def test_path_is_percent_decoded_while_path_qs_stays_raw() -> None:
    async with serving() as server:
        client = await RawClient.connect(server.port)
        seen = (await client.request("GET", "/a%20b/c%2Fd/%7Euser?x=%20y&x=2")).json()
        assert seen["path"] == "/a b/c/d/~user"
        assert seen["path_qs"] == "/a%20b/c%2Fd/%7Euser?x=%20y&x=2"
        assert seen["query"] == {"x": [" y", "2"]}
        await client.close()


async def test_query_values_through_the_server() -> None:
    async with serving() as server:
        client = await RawClient.connect(server.port)
        seen = (await client.request("GET", "/q?watch=1&blank=&flag&l=a&l=b&s=a+b")).json()
        assert seen["query"] == {"watch": ["1"], "blank": [""], "flag": [""],
                                 "l": ["a", "b"], "s": ["a b"]}
        await client.close()


async def test_headers_are_case_insensitive_and_repeats_are_joined() -> None:
    seen: list[Request] = []

    async def handler(request: Request) -> Response:
        seen.append(request)
        return Response(text="ok")

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        await client.send(b"GET / HTTP/1.1\r\nHost: test\r\nAccept: a/b\r\nX-Thing: one\r\n"
                          b"x-thing: two\r\nX-THING: three\r\nUser-Agent: raw\r\n\r\n")
        assert (await client.response()).status == 200
        await client.close()
    headers = seen[0].headers
    assert headers["x-thing"] == headers["X-Thing"] == "one, two, three"
    assert headers.get("ACCEPT") == "a/b" and "user-agent" in headers
    assert sorted(headers) == ["accept", "host", "user-agent", "x-thing"]


async def test_content_length_body() -> None:
    async with serving() as server:
        client = await RawClient.connect(server.port)
        seen = (await client.request("POST", "/", body=b'{"a": 1}')).json()
        assert seen["body"] == '{"a": 1}'
        # split across writes: the head in one, the body in two
        await client.send(b"PUT /x HTTP/1.1\r\nHost: test\r\nContent-Length: 10\r\n\r\n01234")
        await client.send(b"56789")
        seen = (await client.response()).json()
        assert (seen["method"], seen["body"]) == ("PUT", "0123456789")
        await client.close()


async def test_chunked_request_body() -> None:
    async with serving() as server:
        client = await RawClient.connect(server.port)
        await client.send(b"POST /c HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n"
                          b"5\r\nhello\r\n1;ext=1\r\n \r\n")
        await client.send(b"5\r\nworld\r\n0\r\n\r\n")
        seen = (await client.response()).json()
        assert seen["body"] == "hello world"
        # the connection is still in step: the next request is parsed from the right byte
        assert (await client.request("GET", "/next")).json()["path"] == "/next"
        await client.close()


async def test_body_of_exactly_max_body_is_accepted() -> None:
    async with serving(max_body=16) as server:
        client = await RawClient.connect(server.port)
        assert (await client.request("POST", "/", body=b"x" * 16)).json()["body"] == "x" * 16
        chunked = b"a\r\n" + b"y" * 10 + b"\r\n6\r\n" + b"y" * 6 + b"\r\n0\r\n\r\n"
        response = await client.request("POST", "/", body=chunked,
                                        headers={"Transfer-Encoding": "chunked"})
        assert response.json()["body"] == "y" * 16
        await client.close()


def too_large_handler(outcomes: list[str]) -> Callable[[Request], Awaitable[Response]]:
    async def handler(request: Request) -> Response:
        try:
            body = await request.read()
        except RequestEntityTooLarge as e:
            outcomes.append(str(e))
            return Response(status=413, text=str(e))
        outcomes.append(f"read {len(body)}")
        return Response(text="ok")
    return handler


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
async def test_body_over_max_body_makes_read_raise(chunked: bool) -> None:
    outcomes: list[str] = []
    async with serving(too_large_handler(outcomes), max_body=100) as server:
        client = await RawClient.connect(server.port)
        body = b"z" * 101
        if chunked:
            framed = b"".join(b"%x\r\n%b\r\n" % (len(p), p) for p in (body[:60], body[60:]))
            response = await client.request("POST", "/", body=framed + b"0\r\n\r\n",
                                            headers={"Transfer-Encoding": "chunked"})
        else:
            response = await client.request("POST", "/", body=body)
        assert response.status == 413
        assert response.body == b"Request entity too large: limit is 100"
        # the oversized body was consumed: the same connection serves the next request
        response = await client.request("POST", "/", body=b"small")
        assert response.status == 200
        await client.close()
    assert outcomes == ["Request entity too large: limit is 100", "read 5"]


async def test_api_server_answers_a_body_over_3mib_with_a_413_status(
        api_server: APIServer) -> None:
    assert MAX_BODY == 3145728
    url = f"{api_server.url}/api/v1/namespaces/default/configmaps"
    big = b'{"metadata":{"name":"big"},"data":{"k":"' + b"x" * MAX_BODY + b'"}}'
    async with aiohttp.ClientSession() as session:
        async with session.post(url, data=big,
                                headers={"Content-Type": "application/json"}) as response:
            assert response.status == 413
            status = orjson.loads(await response.read())
        assert status == {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Request entity too large: limit is 3145728",
            "reason": "RequestEntityTooLarge", "code": 413,
        }
        # nothing was created, and the server goes on serving
        async with session.get(f"{url}/big") as response:
            assert response.status == 404


TOO_LARGE_STATUS = {
    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
    "message": "Request entity too large: limit is 3145728",
    "reason": "RequestEntityTooLarge", "code": 413,
}


async def test_api_server_refuses_an_expect_100_body_over_3mib_before_it_is_sent(
        api_server: APIServer) -> None:
    path = "/api/v1/namespaces/default/configmaps"
    client = await RawClient.connect(api_server.port)
    # the headers only: the client waits for "100 Continue" before it sends the body
    await client.send(f"POST {path} HTTP/1.1\r\nHost: test\r\n"
                      f"Content-Type: application/json\r\nContent-Length: {MAX_BODY + 1}\r\n"
                      f"Expect: 100-continue\r\n\r\n".encode())
    response = await client.response()  # the final answer first, no interim 100
    assert response.raw.startswith(b"HTTP/1.1 413 Request Entity Too Large\r\n")
    assert response.header("Connection") == "close"
    assert response.header("Content-Type") == "application/json"
    assert response.json() == TOO_LARGE_STATUS
    assert await client.closed_by_server()  # the body was never read: no keep-alive
    # the server goes on serving, and nothing was created
    other = await RawClient.connect(api_server.port)
    assert (await other.request("GET", path)).json()["items"] == []
    await other.close()


async def test_aiohttp_expect_100_with_a_body_over_3mib_gets_the_413_without_uploading(
        api_server: APIServer) -> None:
    url = f"{api_server.url}/api/v1/namespaces/default/configmaps"
    big = b'{"metadata":{"name":"big"},"data":{"k":"' + b"x" * MAX_BODY + b'"}}'
    async with aiohttp.ClientSession() as session:
        async with session.post(url, data=big, expect100=True,
                                timeout=aiohttp.ClientTimeout(total=TIMEOUT),
                                headers={"Content-Type": "application/json"}) as response:
            assert response.status == 413
            assert response.headers["Connection"] == "close"
            assert orjson.loads(await response.read()) == TOO_LARGE_STATUS
        async with session.get(f"{url}/big") as response:
            assert response.status == 404


def test_getall_keeps_each_line_of_a_repeated_header() -> None:
    headers = Headers({"impersonate-group": "a, b,c", "x": "1"},
                      {"impersonate-group": ["a", "b,c"]})
    assert headers.getall("Impersonate-Group") == ["a", "b,c"]  # a comma inside one value
    assert headers["impersonate-group"] == "a, b,c"
    assert headers.getall("X") == ["1"] and headers.getall("missing") == []


async def test_repeated_headers_reach_the_handler_line_by_line() -> None:
    seen: list[Request] = []

    async def handler(request: Request) -> Response:
        seen.append(request)
        return Response(text="ok")

    async with serving(handler) as server:
        client = await RawClient.connect(server.port)
        for _ in range(2):  # the second request's headers are its own
            await client.send(b"GET / HTTP/1.1\r\nHost: test\r\nImpersonate-Group: a,b\r\n"
                              b"impersonate-group: c\r\n\r\n")
            assert (await client.response()).status == 200
        await client.close()
    assert [r.headers.getall("Impersonate-Group") for r in seen] == [["a,b", "c"]] * 2
    assert seen[0].peer_certificate is None  # plain HTTP
