"""WATCH (cf. the cacher's ``Watch``): initial state for ``resourceVersion`` "" or "0",
then every change after the requested revision, filtered by selectors, with optional
bookmarks. Events for one resource arrive in revision order.

Selector semantics as upstream: an update that makes an object start matching is ADDED,
one that makes it stop matching is DELETED.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from kubegc.api import errors
from kubegc.api.meta import ADDED, BOOKMARK, DELETED, ERROR, MODIFIED
from kubegc.api.types import Obj
from kubegc.registry.generic.listing import (
    STREAM_PAGE,
    Filter,
    list_objects,
    parse_resource_version,
)
from kubegc.registry.generic.store import Store
from kubegc.registry.generic.target import Target
from kubegc.registry.generic.watch_cache import (
    CachedEvent,
    TooOldResourceVersion,
    WatchCache,
    Watcher,
)

#: How long a quiet watch waits before sending a BOOKMARK (when bookmarks are allowed).
BOOKMARK_INTERVAL = 5.0


@dataclass(frozen=True, slots=True)
class WatchRequest:
    label_selector: str = ""
    field_selector: str = ""
    resource_version: str = ""
    allow_bookmarks: bool = False
    send_initial_events: bool | None = None
    timeout_seconds: float = 0.0


class Change:
    """One event for a watcher. ``source`` is the shared cached event (None for synthetic
    initial ADDED events, bookmarks and errors); when ``direct``, the object is served in its
    stored version and ``line()`` reuses the cached, already encoded event line."""

    __slots__ = ("_object", "direct", "source", "type")

    def __init__(self, type: str, object: Obj | None = None, source: CachedEvent | None = None,
                 *, direct: bool = False) -> None:
        self.type = type
        self._object = object
        self.source = source
        self.direct = direct and source is not None

    @property
    def object(self) -> Obj:
        if self._object is None:
            self._object = self.source.obj if self.source is not None else {}
        return self._object

    def line(self) -> bytes | None:
        """The encoded watch line when it can be shared, else None."""
        if self.direct and self.source is not None:
            return self.source.line(self.type)
        return None


class RegistryWatch:
    """Iterate ``batches()``; call ``close()`` when the client goes away."""

    def __init__(self, store: Store, cache: WatchCache, t: Target, req: WatchRequest) -> None:
        self.store, self.cache, self.t, self.req = store, cache, t, req
        self.filter = Filter(t, req.label_selector, req.field_selector)
        name = self.filter.exact_name()
        #: the key suffix of the one name the selector pins (an object's name is its key's
        #: last segment): events of other keys are left out without decoding them
        self._key_suffix = "/" + name if name else ""
        #: served in the stored version: events can be sent as the cached bytes
        self.direct = t.direct
        self._watcher: Watcher | None = None
        self._closed = False
        self._started = False
        self._initial: list[Change] = []
        self._continue = ""  # where the initial state's next page starts
        self._after = 0
        self._error: Obj | None = None

    def close(self) -> None:
        self._closed = True
        if self._watcher is not None:
            self._watcher.close()

    def _prefix(self) -> str:
        """One object's key when the selector pins its name and the target its namespace
        (or the resource has none); across namespaces, every key (the filter selects)."""
        name = self.filter.exact_name()
        if name is not None and (self.t.namespace or not self.t.info.namespaced):
            return self.t.key(name)
        return self.t.key_root()

    async def _initial_page(self) -> list[Change]:
        """The next ``STREAM_PAGE`` objects of the initial state, all read at the revision
        of the first page (the watch starts after it), so that the initial events are
        read and sent a page at a time, never held whole (as upstream's WatchList streams
        them from its cache); ``_continue`` is where the next page starts ("": done)."""
        listed = await list_objects(
            self.store, self.t, label_selector=self.req.label_selector,
            field_selector=self.req.field_selector, limit=STREAM_PAGE,
            continue_=self._continue)
        if not self._continue:
            self._after = int(listed["metadata"]["resourceVersion"])
        self._continue = listed["metadata"].get("continue", "")
        return [Change(ADDED, item) for item in listed["items"]]

    async def start(self) -> None:
        """List the initial state (when asked) and subscribe; bad requests raise here,
        before the server sends response headers."""
        rv = self.req.resource_version
        send_initial = self.req.send_initial_events
        if send_initial is None:
            send_initial = rv in ("", "0")
        if send_initial:
            self._initial = await self._initial_page()
        else:
            self._after = parse_resource_version(rv)
        try:
            self._watcher = self.cache.subscribe(self._prefix(), self._after)
        except TooOldResourceVersion as e:
            self._error = errors.resource_expired(str(e)).to_status()
        self._started = True

    async def batches(self) -> AsyncIterator[list[Change]]:
        if not self._started:
            await self.start()
        if self._error is not None:
            yield [Change(ERROR, self._error)]
            return
        async for initial in self._initial_pages():
            yield initial
        if self._closed:
            return
        if self.req.send_initial_events:
            yield [self._bookmark(self._after, initial_events_end=True)]
        # Timeouts are the HTTP client's, in real time, whatever the cluster's clock does
        # (a --time-scale'd cluster must not end `kubectl get -w` early).
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.req.timeout_seconds if self.req.timeout_seconds else None
        watcher = self._watcher
        if watcher is None:
            return
        while not self._closed:
            wait = BOOKMARK_INTERVAL if self.req.allow_bookmarks else None
            if deadline is not None:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    return
                wait = remaining if wait is None else min(wait, remaining)
            batch = await watcher.next_batch(wait)
            if batch is None:
                return
            if not batch:
                if self.req.allow_bookmarks and not watcher.buffer:
                    yield [self._bookmark(max(watcher.after, self.cache.revision))]
                continue
            changes = [c for c in map(self._change, batch) if c is not None]
            if changes:
                yield changes

    async def _initial_pages(self) -> AsyncIterator[list[Change]]:
        """The initial ADDED events, a page at a time; a page that can no longer be read
        at the first one's revision (compaction overtook it) ends the watch with the
        410 a too old resourceVersion gets, and the client lists again."""
        if self._initial:
            yield self._initial
            self._initial = []
        while self._continue and not self._closed:
            try:
                page = await self._initial_page()
            except errors.StatusError as e:
                self._continue = ""
                yield [Change(ERROR, e.to_status())]
                self.close()
                return
            if page:
                yield page

    def _change(self, event: CachedEvent) -> Change | None:
        kind = self._event_type(event)
        if kind is None:
            return None
        if self.direct:
            return Change(kind, source=event, direct=True)
        obj = event.obj if not event.deleted else dict(event.obj)
        return Change(kind, self.store.present(self.t, obj), event)

    def _event_type(self, event: CachedEvent) -> str | None:
        if self.filter.empty:
            if event.deleted:
                return DELETED
            return ADDED if event.created else MODIFIED
        if not event.key.endswith(self._key_suffix):
            return None
        if event.deleted:
            prev = event.prev_obj
            return DELETED if prev is not None and self.filter(prev) else None
        now = self.filter(event.obj)
        before = not event.created and (event.prev_obj is None or self.filter(event.prev_obj))
        if now:
            return MODIFIED if before else ADDED
        return DELETED if before else None

    def _bookmark(self, revision: int, *, initial_events_end: bool = False) -> Change:
        meta: dict[str, Any] = {"resourceVersion": str(revision)}
        if initial_events_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        return Change(BOOKMARK, {
            "kind": self.t.info.kind, "apiVersion": self.t.info.api_version(self.t.version),
            "metadata": meta,
        })


async def drain(watch: RegistryWatch) -> AsyncIterator[Change]:
    """Flatten ``watch.batches()`` into single changes (for in-process clients)."""
    try:
        async for batch in watch.batches():
            for change in batch:
                yield change
    finally:
        watch.close()
        await asyncio.sleep(0)
