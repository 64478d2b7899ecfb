"""The page's live data: server-sent event streams fed by ``LiveObjects``.

Each open page holds one ``Stream`` (``GET /ui/api/stream?namespace=NS``). Its first
event is a ``snapshot`` (every node shown, the namespaces, the doctor's marks); then come
``changes`` (nodes added or changed, ids removed — one event per batch of watch events)
and ``doctor`` (new marks). A namespace's stream carries that namespace's objects plus
the owners they reference elsewhere (``external``, not counted: a cluster-scoped owner,
or one in another namespace).

The doctor runs over the whole picture after changes (``DOCTOR_DEBOUNCE`` later), never
more often than ``DOCTOR_PERIOD`` nor sooner than ``DOCTOR_SHARE`` times its own last run
time after it, so that a cascade over thousands of objects costs the event loop a bounded
share, and only while a page is open.
A stream whose page reads too slowly has its queue dropped and gets a new snapshot.

Ownership: the feed is driven from the event loop only; each stream's queue has one
writer (the feed) and one reader (its HTTP response).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson

from kubegc.api.types import Obj
from kubegc.tools.doctor import DoctorOptions, diagnose
from kubegc.tools.ui.live import LiveObjects
from kubegc.tools.ui.views import doctor_marks, node_of

log = logging.getLogger(__name__)

#: Shortest time between two doctor runs (seconds).
DOCTOR_PERIOD = 0.5
#: Seconds the doctor waits after a change for the rest of its burst (and lets the
#: changes reach the pages first).
DOCTOR_DEBOUNCE = 0.1
#: The doctor waits this many times its own run time before the next run (so it takes at
#: most a tenth of the event loop).
DOCTOR_SHARE = 9
#: Seconds of silence after which a stream sends a comment (keeps proxies from closing it).
KEEPALIVE = 15.0
#: Events queued for one stream before it is resent a snapshot instead.
MAX_QUEUED = 200
#: Seconds the first snapshot waits for every resource to be listed.
SYNC_WAIT = 10.0


def sse(event: str, data: Any) -> bytes:
    return b"event: " + event.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def external(node: dict[str, Any]) -> dict[str, Any]:
    """A node outside the namespace a page shows (an owner there, or an object found by
    the search): drawn, not counted. A copy: nodes are shared by every page."""
    return {**node, "external": True}


class Stream:
    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()
        self.shown: set[str] = set()  # ids of the nodes the page has
        self.stale = False  # the queue overflowed: resend a snapshot

    def wants(self, node: dict[str, Any], referenced: set[str]) -> bool:
        return not self.namespace or node["namespace"] == self.namespace or (
            node["uid"] in referenced)

    def shown_as(self, node: dict[str, Any]) -> dict[str, Any]:
        """The node as this page shows it: outside its namespace, ``external``."""
        return external(node) if self.namespace and node["namespace"] != self.namespace \
            else node

    def put(self, message: bytes) -> None:
        if self.stale:
            return
        if self.queue.qsize() >= MAX_QUEUED:
            self.stale = True
            self.queue = asyncio.Queue()
            return
        self.queue.put_nowait(message)


class Feed:
    def __init__(self, live: LiveObjects) -> None:
        self.live = live
        self.streams: set[Stream] = set()
        self.marks: dict[str, Any] = {"references": {}, "findings": {}, "chains": {}}
        self.unsynced: list[str] = []
        self._marks_generation = -1
        self._namespaces: list[str] = []  # as last sent
        self._wake = asyncio.Event()
        self._ready: asyncio.Task[None] | None = None
        self._doctor: asyncio.Task[None] | None = None
        live.add_listener(self._on_changes)

    async def close(self) -> None:
        self.live.remove_listener(self._on_changes)
        for task in (self._ready, self._doctor):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _prepare(self) -> None:
        self.unsynced = await self.live.wait_synced(SYNC_WAIT)
        await self._run_doctor()
        self._doctor = asyncio.create_task(self._doctor_loop(), name="ui-doctor")

    async def events(self, namespace: str) -> AsyncIterator[bytes]:
        """The event stream of one page (see the module docstring)."""
        stream = Stream(namespace)
        self.streams.add(stream)
        try:
            if self._ready is None:  # the first page: once every resource is listed
                self._ready = asyncio.create_task(self._prepare(), name="ui-prepare")
            await asyncio.shield(self._ready)  # a page that leaves meanwhile stops nothing
            yield self._snapshot(stream)
            while True:
                if stream.stale:
                    stream.stale = False
                    yield self._snapshot(stream)
                try:
                    yield await asyncio.wait_for(stream.queue.get(), KEEPALIVE)
                except TimeoutError:
                    yield b": keep-alive\n\n"
        finally:
            self.streams.discard(stream)

    # -- what a page gets ------------------------------------------------------------

    def _referenced(self, namespace: str, objects: list[Obj]) -> set[str]:
        return {str(r.get("uid")) for o in objects
                if (o.get("metadata") or {}).get("namespace") == namespace
                for r in (o.get("metadata") or {}).get("ownerReferences") or []}

    def _snapshot(self, stream: Stream) -> bytes:
        objects = self.live.objects()
        referenced = self._referenced(stream.namespace, objects) if stream.namespace else set()
        now = self.live.clock.now()
        nodes = [stream.shown_as(n) for n in (node_of(o, now) for o in objects)
                 if stream.wants(n, referenced)]
        stream.shown = {n["id"] for n in nodes}
        return sse("snapshot", {"source": self.live.source, "namespace": stream.namespace,
                                "namespaces": self.live.namespaces(), "nodes": nodes,
                                "marks": self.marks, "unlisted": self.unsynced})

    def _on_changes(self, batch: dict[str, Obj | None]) -> None:
        self._wake.set()
        if not self.streams:
            return
        now = self.live.clock.now()
        nodes = {oid: node_of(obj, now) for oid, obj in batch.items() if obj is not None}
        objects: list[Obj] | None = None
        for stream in list(self.streams):
            referenced: set[str] = set()
            if stream.namespace and any(n["namespace"] != stream.namespace
                                        for n in nodes.values()):
                objects = objects if objects is not None else self.live.objects()
                referenced = self._referenced(stream.namespace, objects)
            upserts = [stream.shown_as(n) for n in nodes.values()
                       if stream.wants(n, referenced)]
            kept = {n["id"] for n in upserts}
            gone = [oid for oid in batch if oid in stream.shown and oid not in kept]
            stream.shown.difference_update(gone)
            stream.shown.update(kept)
            if upserts or gone:
                stream.put(sse("changes", {"upserts": upserts, "deletes": gone}))
        names = self.live.namespaces()
        if names != self._namespaces:
            self._namespaces = names
            for stream in self.streams:
                stream.put(sse("namespaces", names))

    # -- the doctor's marks ----------------------------------------------------------

    async def _doctor_loop(self) -> None:
        while True:
            await self._wake.wait()
            await asyncio.sleep(DOCTOR_DEBOUNCE)
            self._wake.clear()
            if not self.streams or self.live.generation == self._marks_generation:
                continue
            took = await self._run_doctor()
            for stream in list(self.streams):
                stream.put(sse("doctor", self.marks))
            await asyncio.sleep(max(DOCTOR_PERIOD, DOCTOR_SHARE * took))

    async def _run_doctor(self) -> float:
        started = time.perf_counter()
        self._marks_generation = self.live.generation
        try:
            inv = await self.live.inventory()
            report = diagnose(inv, DoctorOptions(stuck_after=0))
            self.marks = doctor_marks(report.to_dict())
        except Exception:  # the page keeps the marks it had; the next change retries
            log.exception("ui: the doctor failed")
        return time.perf_counter() - started
