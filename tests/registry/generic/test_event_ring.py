"""The watch cache's packed ring (issue 27: the ring's events in large buffers, each given
back whole once its events have left): what goes in comes out, in order, for the newest
``capacity`` events, and the memory maps held stay bounded by the window."""

from __future__ import annotations

import asyncio

from kubegc.api.clock import ManualClock
from kubegc.registry import Registry, WatchRequest
from kubegc.registry.generic.event_ring import EventRing, Row
from kubegc.registry.generic.watch_cache import TooOldResourceVersion, WatchCache
from kubegc.storage.memory import MemoryKV

from ..conftest import manifest, target


def _row(revision: int, namespace: str = "default", *, size: int = 100) -> Row:
    key = f"/registry/core/configmaps/{namespace}/cm-{revision}"
    value = b'{"v":"' + b"x" * size + b'"}'
    if revision % 3 == 0:  # a DELETE: the previous value is the last state, the same bytes
        return (True, False, key, revision, value, bytes(value), revision - 1)
    if revision % 3 == 1:  # a create
        return (False, True, key, revision, value, None, revision)
    return (False, False, key, revision, value, b'{"before":' + b"%d}" % revision,
               revision - 1)


def test_the_ring_gives_back_the_newest_events_as_they_went_in() -> None:
    ring = EventRing(capacity=10, chunk=256)
    evicted = [ring.append(_row(r, "ns-é" if r % 2 else "default")) for r in range(1, 26)]
    assert evicted == [None] * 10 + list(range(1, 16))
    assert len(ring) == 10
    rows = ring.since(0, "")
    assert rows == [_row(r, "ns-é" if r % 2 else "default") for r in range(16, 26)]
    assert [r[3] for r in ring.since(20, "/registry/core/configmaps/default/")] == [22, 24]
    assert ring.since(25, "") == []
    assert ring.since(0, "/registry/core/configmaps/default/cm-2") == [_row(20), _row(22),
                                                                       _row(24)]
    assert ring.since(0, "/registry/apps/") == []


def test_chunks_are_dropped_once_their_events_left_the_ring() -> None:
    ring = EventRing(capacity=50, chunk=4096)
    for r in range(1, 5001):
        ring.append(_row(r))
    # 50 rows of ~150-250 bytes: ~3 chunks of 4 KiB are live, not the ~250 written
    assert ring.chunks <= 4
    assert [r[3] for r in ring.since(0, "")] == list(range(4951, 5001))


def test_a_row_bigger_than_a_chunk_gets_one_of_its_own() -> None:
    ring = EventRing(capacity=4, chunk=64)
    big = _row(1, size=1000)
    ring.append(big)
    ring.append(_row(2))
    assert ring.since(0, "") == [big, _row(2)]


def test_a_cleared_ring_holds_nothing_and_fills_again() -> None:
    ring = EventRing(capacity=3, chunk=256)
    for r in range(1, 6):
        ring.append(_row(r))
    ring.clear()
    assert len(ring) == 0 and ring.chunks == 0 and ring.since(0, "") == []
    assert ring.append(_row(10)) is None
    assert ring.since(0, "") == [_row(10)]


async def test_a_watch_resumes_inside_the_window_and_gets_410_before_it(
        clock: ManualClock) -> None:
    """A small ring: the oldest revision a watch can resume from moves with the writes;
    older ones get TooOldResourceVersion (410 Expired over HTTP), newer ones every event
    that followed, decoded from the packed rows."""
    kv = MemoryKV()
    registry = Registry(kv, clock=clock, watch_cache_capacity=5)
    await registry.start()
    try:
        revisions = []
        for i in range(12):
            obj = await registry.create(target(registry, "configmaps"),
                                        manifest("configmaps", f"cm-{i}"))
            revisions.append(int(obj["metadata"]["resourceVersion"]))
        cache: WatchCache = registry.cache
        assert await cache.wait_for_revision(revisions[-1])
        assert cache.origin == revisions[-6]
        try:
            cache.subscribe("/registry/core/configmaps/", revisions[-7])
        except TooOldResourceVersion as e:
            assert e.oldest == revisions[-6] + 1
        else:
            raise AssertionError("a watch from before the window was not refused")
        watcher = cache.subscribe("/registry/core/configmaps/default/", revisions[-6])
        try:
            events = list(watcher.buffer)
        finally:
            cache.unsubscribe(watcher)
        assert [e.revision for e in events] == revisions[-5:]
        assert [e.obj["metadata"]["name"] for e in events] == [f"cm-{i}" for i in range(7, 12)]
        assert all(e.created and not e.deleted for e in events)
        expired = registry.watch(target(registry, "configmaps"),
                                 WatchRequest(resource_version=str(revisions[-7])))
        batch = await asyncio.wait_for(anext(expired.batches()), 5)
        expired.close()
        assert [(c.type, c.object["code"], c.object["reason"]) for c in batch] == \
            [("ERROR", 410, "Expired")]
    finally:
        await registry.stop()
        await kv.close()


def test_a_resuming_watch_reads_its_resources_events_alone() -> None:
    """Events of several resources and keys above any resource: each prefix gets exactly
    the keys under it, whether it names one resource, a namespace of one, or more."""
    keys = ["/registry/core/configmaps/a/x", "/registry/apps/deployments/a/x",
            "/registry/core/configmaps/b/x", "/registry/health", "/registry/core/namespaces/a"]
    ring = EventRing(capacity=100, chunk=512)
    for revision, key in enumerate(keys * 3, start=1):
        ring.append((False, True, key, revision, b"{}", None, revision))
    for prefix in ("/registry/core/configmaps/", "/registry/core/configmaps/a/",
                   "/registry/apps/deployments/", "/registry/core/", "/registry/", "",
                   "/registry/batch/jobs/", "/registry/core/namespaces/a"):
        assert [row[2] for row in ring.since(3, prefix)] == \
            [k for k in (keys * 3)[3:] if k.startswith(prefix)], prefix
