"""A work queue with delayed adds (cf. client-go util/workqueue/delaying_queue.go).

``add_after(item, delay)`` adds ``item`` once ``delay`` seconds of the injected ``Clock``
have passed, so a ``ManualClock.advance`` drives delayed adds deterministically.

Guarantees (on top of ``Queue``'s):
  * An item waiting several times is waiting once; a new ``add_after`` only moves its
    ready time earlier, never later (upstream ``insert``).
  * A delay <= 0 adds immediately.
  * ``shut_down`` drops every waiting item; ``add_after`` after shutdown is ignored.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from kubegc.api.clock import Clock
from kubegc.api.sparse import compacted
from kubegc.client.workqueue.queue import Queue, T


@dataclass(slots=True)
class _WaitFor:
    ready_at: float  # clock.monotonic() seconds
    task: asyncio.Task[None]


class DelayingQueue(Queue[T]):
    """A ``Queue`` plus ``add_after``.

    Ownership: each waiting item has one timer task that sleeps on the clock and then
    ``add``s the item; ``_waiting`` maps the item to its current timer. A timer replaced
    by an earlier one is cancelled. All state is touched only from the event loop.
    """

    def __init__(self, *, name: str = "", clock: Clock) -> None:
        super().__init__(name=name)
        self.clock = clock
        self._waiting: dict[T, _WaitFor] = {}

    def add_after(self, item: T, delay_seconds: float) -> None:
        """Add ``item`` after ``delay_seconds`` of clock time. Needs a running event loop."""
        if self.shutting_down():
            return
        if delay_seconds <= 0:
            self.add(item)
            return
        ready_at = self.clock.monotonic() + delay_seconds
        existing = self._waiting.get(item)
        if existing is not None:
            if existing.ready_at <= ready_at:
                return
            existing.task.cancel()
        task = asyncio.get_running_loop().create_task(
            self._add_when_ready(item, ready_at), name=f"workqueue-{self.name}-delay",
        )
        self._waiting[item] = _WaitFor(ready_at, task)

    def waiting_count(self) -> int:
        """Items scheduled by ``add_after`` whose delay has not yet passed."""
        return len(self._waiting)

    def shut_down(self) -> None:
        self._drop_waiting()
        super().shut_down()

    async def shut_down_with_drain(self) -> None:
        self._drop_waiting()
        await super().shut_down_with_drain()

    async def _add_when_ready(self, item: T, ready_at: float) -> None:
        # The timer task may start after the clock moved on (a test advancing a
        # ManualClock right after add_after): sleep only for what is left.
        await self.clock.sleep(ready_at - self.clock.monotonic())
        entry = self._waiting.get(item)
        if entry is not None and entry.task is asyncio.current_task():
            del self._waiting[item]
            self._waiting = compacted(self._waiting)
        self.add(item)

    def _drop_waiting(self) -> None:
        for entry in self._waiting.values():
            entry.task.cancel()
        self._waiting.clear()
