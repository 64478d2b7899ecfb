"""Queue guarantees (cf. client-go util/workqueue/queue_test.go)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from kubegc.api.sparse import MIN_ROOM
from kubegc.client.workqueue import Queue

from .conftest import Eventually, Spin


async def drain(q: Queue[str]) -> list[str]:
    """Take everything queued right now, marking each item done."""
    got = []
    while len(q):
        item, shutdown = await q.get()
        assert not shutdown
        got.append(item)
        q.done(item)
    return got


@pytest.mark.parametrize(
    ("adds", "want"),
    [
        pytest.param(["a", "b", "c"], ["a", "b", "c"], id="fair-fifo"),
        pytest.param(["a", "b", "a", "c", "b"], ["a", "b", "c"], id="stingy-keeps-first-place"),
        pytest.param(["x"] * 10, ["x"], id="stingy-many-adds-one-processing"),
        pytest.param([], [], id="empty"),
    ],
)
async def test_adds_are_processed_once_in_first_add_order(adds: list[str], want: list[str]) -> None:
    q: Queue[str] = Queue(name="t")
    for item in adds:
        q.add(item)
    assert len(q) == len(want)
    assert await drain(q) == want


async def test_item_added_while_processing_is_processed_again_after_done() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    item, _ = await q.get()
    q.add("a")  # re-entrant: new state arrived while a worker holds "a"
    assert len(q) == 0, "must not be handed to a second worker while being processed"
    assert q.processing_count() == 1
    q.done(item)
    assert len(q) == 1
    assert await drain(q) == ["a"]
    assert q.processing_count() == 0


async def test_item_is_never_processed_by_two_workers_at_once(spin: Spin) -> None:
    q: Queue[int] = Queue()
    in_flight: set[int] = set()
    overlaps: list[int] = []
    processed: list[int] = []

    async def worker() -> None:
        while True:
            item, shutdown = await q.get()
            if shutdown:
                return
            if item in in_flight:
                overlaps.append(item)
            in_flight.add(item)
            await asyncio.sleep(0)
            q.add(item % 3)  # keep re-adding items that may be in flight elsewhere
            await asyncio.sleep(0)
            in_flight.discard(item)
            processed.append(item)
            q.done(item)

    workers = [asyncio.create_task(worker()) for _ in range(4)]
    for i in range(30):
        q.add(i)
    await spin(500)
    q.shut_down()
    await asyncio.gather(*workers)
    assert overlaps == []
    assert set(range(30)) <= set(processed)


async def test_get_blocks_until_an_item_is_added(spin: Spin) -> None:
    q: Queue[str] = Queue()
    getter = asyncio.create_task(q.get())
    await spin()
    assert not getter.done()
    q.add("a")
    assert await getter == ("a", False)


async def test_waiting_getters_are_woken_in_order() -> None:
    q: Queue[str] = Queue()
    first = asyncio.create_task(q.get())
    second = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    q.add("a")
    q.add("b")
    assert await first == ("a", False)
    assert await second == ("b", False)


async def test_cancelled_getter_passes_its_wakeup_on(spin: Spin) -> None:
    q: Queue[str] = Queue()
    doomed = asyncio.create_task(q.get())
    survivor = asyncio.create_task(q.get())
    await spin()
    q.add("a")  # wakes `doomed` first...
    doomed.cancel()  # ...which is cancelled before it runs
    assert await survivor == ("a", False)


async def test_shut_down_wakes_getters_and_ignores_new_adds() -> None:
    q: Queue[str] = Queue()
    getter = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    q.shut_down()
    assert await getter == (None, True)
    assert q.shutting_down()
    q.add("late")
    assert len(q) == 0
    assert await q.get() == (None, True)


async def test_shut_down_still_hands_out_queued_items() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.add("b")
    q.shut_down()
    assert await q.get() == ("a", False)
    assert await q.get() == ("b", False)
    assert await q.get() == (None, True)


async def test_shut_down_with_drain_waits_for_items_in_flight(spin: Spin) -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.add("b")
    a, _ = await q.get()
    b, _ = await q.get()
    drained = asyncio.create_task(q.shut_down_with_drain())
    await spin()
    assert not drained.done()
    q.done(a)
    await spin()
    assert not drained.done(), "one item is still being processed"
    q.done(b)
    await asyncio.wait_for(drained, 5)
    assert q.processing_count() == 0


async def test_shut_down_with_drain_returns_at_once_when_nothing_in_flight() -> None:
    q: Queue[str] = Queue()
    await asyncio.wait_for(q.shut_down_with_drain(), 5)
    assert q.shutting_down()


async def test_shut_down_releases_a_pending_drain(eventually: Eventually) -> None:
    q: Queue[str] = Queue()
    q.add("a")
    await q.get()
    drained = asyncio.create_task(q.shut_down_with_drain())
    await asyncio.sleep(0)
    q.shut_down()  # as upstream: ShutDown cancels the drain wait
    await eventually(drained.done)


async def test_done_of_readded_item_after_drain_shutdown_requeues_nothing() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    item, _ = await q.get()
    q.shut_down()
    q.add("a")  # ignored: shutting down
    q.done(item)
    assert len(q) == 0
    assert await q.get() == (None, True)


async def test_the_queue_gives_its_room_back_once_a_burst_is_drained() -> None:
    """Issue 27: the set of queued items shrinks once a burst of 20,000 (a namespace's
    deletion queued for the GC) has been handed out."""
    q: Queue[str] = Queue()
    for i in range(20_000):
        q.add(f"uid-{i}")
    peak = sys.getsizeof(q._dirty)
    for _ in range(20_000):
        item, _ = await q.get()
        q.done(item)
    assert peak > 4 * MIN_ROOM
    assert len(q) == 0 and sys.getsizeof(q._dirty) <= MIN_ROOM
