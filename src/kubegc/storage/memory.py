"""``MemoryKV``: the MVCC contract of ``kv`` held in process memory.

Used by tests and by the planner, which loads a whole cluster into one: every operation is
a dict access or a list append, and nothing awaits (a write never yields to the loop).

History model (cf. etcd ``mvcc``): the store keeps the latest value of every live key plus a
log of every event since the compact revision. Each event carries ``prev_kv`` (the key's
value before the change), so the state at a past revision ``r`` is the latest state with
the events after ``r`` undone, newest first. Reads at recent revisions (paging, resuming a
list) undo only the few events written since. ``compact(r)`` drops the log before ``r``.

Watch: ``WatchHub`` replays from the log, then delivers live events (see ``watch_hub``).
Durability: none; ``close`` discards everything.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from collections.abc import Iterator
from itertools import islice
from operator import attrgetter

from kubegc.storage.errors import (
    ConflictError,
    KeyExistsError,
    KeyNotFoundError,
    StorageClosedError,
)
from kubegc.storage.kv import KV, Event, EventType, KeyValue, RangeResult, key_bounds
from kubegc.storage.revisions import Revisions
from kubegc.storage.watch_hub import LogWatch, WatchHub

# A sort of the key index costs O(n); inserting fewer new keys one by one is cheaper.
_INSORT_MAX = 16
# Rebuild the key index once this many (and more than half of its) keys are deleted.
_PRUNE_MIN_DEAD = 1024

_by_key = attrgetter("key")


class MemoryKV(Revisions, KV):
    """In-memory revisioned store.

    Ownership: one event loop; methods never await, so each runs atomically.
    Invariants:
      * ``_latest`` holds exactly the live keys; ``_log[i]`` has revision ``_log_base + i``
        and the log covers ``[compact_revision, current_revision]``.
      * every key of ``_latest`` is in ``_keys`` (sorted) or ``_unsorted``; keys there that
        are not live are in ``_dead``.
    """

    def __init__(self) -> None:
        self._latest: dict[str, KeyValue] = {}
        self._log: list[Event] = []
        self._log_base = 1
        self._keys: list[str] = []
        self._unsorted: list[str] = []
        self._dead: set[str] = set()
        self._hub = WatchHub()
        self._closed = False

    def __len__(self) -> int:
        """The number of live keys."""
        return len(self._latest)

    # -- reads ---------------------------------------------------------------------------

    async def get(self, key: str) -> KeyValue | None:
        if self._closed:
            raise StorageClosedError("storage is closed")
        return self._latest.get(key)

    async def range(
        self, key: str, *, end: str = "", prefix: bool = False, revision: int = 0,
        limit: int = 0, key_suffix: str = "",
    ) -> RangeResult:
        if self._closed:
            raise StorageClosedError("storage is closed")
        lo, hi = key_bounds(key, prefix=prefix, end=end)
        rev = self._read_revision(revision)
        if hi is None:
            found = self._latest.get(key)
            if rev != self._rev:
                found = self._touched(key, None, rev).get(key, found)
            found = found if key.endswith(key_suffix) else None
            return RangeResult([found] if found is not None else [], rev)
        if rev == self._rev:
            it: Iterator[KeyValue] = self._iter_live(lo, hi, set())
        else:
            touched = self._touched(lo, hi, rev)
            past = sorted((kv for kv in touched.values() if kv is not None), key=_by_key)
            it = heapq.merge(self._iter_live(lo, hi, touched), past, key=_by_key)
        if key_suffix:
            it = (kv for kv in it if kv.key.endswith(key_suffix))
        if limit <= 0:
            return RangeResult(list(it), rev)
        kvs = list(islice(it, limit + 1))
        more = len(kvs) > limit
        return RangeResult(kvs[:limit] if more else kvs, rev, more)

    def _touched(self, lo: str, hi: str | None, rev: int) -> dict[str, KeyValue | None]:
        """Keys in ``[lo, hi)`` (or just ``lo`` when ``hi`` is None) written after ``rev``,
        mapped to their value at ``rev`` (None: absent)."""
        state: dict[str, KeyValue | None] = {}
        for ev in reversed(self._log[rev + 1 - self._log_base:]):
            k = ev.kv.key
            if (k == lo) if hi is None else (lo <= k < hi):
                state[k] = ev.prev_kv  # the oldest event after rev wins: its prev is at rev
        return state

    def _iter_live(self, lo: str, hi: str, skip: set[str] | dict[str, KeyValue | None],
                   ) -> Iterator[KeyValue]:
        keys = self._sorted_keys()
        latest = self._latest
        for i in range(bisect_left(keys, lo), bisect_left(keys, hi)):
            k = keys[i]
            kv = latest.get(k)
            if kv is not None and k not in skip:
                yield kv

    def _sorted_keys(self) -> list[str]:
        new = self._unsorted
        if new:
            if len(new) <= _INSORT_MAX:
                for k in new:
                    insort(self._keys, k)
            else:
                self._keys.extend(new)
                self._keys.sort()
            new.clear()
        return self._keys

    # -- writes --------------------------------------------------------------------------

    async def create(self, key: str, value: bytes) -> int:
        if self._closed:
            raise StorageClosedError("storage is closed")
        if type(value) is not bytes:
            raise TypeError(f"values are bytes, not {type(value).__name__}")
        if key in self._latest:
            raise KeyExistsError(key)
        rev = self._rev + 1
        kv = KeyValue(key, value, rev, rev)
        self._latest[key] = kv
        if key in self._dead:
            self._dead.discard(key)
        else:
            self._unsorted.append(key)
        self._append(Event(EventType.PUT, kv))
        return rev

    async def update(self, key: str, value: bytes, *, expected_mod_revision: int) -> int:
        if type(value) is not bytes:
            raise TypeError(f"values are bytes, not {type(value).__name__}")
        cur = self._current(key, expected_mod_revision)
        rev = self._rev + 1
        kv = self._latest[key] = KeyValue(key, value, cur.create_revision, rev)
        self._append(Event(EventType.PUT, kv, cur))
        return rev

    async def delete(self, key: str, *, expected_mod_revision: int) -> int:
        cur = self._current(key, expected_mod_revision)
        rev = self._rev + 1
        del self._latest[key]
        self._dead.add(key)
        self._append(Event(EventType.DELETE, KeyValue(key, cur.value, cur.create_revision, rev),
                           cur))
        if len(self._dead) >= _PRUNE_MIN_DEAD and len(self._dead) * 2 > len(self._keys):
            self._prune_keys()
        return rev

    def _current(self, key: str, expected_mod_revision: int) -> KeyValue:
        if self._closed:
            raise StorageClosedError("storage is closed")
        cur = self._latest.get(key)
        if cur is None:
            raise KeyNotFoundError(key)
        if cur.mod_revision != expected_mod_revision:
            raise ConflictError(key, expected_mod_revision, cur.mod_revision)
        return cur

    def _append(self, ev: Event) -> None:
        self._rev = ev.kv.mod_revision
        self._log.append(ev)
        self._hub.notify([ev])

    def _prune_keys(self) -> None:
        dead = self._dead
        self._keys = sorted(k for k in (*self._keys, *self._unsorted) if k not in dead)
        self._unsorted.clear()
        dead.clear()

    # -- watch, compaction, lifecycle ----------------------------------------------------

    def watch(self, prefix: str, *, start_revision: int) -> LogWatch:
        """See ``KV.watch``; ``start_revision`` <= 0 means "from the next write"."""
        return self._hub.watch(self, prefix, start_revision)

    def read_events(self, lo: str, hi: str, start: int, end: int) -> list[Event]:
        """``EventLog`` for the hub: events in ``[lo, hi)`` with revision in [start, end]."""
        base = self._log_base
        events = self._log[start - base:end - base + 1]
        if lo:
            return [e for e in events if lo <= e.kv.key < hi]
        return events

    async def compact(self, revision: int) -> None:
        if self._closed:
            raise StorageClosedError("storage is closed")
        self._update_compact_rev(revision)
        del self._log[:revision - self._log_base]
        self._log_base = revision

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._hub.close()
        self._latest.clear()
        self._log.clear()
