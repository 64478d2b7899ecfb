"""WatchHub / LogWatch details not visible through the KV contract (run on MemoryKV and
SqliteKV, the two backends that use the hub)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kubegc.storage import CompactedError, Event, MemoryKV, SqliteKV
from kubegc.storage.watch_hub import CATCH_UP_REVISIONS, LogWatch

HubKV = MemoryKV | SqliteKV


@pytest.fixture(params=["memory", "sqlite"])
async def hub_kv(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[HubKV]:
    store: HubKV = MemoryKV() if request.param == "memory" else SqliteKV(tmp_path / "kv.db")
    yield store
    await store.close()


async def fill(kv: HubKV, n: int, prefix: str = "/f/") -> list[int]:
    return list(await asyncio.gather(*(kv.create(f"{prefix}{i:05d}", b"") for i in range(n))))


async def next_batch(watch: LogWatch) -> list[Event]:
    async with asyncio.timeout(10):
        return await anext(watch)


async def test_catch_up_is_sliced(hub_kv: HubKV) -> None:
    revisions = await fill(hub_kv, CATCH_UP_REVISIONS + 10)
    watch = hub_kv.watch("/f/", start_revision=revisions[0])
    first, second = await next_batch(watch), await next_batch(watch)
    assert [len(first), len(second)] == [CATCH_UP_REVISIONS, 10]


async def test_slice_without_matches_is_skipped(hub_kv: HubKV) -> None:
    await fill(hub_kv, CATCH_UP_REVISIONS * 2, prefix="/noise/")
    r = await hub_kv.create("/f/late", b"")
    watch = hub_kv.watch("/f/", start_revision=1)
    assert [e.revision for e in await next_batch(watch)] == [r]


async def test_compaction_overtaking_catch_up_fails_the_watch(hub_kv: HubKV) -> None:
    revisions = await fill(hub_kv, CATCH_UP_REVISIONS * 3)
    watch = hub_kv.watch("/f/", start_revision=revisions[0])
    await next_batch(watch)  # first slice read; the watch is still behind
    await hub_kv.compact(revisions[-1])
    with pytest.raises(CompactedError) as info:
        await next_batch(watch)
    assert info.value.revision == revisions[0] + CATCH_UP_REVISIONS
    with pytest.raises(StopAsyncIteration):
        await next_batch(watch)


async def test_watch_from_a_future_revision_starts_there(hub_kv: HubKV) -> None:
    start = hub_kv.current_revision + 3
    watch = hub_kv.watch("/f/", start_revision=start)
    revisions = await fill(hub_kv, 4)
    assert [e.revision for e in await next_batch(watch)] == [start, start + 1]
    assert revisions[-1] == start + 1


async def test_pending_events_are_coalesced_into_one_batch(hub_kv: HubKV) -> None:
    watch = hub_kv.watch("/f/", start_revision=0)
    assert hub_kv.current_revision == 0
    revisions = await fill(hub_kv, 1, prefix="/f/first-")
    assert [e.revision for e in await next_batch(watch)] == revisions  # live now
    revisions = await fill(hub_kv, 50)
    assert [e.revision for e in await next_batch(watch)] == revisions


async def test_dropped_or_closed_watches_are_unregistered(hub_kv: HubKV) -> None:
    kept = hub_kv.watch("/f/", start_revision=0)
    dropped = hub_kv.watch("/f/", start_revision=0)
    for w in (kept, dropped):
        await fill(hub_kv, 1, prefix=f"/f/{id(w)}-")
        await next_batch(w)  # synced: registered in the hub
    assert hub_kv._hub.has_watchers
    del dropped, w
    gc.collect()
    assert len(hub_kv._hub._synced["/f/"]) == 1
    await kept.aclose()
    assert not hub_kv._hub.has_watchers
    with pytest.raises(StopAsyncIteration):
        await next_batch(kept)
