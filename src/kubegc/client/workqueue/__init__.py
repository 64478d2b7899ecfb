"""Rate-limited work queues for controllers (cf. client-go util/workqueue).

Guarantees:
  * Fair: items are handed out in the order they were added.
  * Stingy: an item is never processed by two workers at once; adding an item
    several times before it is processed yields one processing.
  * Re-entrant: an item added while being processed is processed again after done().
  * Shutdown: get() returns shutdown=True once shut_down() is called and the queue is empty.
  * Delays (add_after, add_rate_limited) run on the injected Clock.

Concurrency: asyncio, one event loop; items must be hashable.
May import: stdlib and kubegc.api only.
"""

from __future__ import annotations

from kubegc.client.workqueue.default_rate_limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    default_controller_rate_limiter,
)
from kubegc.client.workqueue.delaying_queue import DelayingQueue
from kubegc.client.workqueue.queue import Queue
from kubegc.client.workqueue.rate_limiting_queue import RateLimitingQueue

__all__ = [
    "BucketRateLimiter",
    "DelayingQueue",
    "ItemExponentialFailureRateLimiter",
    "MaxOfRateLimiter",
    "Queue",
    "RateLimiter",
    "RateLimitingQueue",
    "default_controller_rate_limiter",
]
