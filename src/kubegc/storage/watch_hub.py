"""In-process watch fan-out shared by ``MemoryKV`` and ``SqliteKV`` (cf. etcd
``mvcc/watchable_store.go``: *unsynced* watchers catch up from history, *synced* ones get
live events).

Gap-free switch from replay to live:
  * A ``LogWatch`` starts unsynced. Each ``__anext__`` reads the next slice of at most
    ``CATCH_UP_REVISIONS`` revisions from the backend's ``EventLog``; the slice that reaches
    the backend's current revision registers the watch as synced in the same synchronous
    step (no ``await`` between the read and the registration).
  * Backends advance ``current_revision`` and call ``WatchHub.notify`` in one synchronous
    step, after the write is committed.
  Both steps run on the one event loop, so a write is either in the last slice read or in a
  later ``notify``, never both and never neither: every revision is delivered exactly once,
  in order.

Slow-consumer policy: never drop. A synced watch appends every matching event to its own
pending list and ``__anext__`` hands over everything queued as one batch (coalescing, so a
slow consumer gets big batches rather than falling behind one event at a time). The backlog
of a consumer that does not read grows without bound; that is the price of never dropping.
A consumer that stops iterating (``aclose()``, or drops the iterator) is unregistered: the
hub holds watches weakly.

Ownership: one event loop. Backends alone call ``notify`` and ``close``; each ``LogWatch`` is
iterated by one task. May import: the standard library and ``kubegc.storage``.
"""

from __future__ import annotations

import asyncio
import weakref
from abc import abstractmethod
from typing import Protocol

from kubegc.storage.errors import CompactedError, StorageClosedError
from kubegc.storage.kv import Event, prefix_end

# Revisions read per catch-up step: bounds how long one step holds the event loop
# (a SQLite log scan runs at ~0.7M rows/s, so ~1.5 ms per step).
CATCH_UP_REVISIONS = 1000


class EventLog(Protocol):
    """What a backend offers the hub: its revisions and a synchronous history read."""

    @property
    @abstractmethod
    def current_revision(self) -> int: ...

    @property
    @abstractmethod
    def compact_revision(self) -> int: ...

    @abstractmethod
    def read_events(self, lo: str, hi: str, start: int, end: int) -> list[Event]:
        """Events on keys in ``[lo, hi)`` with ``start <= revision <= end``, in order.
        Called only with ``compact_revision <= start <= end <= current_revision``."""


class WatchHub:
    """The synced watchers of one store, grouped by prefix.

    Ownership: the backend owns the hub; ``notify`` is called after every commit.
    Invariant: every watch in ``_synced`` has read all history up to the revision that was
    current when it registered.
    """

    def __init__(self) -> None:
        # prefix -> id(watch) -> weak reference (a watch nobody iterates any more is
        # collected and drops out; plain dicts iterate much faster than WeakSets)
        self._synced: dict[str, dict[int, weakref.ref[LogWatch]]] = {}
        self.closed = False

    def watch(self, log: EventLog, prefix: str, start_revision: int) -> LogWatch:
        if self.closed:
            raise StorageClosedError("storage is closed")
        return LogWatch(self, log, prefix, start_revision)

    @property
    def has_watchers(self) -> bool:
        """True when at least one synced watch would receive events (cheap)."""
        return any(self._synced.values())

    def notify(self, events: list[Event]) -> None:
        """Queue committed ``events`` (in revision order) to every synced watch they match."""
        empty: list[str] = []
        for prefix, group in self._synced.items():
            if not group:
                empty.append(prefix)
                continue
            matched = [e for e in events if e.kv.key.startswith(prefix)] if prefix else events
            if matched:
                for ref in tuple(group.values()):  # a collection may edit the group
                    w = ref()
                    if w is not None:
                        w._deliver(matched)
        for prefix in empty:
            if not self._synced[prefix]:
                del self._synced[prefix]

    def close(self) -> None:
        """End every watch: each delivers what it has queued, then stops iterating."""
        self.closed = True
        groups, self._synced = self._synced, {}
        for group in groups.values():
            for ref in tuple(group.values()):
                w = ref()
                if w is not None:
                    w._wake()

    def _add(self, w: LogWatch) -> None:
        group = self._synced.get(w.prefix)
        if group is None:
            group = self._synced[w.prefix] = {}
        key = id(w)

        def collected(ref: weakref.ref[LogWatch]) -> None:
            if group.get(key) is ref:
                del group[key]

        group[key] = weakref.ref(w, collected)

    def _discard(self, w: LogWatch) -> None:
        group = self._synced.get(w.prefix)
        if group is not None:
            ref = group.get(id(w))
            if ref is not None and ref() is w:
                del group[id(w)]


class LogWatch:
    """One watch stream: an async iterator of event batches (see the module docstring).

    ``start_revision <= 0`` means "from the next write". ``CompactedError`` is raised by the
    ``__anext__`` that finds its next revision compacted (the first one, or a later one if a
    compaction overtakes a long catch-up); the stream then ends.
    """

    __slots__ = (
        "__weakref__",
        "_done",
        "_hi",
        "_hub",
        "_log",
        "_next",
        "_pending",
        "_synced",
        "_waiter",
        "prefix",
    )

    def __init__(self, hub: WatchHub, log: EventLog, prefix: str, start_revision: int) -> None:
        self.prefix = prefix
        self._hi = prefix_end(prefix)
        self._hub = hub
        self._log = log
        # Unsynced: the next revision to read from the log. Synced: the first revision this
        # watch accepts (above current only when it was started at a future revision).
        self._next = start_revision if start_revision > 0 else log.current_revision + 1
        self._pending: list[Event] = []
        self._synced = False
        self._done = False
        self._waiter: asyncio.Future[None] | None = None

    def __aiter__(self) -> LogWatch:
        return self

    async def __anext__(self) -> list[Event]:
        while True:
            if self._pending:
                batch, self._pending = self._pending, []
                return batch
            if self._done or self._hub.closed:
                await self.aclose()
                raise StopAsyncIteration
            if not self._synced:
                batch = self._catch_up()
                if batch:
                    return batch
                if not self._synced:
                    await asyncio.sleep(0)  # a slice without matches: let others run
                continue
            waiter = asyncio.get_running_loop().create_future()
            self._waiter = waiter
            try:
                await waiter
            finally:
                self._waiter = None

    async def aclose(self) -> None:
        """Stop the watch; events still queued are discarded."""
        self._done = True
        self._pending = []
        self._hub._discard(self)
        self._wake()

    def _catch_up(self) -> list[Event]:
        log = self._log
        start = self._next
        if start < log.compact_revision:
            self._done = True
            raise CompactedError(start, log.compact_revision)
        current = log.current_revision
        if start > current:
            self._synced = True
            self._hub._add(self)
            return []
        end = min(current, start + CATCH_UP_REVISIONS - 1)
        events = log.read_events(self.prefix, self._hi, start, end)
        self._next = end + 1
        if end == current:
            self._synced = True
            self._hub._add(self)
        return events

    def _deliver(self, events: list[Event]) -> None:
        if events[0].kv.mod_revision < self._next:
            events = [e for e in events if e.kv.mod_revision >= self._next]
            if not events:
                return
        self._pending.extend(events)
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
