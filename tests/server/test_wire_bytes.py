"""Response bodies byte for byte as kube-apiserver writes them: Go's ``json.NewEncoder``
writes struct fields in declaration order, escapes ``<``, ``>`` and ``&``, and ends every
body with a newline (objects, lists, Status, discovery, watch events); ``/version``
(``WriteRawJSON``) and the OpenAPI documents (``json.Marshal``) have no newline."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import orjson
import pytest

from kubegc.api.goformat import html_escape
from kubegc.testing import Cluster

CM = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
async def http() -> AsyncIterator[tuple[aiohttp.ClientSession, str]]:
    async with Cluster(controllers=[]) as cluster, aiohttp.ClientSession() as session:
        yield session, cluster.url


async def _get(http: tuple[aiohttp.ClientSession, str], path: str) -> tuple[int, bytes]:
    session, url = http
    async with session.get(url + path) as resp:
        return resp.status, await resp.read()


async def test_not_found_status_is_kube_apiservers_bytes(
        http: tuple[aiohttp.ClientSession, str]) -> None:
    status, body = await _get(http, CM + "/nope")
    assert status == 404
    assert body == (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
                    b'"message":"configmaps \\"nope\\" not found","reason":"NotFound",'
                    b'"details":{"name":"nope","kind":"configmaps"},"code":404}\n')


async def test_html_characters_in_a_message_are_escaped_as_go_escapes_them(
        http: tuple[aiohttp.ClientSession, str]) -> None:
    session, url = http
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a<b&c"}}
    async with session.post(url + CM, data=orjson.dumps(cm),
                            headers={"Content-Type": "application/json"}) as resp:
        assert resp.status == 422
        body = await resp.read()
    assert b'\\"a\\u003cb\\u0026c\\"' in body and b"<" not in body and b"&" not in body
    assert body.endswith(b',"code":422}\n')
    status = orjson.loads(body)  # keys in the order Go's structs declare them
    assert list(status) == ["kind", "apiVersion", "metadata", "status", "message", "reason",
                            "details", "code"]
    assert list(status["details"]) == ["name", "kind", "causes"]
    assert list(status["details"]["causes"][0]) == ["reason", "message", "field"]


async def test_objects_lists_and_discovery_end_with_a_newline(
        http: tuple[aiohttp.ClientSession, str]) -> None:
    session, url = http
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"},
          "data": {"html": "<b>&</b>"}}
    async with session.post(url + CM, data=orjson.dumps(cm),
                            headers={"Content-Type": "application/json"}) as resp:
        created = await resp.read()
    assert resp.status == 201 and created.endswith(b"}\n") and created.count(b"\n") == 1
    for path in (CM + "/c1", CM, "/api", "/api/v1", "/apis", "/apis/apps/v1"):
        status, body = await _get(http, path)
        assert status == 200 and body.endswith(b"}\n") and body.count(b"\n") == 1, path
    status, body = await _get(http, CM + "/c1")
    assert b'"\\u003cb\\u003e\\u0026\\u003c/b\\u003e"' in body
    assert orjson.loads(body)["data"]["html"] == "<b>&</b>"


async def test_watch_events_are_one_line_each(http: tuple[aiohttp.ClientSession, str]) -> None:
    session, url = http
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "w1", "annotations": {"a": "x&y"}}}
    async with session.post(url + CM, data=orjson.dumps(cm),
                            headers={"Content-Type": "application/json"}) as resp:
        assert resp.status == 201
    async with session.get(url + CM + "?watch=true&timeoutSeconds=1") as resp:
        body = await resp.read()
    assert body.endswith(b"}\n") and body.count(b"\n") == 1
    assert b'"x\\u0026y"' in body and b"&" not in body


async def test_version_is_indented_without_a_newline(
        http: tuple[aiohttp.ClientSession, str]) -> None:
    status, body = await _get(http, "/version")
    assert status == 200
    assert body.startswith(b'{\n  "major": "1",\n  "minor": "33",\n  "emulationMajor": "1",\n')
    assert body.endswith(b'"\n}')


async def test_openapi_documents_have_no_newline(
        http: tuple[aiohttp.ClientSession, str]) -> None:
    for path in ("/openapi/v3", "/openapi/v3/api/v1"):
        status, body = await _get(http, path)
        assert status == 200 and body.endswith(b"}") and b"\n" not in body[-2:]


def test_html_escape_leaves_other_bytes_alone() -> None:
    plain = b'{"a":"b"}'
    assert html_escape(plain) is plain
    assert html_escape('{"a":"\u2028é<"}'.encode()) == '{"a":"\\u2028é\\u003c"}'.encode()
