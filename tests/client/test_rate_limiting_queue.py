"""RateLimitingQueue: retries spaced by the limiter on the injected clock."""

from __future__ import annotations

from kubegc.api.clock import ManualClock
from kubegc.client.workqueue import ItemExponentialFailureRateLimiter, RateLimitingQueue

from .conftest import Eventually, Spin


def make_queue(clock: ManualClock) -> RateLimitingQueue[str]:
    return RateLimitingQueue(
        name="t", clock=clock, rate_limiter=ItemExponentialFailureRateLimiter(1.0, 8.0))


async def test_add_rate_limited_waits_for_the_limiter_delay(eventually: Eventually,
                                                            spin: Spin) -> None:
    clock = ManualClock()
    q = make_queue(clock)
    q.add_rate_limited("one")  # 1 s
    assert q.num_requeues("one") == 1
    await spin()
    assert len(q) == 0
    assert q.waiting_count() == 1
    clock.advance(1.0)
    await eventually(lambda: len(q) == 1)
    item, _ = await q.get()
    q.done(item)
    q.add_rate_limited("one")  # 2 s now
    clock.advance(1.0)
    await spin()
    assert len(q) == 0
    clock.advance(1.0)
    await eventually(lambda: len(q) == 1)


async def test_forget_resets_backoff_but_keeps_the_item_queued() -> None:
    clock = ManualClock()
    q = make_queue(clock)
    for _ in range(3):
        q.rate_limiter.when("one")
    q.add("one")
    q.forget("one")
    assert q.num_requeues("one") == 0
    assert len(q) == 1
    assert q.rate_limiter.when("one") == 1.0


async def test_is_idle_needs_nothing_queued_processing_or_waiting(eventually: Eventually) -> None:
    clock = ManualClock()
    q = make_queue(clock)
    assert q.is_idle()
    q.add_rate_limited("one")
    assert not q.is_idle(), "waiting"
    clock.advance(1.0)
    await eventually(lambda: len(q) == 1)
    assert not q.is_idle(), "queued"
    item, _ = await q.get()
    assert not q.is_idle(), "processing"
    q.done(item)
    assert q.is_idle()


async def test_default_limiter_is_the_controller_one(eventually: Eventually) -> None:
    clock = ManualClock()
    q: RateLimitingQueue[str] = RateLimitingQueue(name="t", clock=clock)
    q.add_rate_limited("one")
    q.add_rate_limited("one")  # 10 ms: the earlier 5 ms timer stays
    clock.advance(0.005)
    await eventually(lambda: len(q) == 1)
    assert q.num_requeues("one") == 2
