"""The watch cache's ring keeps decoded objects and encoded lines only for its newest
events (``DECODED_KEPT``): older events keep the stored bytes, so a deleted object's
decoded last state is not held until 100,000 more writes (issue 27)."""

from __future__ import annotations

import asyncio

import orjson

from kubegc.registry.generic.watch_cache import DECODED_KEPT, CachedEvent, WatchCache
from kubegc.storage import MemoryKV

OLDER = 10


async def test_only_the_newest_events_keep_their_decoded_objects() -> None:
    kv = MemoryKV()
    cache = WatchCache(kv, capacity=2 * DECODED_KEPT)
    await cache.start()
    seen: list[CachedEvent] = []
    cache.listeners.append(lambda event: (event.obj, event.line("ADDED"), seen.append(event)))
    try:
        await asyncio.gather(*(kv.create(f"/registry/configmaps/ns/c{i}", orjson.dumps(
            {"kind": "ConfigMap", "metadata": {"name": f"c{i}"}}))
            for i in range(DECODED_KEPT + OLDER)))
        async with asyncio.timeout(10):
            await cache.wait_for_revision(kv.current_revision)
        assert len(seen) == DECODED_KEPT + OLDER
        assert [e.lines is not None for e in seen] == [False] * OLDER + [True] * DECODED_KEPT
        assert [e._obj is not None for e in seen] == [False] * OLDER + [True] * DECODED_KEPT
        old = seen[0]
        assert old.obj["metadata"]["name"] == "c0"  # decoded again when asked for
        assert old.line("ADDED").startswith(b'{"type":"ADDED","object":{')
    finally:
        await cache.stop()
