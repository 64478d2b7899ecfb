"""Per-item retry delays (cf. client-go util/workqueue/default_rate_limiters.go).

A ``RateLimiter`` answers "how long should this item wait before its next retry?". The
numbers match client-go exactly:
  * ``ItemExponentialFailureRateLimiter``: ``base * 2**failures``, capped at ``max``;
    the failure count grows on every ``when`` and is reset by ``forget``.
  * ``BucketRateLimiter``: a token bucket of ``burst`` tokens refilled at ``qps`` tokens per
    second (golang.org/x/time/rate ``Reserve().Delay()``): overall rate limiting, not per item.
  * ``MaxOfRateLimiter``: the largest delay of its limiters.
  * ``default_controller_rate_limiter``: max of exponential 5 ms..1000 s and 10 qps/100 burst.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from kubegc.api.clock import Clock, RealClock
from kubegc.api.sparse import compacted
from kubegc.client.workqueue.queue import T

T_contra = TypeVar("T_contra", bound=Hashable, contravariant=True)

# 2**62 * 5 ms already exceeds any sensible cap; beyond it Go reports maxDelay too.
_MAX_EXPONENT = 62


class RateLimiter(Protocol[T_contra]):
    """Decides retry delays; ``forget`` ends the tracking of an item."""

    @abstractmethod
    def when(self, item: T_contra) -> float:
        """Seconds ``item`` should wait before its next attempt (counts as a failure)."""

    @abstractmethod
    def forget(self, item: T_contra) -> None:
        """Stop tracking ``item`` (it succeeded or was given up on)."""

    @abstractmethod
    def num_requeues(self, item: T_contra) -> int:
        """How many times ``when`` was called for ``item`` since the last ``forget``."""


class ItemExponentialFailureRateLimiter(RateLimiter[T], Generic[T]):
    """``base * 2**n`` seconds for the n-th failure of an item, capped at ``max``."""

    def __init__(self, base: float = 0.005, max: float = 1000.0) -> None:
        self.base = base
        self.max = max
        self._failures: dict[T, int] = {}

    def when(self, item: T) -> float:
        exp = self._failures.get(item, 0)
        self._failures[item] = exp + 1
        if exp > _MAX_EXPONENT:
            return self.max
        return min(math.ldexp(self.base, exp), self.max)

    def forget(self, item: T) -> None:
        self._failures.pop(item, None)
        self._failures = compacted(self._failures)

    def num_requeues(self, item: T) -> int:
        return self._failures.get(item, 0)


class BucketRateLimiter(RateLimiter[T], Generic[T]):
    """A token bucket shared by all items: ``burst`` tokens, refilled at ``qps``/s.

    Each ``when`` reserves one token; when the bucket is empty the token is borrowed and
    the delay is the time until it will have been refilled (tokens may go negative, so
    back-to-back reservations queue up behind each other, as in x/time/rate).
    """

    def __init__(self, qps: float = 10.0, burst: int = 100, clock: Clock | None = None) -> None:
        if qps <= 0 or burst <= 0:
            raise ValueError("qps and burst must be positive")
        self.qps = qps
        self.burst = burst
        self.clock: Clock = clock or RealClock()
        self._tokens = float(burst)
        self._last = self.clock.monotonic()

    def when(self, item: T) -> float:
        now = self.clock.monotonic()
        elapsed = max(0.0, now - self._last)
        self._tokens = min(float(self.burst), self._tokens + elapsed * self.qps) - 1.0
        self._last = max(now, self._last)
        return -self._tokens / self.qps if self._tokens < 0 else 0.0

    def forget(self, item: T) -> None:
        return None

    def num_requeues(self, item: T) -> int:
        return 0


class MaxOfRateLimiter(RateLimiter[T], Generic[T]):
    """The worst (largest) answer of several limiters; all of them see every call."""

    def __init__(self, *limiters: RateLimiter[T]) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self.limiters = limiters

    def when(self, item: T) -> float:
        return max(limiter.when(item) for limiter in self.limiters)

    def forget(self, item: T) -> None:
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return max(limiter.num_requeues(item) for limiter in self.limiters)


def default_controller_rate_limiter(clock: Clock | None = None) -> MaxOfRateLimiter[T]:
    """client-go's ``DefaultControllerRateLimiter``: per-item exponential backoff from 5 ms
    to 1000 s, and 10 qps with a burst of 100 overall."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(10.0, 100, clock),
    )
