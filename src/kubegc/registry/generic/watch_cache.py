"""One storage watch fanned out to many watchers (cf. apiserver's ``Cacher``).

The cache watches every key under ``/registry/`` once, keeps the last ``capacity`` events
in a ring (their keys and stored bytes packed in large buffers, ``event_ring.EventRing``;
an event is decoded when a watcher first needs its object, and the decoded objects of the
last ``DECODED_WINDOW`` decoded events are shared by every reader), and hands each event to
the watchers whose key prefix matches.
A watch can start at any revision the ring still covers (``>= origin``); older
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
from dataclasses import dataclass

from kubegc.api.goformat import html_escape
from kubegc.api.types import Obj
from kubegc.registry.generic.event_ring import EventRing, Row, resource_root
from kubegc.registry.generic.keys import ROOT
from kubegc.registry.generic.target import decode_value, with_resource_version
from kubegc.storage import KV, CompactedError, Event, EventType, StorageClosedError

log = logging.getLogger(__name__)

#: Events kept for resuming watches: ~ a minute of heavy write load, as upstream sizes it.
DEFAULT_CAPACITY = 100_000
#: Events a single watcher may have pending before it is closed as too slow.
MAX_WATCHER_BUFFER = 200_000
#: Events whose decoded objects the cache keeps (see ``DecodedWindow``).
DECODED_WINDOW = 4096


class DecodedWindow:
    """The last ``capacity`` events decoded, which keep their decoded objects; an older
    one forgets them (``CachedEvent.forget``) and decodes again if asked.

    Every in-process watcher of an event asks for its object within a few loop turns of
    its dispatch, so they all share one decoded dict (one decode, one copy). Keeping the
    decoded objects of the whole ring instead held a second copy of every object a
    metadata-only informer had already reduced to its metadata: ~1.9 KB for each of the
    ring's 100,000 events (issue 27), and the restart path, whose ring is replayed from
    the log and never decoded, held none: the live and the restarted server now keep the
    same structures.

    Ownership: the event loop; ``remember`` is called from ``CachedEvent.obj``."""

    __slots__ = ("_capacity", "_events")

    def __init__(self, capacity: int = DECODED_WINDOW) -> None:
        self._capacity = capacity
        self._events: collections.deque[CachedEvent] = collections.deque()

    def remember(self, event: CachedEvent) -> None:
        self._events.append(event)
        if len(self._events) > self._capacity:
            self._events.popleft().forget()

    def __len__(self) -> int:
        return len(self._events)

    def revisions(self) -> list[int]:
        """The revisions of the events holding decoded objects, oldest first."""
        return [event.revision for event in self._events]


@dataclass(slots=True)
class CachedEvent:
    """A storage event as the cache hands it to watchers and listeners (made at dispatch,
    and again from the ring's packed row for a watch that resumes in the past): the stored
    bytes, decoded only when someone needs the object (``obj``), so that HTTP watchers can
    be served without any decoding (``line``). The decoded objects are
    kept while the event is among the cache's recently decoded ones (``DecodedWindow``).

    ``obj`` carries ``resourceVersion`` = the event's revision (for deletes: the deletion
    revision with the last state's content); ``prev_obj`` the state before the change."""

    deleted: bool
    created: bool
    key: str
    revision: int
    value: bytes
    prev_value: bytes | None
    prev_revision: int
    window: DecodedWindow | None = None
    _obj: Obj | None = None
    _prev: Obj | None = None
    #: encoded watch lines by event type, made when an HTTP watcher first asks
    lines: dict[str, bytes] | None = None

    @property
    def obj(self) -> Obj:
        obj = self._obj
        if obj is None:
            # a deleted object's last state leaves every informer's store: nothing keeps
            # it to share its strings with (interning it cost ~2 us for nothing)
            obj = self._obj = decode_value(self.value, self.revision, shared=not self.deleted)
            if self.window is not None:
                self.window.remember(self)
        return obj

    @property
    def prev_obj(self) -> Obj | None:
        prev = self._prev
        if prev is None and self.prev_value is not None:
            # only tested by a selector's filter, never kept
            prev = self._prev = decode_value(self.prev_value, self.prev_revision, shared=False)
            if self.window is not None:
                self.window.remember(self)
        return prev

    def forget(self) -> None:
        """Drop the decoded objects and the encoded watch lines (the bytes stay): the next
        reader decodes or encodes again. A line is as big as the stored bytes, and every
        HTTP watcher takes it right after the dispatch."""
        self._obj = self._prev = None
        self.lines = None

    def line(self, event_type: str) -> bytes:
        """The watch line ``{"type":..,"object":..}\\n`` for the stored version, as Go's
        JSON encoder writes it (``html_escape``), built once and shared by every HTTP
        watcher."""
        lines = self.lines
        if lines is None:
            lines = self.lines = {}
        cached = lines.get(event_type)
        if cached is None:
            cached = html_escape(b'{"type":"' + event_type.encode() + b'","object":'
                                 + with_resource_version(self.value, self.revision) + b"}\n")
            lines[event_type] = cached
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
        self._ring = EventRing(max(capacity, 1))
        self.decoded = DecodedWindow()
        self._watchers: dict[str, list[Watcher]] = {}
        self._task: asyncio.Task[None] | None = None
        self.origin = 0  # every event with revision > origin is in the ring
        self.revision = 0  # the last revision dispatched
        self._progress = asyncio.Condition()
        self.listeners: list[Callable[[CachedEvent], None]] = []
        #: called when events were lost (compaction overtook the cache): whoever keeps
        #: state from the events reads storage again
        self.relist_listeners: list[Callable[[], None]] = []

    @property
    def capacity(self) -> int:
        """Events the ring keeps: a watch can resume this far back at most."""
        return self._ring.capacity

    async def start(self) -> None:
        current = self._kv.current_revision
        start = max(self._kv.compact_revision, current - self._ring.capacity, 0) + 1
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
                for relist in self.relist_listeners:
                    relist()
            except StorageClosedError:
                return
            except Exception:  # keep serving: retry the storage watch
                log.exception("watch cache: storage watch failed; retrying")
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)

    def _dispatch(self, event: Event) -> None:
        row = _row(event)
        cached = CachedEvent(*row, self.decoded)
        root = resource_root(cached.key)
        evicted = self._ring.append(row, root)
        if evicted is not None:
            self.origin = evicted
        self.revision = cached.revision
        for watcher in self._watchers.get(root, ()):
            watcher.push(cached)
        for listener in self.listeners:
            listener(cached)

    def subscribe(self, prefix: str, after: int) -> Watcher:
        """Events under ``prefix`` with revision > ``after``; raises TooOldResourceVersion."""
        if after < self.origin:
            raise TooOldResourceVersion(after, self.origin + 1)
        watcher = Watcher(self, prefix, after)
        for event in self._since(after, prefix):
            watcher.push(event)
        self._watchers.setdefault(resource_root(prefix), []).append(watcher)
        return watcher

    def _since(self, after: int, prefix: str) -> list[CachedEvent]:
        """The ring's events under ``prefix`` with revision > ``after``, oldest first.
        Read from the newest back (the ring is in revision order): a watch resuming near
        the present, as every informer after a restart from its caches, reads the few
        events since, not the whole ring (100,000 events, ~40 informers)."""
        return [CachedEvent(*row, self.decoded) for row in self._ring.since(after, prefix)]

    def unsubscribe(self, watcher: Watcher) -> None:
        watchers = self._watchers.get(resource_root(watcher.prefix))
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


def _row(event: Event) -> Row:
    kv = event.kv
    prev = event.prev_kv
    deleted = event.type is EventType.DELETE
    prev_value = prev.value if prev is not None else (kv.value if deleted else None)
    prev_revision = prev.mod_revision if prev is not None else kv.mod_revision
    return (deleted, event.is_create, kv.key, kv.mod_revision, kv.value, prev_value,
            prev_revision)
