"""A LIST without ``limit`` is written as it is read and encoded (chunked, a storage page at
a time: upstream's streaming list encoder, KEP-5116), byte for byte the answer the whole
list would have been; lists that cannot stream (a limit, HTTP/1.0, HEAD) are answered
whole, and a bad request still gets its Status before any byte."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp
import orjson
import pytest

from kubegc.api.resources import GroupVersionResource
from kubegc.registry.generic.listing import STREAM_PAGE
from kubegc.testing import Cluster

CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")
OBJECTS = 2 * STREAM_PAGE + 345  # three storage pages
CM = "/api/v1/namespaces/big/configmaps"


@dataclass
class Http:
    session: aiohttp.ClientSession  # HTTP/1.1
    old: aiohttp.ClientSession  # HTTP/1.0: no chunked answers
    url: str


@pytest.fixture
async def http() -> AsyncIterator[Http]:
    async with Cluster(controllers=[]) as cluster, aiohttp.ClientSession() as session, \
            aiohttp.ClientSession(version=aiohttp.HttpVersion10) as old:
        client = cluster.client
        await client.create(NAMESPACES, {"metadata": {"name": "big"}})
        await client.create(NAMESPACES, {"metadata": {"name": "empty"}})

        async def create(i: int) -> None:
            await client.create(CONFIGMAPS, {
                "metadata": {"name": f"cm-{i:05d}"}, "data": {"html": f"<{i}&>"}},
                namespace="big")

        await asyncio.gather(*(create(i) for i in range(OBJECTS)))
        yield Http(session, old, cluster.url)


async def _get(http: Http, path: str, *, old: bool = False) -> tuple[int, bool, bytes]:
    """(status, chunked, body)."""
    async with (http.old if old else http.session).get(http.url + path) as resp:
        chunked = resp.headers.get("Transfer-Encoding", "") == "chunked"
        return resp.status, chunked, await resp.read()


async def test_a_list_without_limit_streams_the_bytes_of_the_whole_answer(
        http: Http) -> None:
    status, chunked, streamed = await _get(http, CM)
    assert (status, chunked) == (200, True)
    status, chunked, whole = await _get(http, CM, old=True)
    assert (status, chunked) == (200, False)
    assert streamed == whole
    assert streamed.endswith(b"]}\n") and streamed.count(b"\n") == 1
    assert b"<" not in streamed and b"\\u003c0\\u0026\\u003e" in streamed
    listed = orjson.loads(streamed)
    assert [i["metadata"]["name"] for i in listed["items"]] == [
        f"cm-{i:05d}" for i in range(OBJECTS)]
    assert list(listed) == ["kind", "apiVersion", "metadata", "items"]
    assert listed["metadata"] == {"resourceVersion": listed["metadata"]["resourceVersion"]}


async def test_the_pages_of_a_streamed_list_are_read_at_one_revision(
        http: Http) -> None:
    rv = orjson.loads((await _get(http, CM + "?limit=1"))[2])["metadata"]["resourceVersion"]
    await http.session.delete(http.url + CM + "/cm-00000")
    status, chunked, body = await _get(
        http, f"{CM}?resourceVersion={rv}&resourceVersionMatch=Exact")
    assert (status, chunked) == (200, True)
    listed = orjson.loads(body)
    assert listed["metadata"]["resourceVersion"] == rv
    assert len(listed["items"]) == OBJECTS  # as of rv: the deleted one is still there
    assert {int(i["metadata"]["resourceVersion"]) for i in listed["items"]} <= set(
        range(int(rv) + 1))


@pytest.mark.parametrize("path", [
    pytest.param("/api/v1/namespaces/empty/configmaps", id="empty"),
    pytest.param(CM + "?limit=0", id="limit-0"),
])
async def test_streamed_and_whole_answers_agree(http: Http,
                                                path: str) -> None:
    streamed = await _get(http, path)
    whole = await _get(http, path, old=True)
    assert streamed[:2] == (200, True) and whole[:2] == (200, False)
    assert streamed[2] == whole[2]


async def test_lists_with_a_limit_or_selectors_are_answered_whole(
        http: Http) -> None:
    for path in (CM + "?limit=500", CM + "?labelSelector=a%3Db"):
        status, chunked, _ = await _get(http, path)
        assert (status, chunked) == (200, False), path


async def test_a_bad_resource_version_is_a_status_before_any_byte(
        http: Http) -> None:
    status, chunked, body = await _get(
        http, CM + "?resourceVersion=99999999&resourceVersionMatch=Exact")
    assert (status, chunked) == (504, False)
    assert orjson.loads(body)["kind"] == "Status"


async def test_a_watch_list_sends_every_initial_event_then_the_bookmark_then_changes(
        http: Http) -> None:
    """``sendInitialEvents`` (WatchList): the initial state is read a page at a time at one
    revision; the watch goes on from that revision."""
    query = ("?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
             "&allowWatchBookmarks=true&timeoutSeconds=30")
    added: list[str] = []
    async with http.session.get(http.url + CM + query) as resp:
        assert resp.status == 200
        bookmark = None
        while bookmark is None:
            event = orjson.loads(await resp.content.readline())
            if event["type"] == "ADDED":
                added.append(event["object"]["metadata"]["name"])
            else:
                assert event["type"] == "BOOKMARK", event
                bookmark = event["object"]["metadata"]
        assert bookmark["annotations"] == {"k8s.io/initial-events-end": "true"}
        assert added == [f"cm-{i:05d}" for i in range(OBJECTS)]
        async with http.session.post(
                http.url + CM, data=orjson.dumps({"metadata": {"name": "later"}}),
                headers={"Content-Type": "application/json"}) as created:
            assert created.status == 201
        while True:
            event = orjson.loads(await resp.content.readline())
            if event["type"] != "BOOKMARK":
                break
        assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "later")
        assert int(event["object"]["metadata"]["resourceVersion"]) > int(
            bookmark["resourceVersion"])


async def test_a_list_overtaken_by_compaction_is_cut_short_with_one_line_logged(
        http: Http, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from kubegc.api.errors import resource_expired
    from kubegc.registry.generic import listing

    select = listing._select
    calls = 0

    async def compacted_after_the_first_page(*args: object, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        if calls > 1:
            raise resource_expired("The provided continue parameter is too old to display "
                                   "a consistent list result.")
        return await select(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(listing, "_select", compacted_after_the_first_page)
    with pytest.raises(aiohttp.ClientPayloadError):  # a broken answer: the client relists
        await _get(http, CM)
    cut = [r for r in caplog.records if "cut short" in r.getMessage()]
    assert len(cut) == 1 and cut[0].exc_info is None
    assert not [r for r in caplog.records if "unhandled error" in r.getMessage()]
    monkeypatch.undo()
    status, _, body = await _get(http, "/api/v1/namespaces/empty/configmaps")
    assert status == 200 and orjson.loads(body)["items"] == []  # the server goes on
