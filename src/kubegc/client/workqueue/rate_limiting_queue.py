"""A delaying queue whose retries are spaced by a ``RateLimiter``
(cf. client-go util/workqueue/rate_limiting_queue.go).

Typical worker loop::

    item, shutdown = await queue.get()
    if shutdown:
        return
    try:
        ok = await process(item)
    finally:
        queue.done(item)
    if ok:
        queue.forget(item)          # reset the item's backoff
    else:
        queue.add_rate_limited(item)  # retry later, backing off
"""

from __future__ import annotations

from kubegc.api.clock import Clock
from kubegc.client.workqueue.default_rate_limiters import (
    RateLimiter,
    default_controller_rate_limiter,
)
from kubegc.client.workqueue.delaying_queue import DelayingQueue
from kubegc.client.workqueue.queue import T


class RateLimitingQueue(DelayingQueue[T]):
    """``DelayingQueue`` + a ``RateLimiter`` (default: ``default_controller_rate_limiter``).

    ``forget`` only clears the limiter's memory of the item; it does not remove the item
    from the queue. Callers must still call ``done``.
    """

    def __init__(
        self, *, name: str, clock: Clock, rate_limiter: RateLimiter[T] | None = None,
    ) -> None:
        super().__init__(name=name, clock=clock)
        self.rate_limiter: RateLimiter[T] = (
            rate_limiter if rate_limiter is not None else default_controller_rate_limiter(clock)
        )

    def add_rate_limited(self, item: T) -> None:
        """Add ``item`` after the delay its rate limiter asks for (one more failure)."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Reset ``item``'s backoff (call after it was processed successfully)."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return self.rate_limiter.num_requeues(item)

    def is_idle(self) -> bool:
        """Nothing queued, nothing being processed and nothing waiting for its delay."""
        return len(self) == 0 and self.processing_count() == 0 and self.waiting_count() == 0
