"""One storage watch fanned out to many watchers (cf. apiserver's ``Cacher``).

The cache watches every key under ``/registry/`` once, decodes each event once, keeps the
last ``capacity`` events in a ring, and hands each event to the watchers whose key prefix
matches. A watch can start at any revision the ring still covers (``>= origin``); older
ones get 410 Expired, exactly as kube-apiserver's watch cache answers "too old resource
version", and clients relist.

Ownership: ``_dispatch`` (one task) is the only writer of the ring, ``origin``,
``revision`` and the watchers' buffers; subscribers only read. Shared decoded objects must
never be mutated by anyone.

Slow-consumer policy: a watcher buffers at most ``MAX_WATCHER_BUFFER`` events; a watcher
that falls further behind is closed (its stream ends) and the client re-watches from its
last resourceVersion — the same choice as upstream's cacher, which terminates watchers that
cannot keep up rather than grow without bound.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from kubegc.api.types import Obj
from kubegc.registry.keys import ROOT
from kubegc.storage import KV, CompactedError, Event, EventType, StorageClosedError

log = logging.getLogger(__name__)

#: Events kept for resuming watches: ~ a minute of heavy write load, as upstream sizes it.
DEFAULT_CAPACITY = 100_000
#: Events a single watcher may have pending before it is closed as too slow.
MAX_WATCHER_BUFFER = 200_000


@dataclass(slots=True)
class CachedEvent:
    """A decoded storage event. ``obj`` carries ``resourceVersion`` = the event's revision
    (for deletes: the deletion revision with the last state's content)."""

    deleted: bool
    created: bool
    key: str
    revision: int
    obj: Obj
    prev_obj: Obj | None
    encoded: dict[str, bytes] = field(default_factory=dict)  # per served apiVersion

    def json_for(self, api_version: str, obj: Obj) -> bytes:
        """``obj`` (this event's object as served at ``api_version``) encoded once."""
        cached = self.encoded.get(api_version)
        if cached is None:
            cached = orjson.dumps(obj)
            self.encoded[api_version] = cached
        return cached


class Watcher:
    """One subscription: events whose key starts with ``prefix``, revision > ``after``."""

    def __init__(self, cache: WatchCache, prefix: str, after: int) -> None:
        self.cache = cache
        self.prefix = prefix
        self.after = after
        self.buffer: collections.deque[CachedEvent] = collections.deque()
        self.closed = False
        self._wakeup = asyncio.Event()

    def push(self, event: CachedEvent) -> None:
        if event.revision <= self.after or self.closed or not event.key.startswith(self.prefix):
            return
        if len(self.buffer) >= MAX_WATCHER_BUFFER:
            log.warning("closing slow watcher on %s after %d events", self.prefix, len(self.buffer))
            self.close()
            return
        self.buffer.append(event)
        self._wakeup.set()

    async def next_batch(self, timeout: float | None = None) -> list[CachedEvent] | None:
        """Every buffered event (waiting up to ``timeout`` for one); [] on timeout,
        None once closed and drained."""
        if not self.buffer and not self.closed:
            self._wakeup.clear()
            try:
                await asyncio.wait_for(self._wakeup.wait(), timeout)
            except TimeoutError:
                return []
        if not self.buffer:
            return None if self.closed else []
        batch = list(self.buffer)
        self.buffer.clear()
        self.after = batch[-1].revision
        return batch

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.buffer.clear()
            self._wakeup.set()
            self.cache.unsubscribe(self)


class TooOldResourceVersion(Exception):
    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")
        self.requested = requested
        self.oldest = oldest


class WatchCache:
    def __init__(self, kv: KV, *, capacity: int = DEFAULT_CAPACITY) -> None:
        self._kv = kv
        self._ring: collections.deque[CachedEvent] = collections.deque(maxlen=capacity)
        self._watchers: dict[str, list[Watcher]] = {}
        self._task: asyncio.Task[None] | None = None
        self.origin = 0  # every event with revision > origin is in the ring
        self.revision = 0  # the last revision dispatched
        self._progress = asyncio.Condition()
        self.listeners: list[Callable[[CachedEvent], None]] = []

    async def start(self) -> None:
        current = self._kv.current_revision
        start = max(self._kv.compact_revision, current - (self._ring.maxlen or 0), 0) + 1
        self.origin = start - 1
        self.revision = current
        self._task = asyncio.create_task(self._run(start), name="watch-cache")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, StorageClosedError):
                await self._task
            self._task = None
        for watchers in list(self._watchers.values()):
            for w in list(watchers):
                w.close()

    async def _run(self, start: int) -> None:
        backoff = 0.05
        while True:
            try:
                async for events in self._kv.watch(ROOT, start_revision=start):
                    for event in events:
                        self._dispatch(event)
                    start = self.revision + 1
                    async with self._progress:
                        self._progress.notify_all()
                return
            except CompactedError:
                # Fell behind compaction: everything before now is unknown to watchers.
                self._ring.clear()
                self.origin = self._kv.current_revision
                self.revision = self.origin
                start = self.origin + 1
                for watchers in list(self._watchers.values()):
                    for w in list(watchers):
                        w.close()
            except StorageClosedError:
                return
            except Exception:  # keep serving: retry the storage watch
                log.exception("watch cache: storage watch failed; retrying")
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)

    def _dispatch(self, event: Event) -> None:
        cached = _decode(event)
        if len(self._ring) == self._ring.maxlen and self._ring:
            self.origin = self._ring[0].revision
        self._ring.append(cached)
        self.revision = cached.revision
        for prefix in _prefixes(cached.key):
            for watcher in self._watchers.get(prefix, ()):
                watcher.push(cached)
        for listener in self.listeners:
            listener(cached)

    def subscribe(self, prefix: str, after: int) -> Watcher:
        """Events under ``prefix`` with revision > ``after``; raises TooOldResourceVersion."""
        if after < self.origin:
            raise TooOldResourceVersion(after, self.origin + 1)
        watcher = Watcher(self, prefix, after)
        if after < self.revision:
            for event in self._ring:
                if event.revision > after and event.key.startswith(prefix):
                    watcher.push(event)
        self._watchers.setdefault(_watch_index(prefix), []).append(watcher)
        return watcher

    def unsubscribe(self, watcher: Watcher) -> None:
        watchers = self._watchers.get(_watch_index(watcher.prefix))
        if watchers and watcher in watchers:
            watchers.remove(watcher)

    async def wait_for_revision(self, revision: int, timeout: float = 5.0) -> bool:
        """Wait until every event up to ``revision`` has been dispatched."""
        async def reached() -> None:
            async with self._progress:
                await self._progress.wait_for(lambda: self.revision >= revision)

        try:
            await asyncio.wait_for(reached(), timeout)
        except TimeoutError:
            return False
        return True

    def is_idle(self) -> bool:
        """Everything written is dispatched and every watcher has taken its events."""
        if self.revision < self._kv.current_revision:
            return False
        return all(not w.buffer for ws in self._watchers.values() for w in ws)

    def watcher_count(self) -> int:
        return sum(len(ws) for ws in self._watchers.values())

    def watcher_prefixes(self) -> dict[str, int]:
        """How many watchers watch each key prefix (for debugging and tests)."""
        out: dict[str, int] = {}
        for watchers in self._watchers.values():
            for w in watchers:
                out[w.prefix] = out.get(w.prefix, 0) + 1
        return out


def _decode(event: Event) -> CachedEvent:
    kv = event.kv
    obj: dict[str, Any] = orjson.loads(kv.value)
    obj.setdefault("metadata", {})["resourceVersion"] = str(kv.mod_revision)
    prev: dict[str, Any] | None = None
    if event.prev_kv is not None:
        prev = orjson.loads(event.prev_kv.value)
        prev.setdefault("metadata", {})["resourceVersion"] = str(event.prev_kv.mod_revision)
    deleted = event.type is EventType.DELETE
    if deleted and prev is None:
        prev = obj
    return CachedEvent(deleted, event.is_create, kv.key, kv.mod_revision, obj, prev)


def _watch_index(prefix: str) -> str:
    """Watchers are indexed by their resource root (``/registry/<group>/<resource>/``)."""
    parts = prefix.split("/")
    return "/".join(parts[:4]) + "/" if len(parts) > 4 else prefix


def _prefixes(key: str) -> tuple[str, ...]:
    parts = key.split("/")
    return ("/".join(parts[:4]) + "/",) if len(parts) > 4 else (key,)
