"""Rate limiter math, equal to client-go's (default_rate_limiters_test.go)."""

from __future__ import annotations

import pytest

from kubegc.api.clock import ManualClock
from kubegc.client.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    default_controller_rate_limiter,
)

MS = 0.001


def test_exponential_doubles_per_failure_per_item() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(MS, 1.0)
    assert [limiter.when("one") for _ in range(5)] == pytest.approx(
        [1 * MS, 2 * MS, 4 * MS, 8 * MS, 16 * MS])
    assert limiter.num_requeues("one") == 5
    assert [limiter.when("two") for _ in range(2)] == pytest.approx([1 * MS, 2 * MS])
    assert limiter.num_requeues("two") == 2
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == pytest.approx(1 * MS)
    assert limiter.num_requeues("two") == 2, "forget is per item"


@pytest.mark.parametrize(
    ("base", "cap", "failures_before", "want"),
    [
        pytest.param(1e-9, 1000.0, 5, 32e-9, id="ns-base-6th-failure"),
        pytest.param(1e-9, 1000.0, 1000, 1000.0, id="overflow-gives-cap"),
        pytest.param(60.0, 1000 * 3600.0, 3, 8 * 60.0, id="minutes-base"),
        pytest.param(60.0, 1000 * 3600.0, 1000, 1000 * 3600.0, id="minutes-base-capped"),
        pytest.param(0.005, 1000.0, 17, 655.36, id="controller-default-18th-failure"),
        pytest.param(0.005, 1000.0, 18, 1000.0, id="controller-default-capped"),
    ],
)
def test_exponential_cap_and_overflow(
    base: float, cap: float, failures_before: int, want: float,
) -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(base, cap)
    for _ in range(failures_before):
        limiter.when("item")
    assert limiter.when("item") == pytest.approx(want)


def test_bucket_gives_burst_free_then_spaces_by_qps() -> None:
    clock = ManualClock()
    limiter: BucketRateLimiter[int] = BucketRateLimiter(10, 100, clock)
    assert [limiter.when(i) for i in range(100)] == [0.0] * 100
    assert limiter.when(100) == pytest.approx(0.1)
    assert limiter.when(101) == pytest.approx(0.2), "borrowed tokens queue up"
    clock.advance(1.0)  # +10 tokens: back to 8
    assert [limiter.when(i) for i in range(8)] == [0.0] * 8
    assert limiter.when(9) == pytest.approx(0.1)
    assert limiter.num_requeues(9) == 0
    limiter.forget(9)  # no per-item memory: nothing changes
    assert limiter.when(10) == pytest.approx(0.2)


def test_bucket_refill_is_capped_at_burst() -> None:
    clock = ManualClock()
    limiter: BucketRateLimiter[int] = BucketRateLimiter(1, 3, clock)
    clock.advance(3600)
    assert [limiter.when(i) for i in range(4)] == pytest.approx([0.0, 0.0, 0.0, 1.0])


@pytest.mark.parametrize(("qps", "burst"), [(0, 1), (1, 0), (-1, 5)])
def test_bucket_rejects_non_positive_settings(qps: float, burst: int) -> None:
    with pytest.raises(ValueError):
        BucketRateLimiter(qps, burst, ManualClock())


def test_max_of_takes_the_worst_answer_and_forgets_everywhere() -> None:
    slow: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(1.0, 60.0)
    fast: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(MS, 60.0)
    limiter = MaxOfRateLimiter(fast, slow)
    assert [limiter.when("a") for _ in range(3)] == pytest.approx([1.0, 2.0, 4.0])
    assert limiter.num_requeues("a") == 3
    limiter.forget("a")
    assert slow.num_requeues("a") == 0
    assert fast.num_requeues("a") == 0


def test_max_of_needs_a_limiter() -> None:
    with pytest.raises(ValueError):
        MaxOfRateLimiter()


def test_default_controller_rate_limiter() -> None:
    clock = ManualClock()
    limiter = default_controller_rate_limiter(clock)
    # per item: 5 ms doubling
    assert [limiter.when("x") for _ in range(4)] == pytest.approx([0.005, 0.01, 0.02, 0.04])
    assert limiter.num_requeues("x") == 4
    # overall: 100 burst at 10 qps (4 tokens already used by "x")
    assert [limiter.when(f"item-{i}") for i in range(96)] == pytest.approx([0.005] * 96)
    assert limiter.when("one-too-many") == pytest.approx(0.1)
