"""Delayed adds driven by a ManualClock (cf. client-go delaying_queue_test.go)."""

from __future__ import annotations

import pytest

from kubegc.api.clock import ManualClock
from kubegc.client.workqueue import DelayingQueue

from .conftest import Eventually, Spin


async def take_all(q: DelayingQueue[str]) -> list[str]:
    got = []
    while len(q):
        item, _ = await q.get()
        got.append(item)
        q.done(item)
    return got


async def test_item_appears_only_once_its_delay_has_passed(eventually: Eventually,
                                                           spin: Spin) -> None:
    clock = ManualClock()
    q: DelayingQueue[str] = DelayingQueue(name="t", clock=clock)
    q.add_after("foo", 50.0)
    await spin()
    assert len(q) == 0
    assert q.waiting_count() == 1
    clock.advance(49.9)
    await spin()
    assert len(q) == 0
    clock.advance(0.1)
    await eventually(lambda: len(q) == 1)
    assert q.waiting_count() == 0
    assert await take_all(q) == ["foo"]


@pytest.mark.parametrize(
    ("delays", "advance", "want_order"),
    [
        pytest.param({"a": 3.0, "b": 1.0, "c": 2.0}, 3.0, ["b", "c", "a"], id="ready-time-order"),
        pytest.param({"a": 1.0, "b": 5.0}, 2.0, ["a"], id="only-the-ready-ones"),
    ],
)
async def test_items_become_ready_in_ready_time_order(
    delays: dict[str, float], advance: float, want_order: list[str], eventually: Eventually,
    spin: Spin,
) -> None:
    clock = ManualClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    for item, delay in delays.items():
        q.add_after(item, delay)
    for _ in range(int(advance * 2)):
        clock.advance(0.5)
        await spin()
    await eventually(lambda: len(q) == len(want_order))
    assert await take_all(q) == want_order


@pytest.mark.parametrize(
    ("first", "second", "ready_at"),
    [
        pytest.param(10.0, 2.0, 2.0, id="earlier-re-add-wins"),
        pytest.param(2.0, 10.0, 2.0, id="later-re-add-ignored"),
    ],
)
async def test_waiting_item_is_waiting_once_at_its_earliest_time(
    first: float, second: float, ready_at: float, eventually: Eventually, spin: Spin,
) -> None:
    clock = ManualClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("foo", first)
    q.add_after("foo", second)
    assert q.waiting_count() == 1
    clock.advance(ready_at - 0.5)
    await spin()
    assert len(q) == 0
    clock.advance(0.5)
    await eventually(lambda: len(q) == 1)
    clock.advance(100)
    await spin()
    assert await take_all(q) == ["foo"], "the replaced timer must not add a second time"
    assert q.waiting_count() == 0


@pytest.mark.parametrize("delay", [0.0, -1.0], ids=["zero", "negative"])
async def test_non_positive_delay_adds_immediately(delay: float) -> None:
    q: DelayingQueue[str] = DelayingQueue(clock=ManualClock())
    q.add_after("foo", delay)
    assert len(q) == 1
    assert q.waiting_count() == 0


async def test_shut_down_drops_waiting_items_and_ignores_new_ones(spin: Spin) -> None:
    clock = ManualClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("foo", 1.0)
    q.shut_down()
    assert q.waiting_count() == 0
    q.add_after("bar", 1.0)
    assert q.waiting_count() == 0
    clock.advance(10)
    await spin()
    assert len(q) == 0
    assert await q.get() == (None, True)


async def test_delayed_item_already_queued_is_not_duplicated(eventually: Eventually,
                                                             spin: Spin) -> None:
    clock = ManualClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add("foo")
    q.add_after("foo", 1.0)
    clock.advance(1.0)
    await eventually(lambda: q.waiting_count() == 0)
    await spin()
    assert await take_all(q) == ["foo"]
