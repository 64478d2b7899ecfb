"""The basic work queue (cf. client-go util/workqueue/queue.go).

Guarantees:
  * Fair: items are handed out in the order they were first added.
  * Stingy: an item added several times before it is processed is processed once, and an
    item is never handed to two workers at once.
  * Re-entrant: an item added while it is being processed is queued again when the worker
    calls ``done(item)``, so the newest state is always processed.
  * Shutdown: after ``shut_down()`` new adds are ignored; ``get()`` still hands out what is
    queued and returns ``(None, True)`` once the queue is empty.

Concurrency: one asyncio event loop; every method except ``get``/``shut_down_with_drain``
is synchronous and never yields, so no lock is needed.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar, cast

from kubegc.api.sparse import compacted

T = TypeVar("T", bound=Hashable)


class Queue(Generic[T]):
    """A fair, stingy, re-entrant FIFO of work items.

    Ownership: any task may ``add``; workers ``get`` and must call ``done(item)`` when
    finished with an item, whatever the outcome.

    Invariants:
      * every item in ``_queue`` is in ``_dirty``; no item is in ``_queue`` twice;
      * an item in ``_processing`` is not in ``_queue`` (it may be in ``_dirty``: it was
        re-added while being processed and goes back to ``_queue`` on ``done``).
    """

    def __init__(self, *, name: str = "") -> None:
        self.name = name
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        self._shutting_down = False
        self._drain = False
        self._getters: deque[asyncio.Future[None]] = deque()
        self._drained: asyncio.Event | None = None

    def add(self, item: T) -> None:
        """Mark ``item`` as needing processing. Ignored once the queue is shutting down."""
        if self._shutting_down or item in self._dirty:
            return
        self._dirty.add(item)
        if item in self._processing:
            return
        self._queue.append(item)
        self._wake_one_getter()

    def __contains__(self, item: object) -> bool:
        """``item`` is queued or being processed."""
        return item in self._dirty or item in self._processing

    def __len__(self) -> int:
        """Items waiting to be handed out (not those being processed)."""
        return len(self._queue)

    async def get(self) -> tuple[T, bool]:
        """Block until an item is available or the queue is shut down and empty.

        Returns ``(item, False)``; the caller must call ``done(item)`` afterwards. Returns
        ``(None, True)`` (the item typed as ``T`` for convenience) once shut down and empty.
        """
        while not self._queue and not self._shutting_down:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                # A wake-up handed to a cancelled getter must pass to the next one, or an
                # item would sit in the queue while other workers wait.
                if waiter.done() and not waiter.cancelled():
                    self._wake_one_getter()
                raise
            finally:
                if waiter in self._getters:
                    self._getters.remove(waiter)
        if not self._queue:
            return cast(T, None), True
        item = self._queue.popleft()
        self._processing.add(item)
        self._dirty.discard(item)
        self._dirty = compacted(self._dirty)  # its room back once a burst is drained
        return item, False

    def done(self, item: T) -> None:
        """Finish processing ``item``; re-queue it if it was added while being processed."""
        self._processing.discard(item)
        if item in self._dirty:
            self._queue.append(item)
            self._wake_one_getter()
        elif not self._processing and self._drained is not None:
            self._drained.set()

    def shut_down(self) -> None:
        """Stop accepting items and wake every waiting ``get``. Queued items are still
        handed out; items being processed are not waited for."""
        self._drain = False
        self._start_shutdown()
        if self._drained is not None:
            self._drained.set()  # a pending shut_down_with_drain stops waiting, as upstream

    async def shut_down_with_drain(self) -> None:
        """Like ``shut_down`` but also wait until every item being processed is ``done``.

        Workers must keep calling ``get``/``done`` until they see shutdown, or this waits
        forever (as upstream's ``ShutDownWithDrain``).
        """
        self._drain = True
        self._start_shutdown()
        while self._processing and self._drain:
            self._drained = asyncio.Event()
            await self._drained.wait()

    def shutting_down(self) -> bool:
        return self._shutting_down

    def processing_count(self) -> int:
        """Items handed out by ``get`` and not yet ``done``."""
        return len(self._processing)

    def _start_shutdown(self) -> None:
        self._shutting_down = True
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)

    def _wake_one_getter(self) -> None:
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
