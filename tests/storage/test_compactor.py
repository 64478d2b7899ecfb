"""run_compactor / compact_once: periodic compaction that keeps a window of revisions."""

from __future__ import annotations

import asyncio
import platform
import sys

import pytest

from kubegc.api.clock import ManualClock
from kubegc.storage import MemoryKV, compact_once, run_compactor
from kubegc.storage.compactor import trim_heap


async def write(kv: MemoryKV, n: int) -> None:
    for _ in range(n):
        await kv.create(f"/c/{kv.current_revision + 1}", b"")


@pytest.mark.parametrize(("writes", "keep", "expected"), [
    pytest.param(10, 3, 7, id="compacts-to-current-minus-keep"),
    pytest.param(3, 3, None, id="nothing-beyond-the-window"),
    pytest.param(3, 5, None, id="window-larger-than-history"),
])
async def test_compact_once(writes: int, keep: int, expected: int | None) -> None:
    kv = MemoryKV()
    await write(kv, writes)
    assert await compact_once(kv, keep=keep) == expected
    assert kv.compact_revision == (expected or 0)


async def test_run_compactor_compacts_every_interval() -> None:
    kv, clock = MemoryKV(), ManualClock()
    task = asyncio.create_task(run_compactor(kv, interval=300, keep=2, clock=clock))

    async def tick(seconds: float) -> None:
        async with asyncio.timeout(5):
            while clock.next_deadline is None:  # the compactor is asleep again
                await asyncio.sleep(0)
        clock.advance(seconds)
        async with asyncio.timeout(5):
            while clock.next_deadline is None and not task.done():
                await asyncio.sleep(0)

    await write(kv, 10)
    await tick(299)
    assert kv.compact_revision == 0  # not yet
    await tick(1)
    assert kv.compact_revision == 8
    await write(kv, 5)
    await tick(300)
    assert kv.compact_revision == 13
    await write(kv, 5)
    await kv.close()
    await tick(300)
    async with asyncio.timeout(5):
        await task  # returns once a compaction finds the store closed


def test_run_compactor_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        asyncio.run(run_compactor(MemoryKV(), interval=0, keep=1, clock=ManualClock()))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_trim_heap_hands_free_memory_back_on_glibc() -> None:
    assert trim_heap() is (platform.libc_ver()[0] == "glibc")
