"""The metadata informers' caches, written while the server runs and when it stops, and
read back when it starts again on the same store, instead of listing every object
(issue 27: restart).

A restart otherwise reads every stored object from SQLite, decodes its whole JSON and
throws away all but its metadata: ~20 of the ~25 µs each object costs before ``/readyz``.
Reading the metadata back from a file of its own costs a few µs.

What a ``CachedList`` stands for is what a LIST at its ``resource_version`` would have
answered (the informer's cache as of the last event it applied: every event of its
resource up to that revision, none after), so an informer started from one behaves as a
reflector resuming at its last resourceVersion: its handlers get ``on_add(obj, True)``
for each object, ``has_synced`` turns True, and it watches from that resourceVersion —
the watch cache replays what changed since (it replays the store's log at start), or
answers 410 (older than its window) and the informer lists, as after any expired
resourceVersion. Each informer resumes from its own resourceVersion, as each reflector of
client-go does, and as each informer's LIST is at a revision of its own; an idle watch
gets a bookmark every few seconds, so even a quiet resource's is recent.

The file is written atomically (a temporary file renamed over it) every
``CacheKeeper.period`` seconds and at a clean stop, so a crash leaves the last one
behind. It names its store (``store``: the SQLite database's ``store_id``) and the
store's revision when it was written; a resource's cache is used only if its
resourceVersion is one the watch can still resume from (``oldest`` … ``current``: not
compacted away, not beyond the store's newest write, which a store restored from an older
copy could be). Anything else — a missing, partial, corrupt file, another store or
format, a file written after the store's last revision, a resource's cache older than the
window — and that resource (or every one) lists, as it always did; a file that can serve
nothing is removed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from kubegc.api.clock import Clock
from kubegc.api.interning import intern_common
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache.reflector import CachedList
from kubegc.client.cache.shared_informer import share_metadata

log = logging.getLogger(__name__)

#: the format written; a file of another is ignored
FORMAT = "kubegc.informer-caches/v2"


class _Invalid(Exception):
    pass


@dataclass(frozen=True)
class Window:
    """The store a file may serve: its ``store_id``, and the revisions a watch can resume
    from (``oldest``: the watch cache's origin, ``current``: the newest write)."""

    store: int
    oldest: int
    current: int


def write_caches(path: Path, revision: int,
                 caches: Mapping[GroupVersionResource, CachedList], *, store: int) -> None:
    """Write ``caches`` of the store ``store`` at ``revision`` (one JSON document per
    line: the header, then per resource its header and its objects), atomically."""
    tmp = path.with_name(path.name + ".tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    # owner-only, as the store: annotations can hold what a Secret holds
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
        f.write(orjson.dumps({"format": FORMAT, "store": store, "revision": revision,
                              "resources": len(caches)}) + b"\n")
        for gvr, cached in caches.items():
            f.write(orjson.dumps({"group": gvr.group, "version": gvr.version,
                                  "resource": gvr.resource,
                                  "resourceVersion": cached.resource_version,
                                  "items": len(cached.items)}) + b"\n")
            f.writelines(orjson.dumps(obj) + b"\n" for obj in cached.items)
    os.replace(tmp, path)


def read_caches(path: Path, window: Window) -> dict[GroupVersionResource, CachedList]:
    """The caches ``path`` holds that a watch on the store of ``window`` can resume (see
    the module doc); the file is removed if it serves none."""
    if not path.exists():
        return {}
    caches: dict[GroupVersionResource, CachedList] = {}
    try:
        with path.open("rb") as f:
            caches = _read(f, window)
    except (OSError, ValueError, KeyError, TypeError, _Invalid) as e:
        log.warning("informer caches %s not used (%s): the informers list", path, e)
    if not caches:
        with contextlib.suppress(OSError):
            path.unlink()
    return caches


def _read(f: IO[bytes], window: Window) -> dict[GroupVersionResource, CachedList]:
    lines = iter(f)
    header = _document(lines)
    if header.get("format") != FORMAT:
        raise _Invalid(f"format {header.get('format')!r}")
    if header.get("store") != window.store:
        raise _Invalid("written for another store")
    if int(header["revision"]) > window.current:
        raise _Invalid(f"written at revision {header['revision']}, after the store's last "
                       f"({window.current})")
    caches: dict[GroupVersionResource, CachedList] = {}
    for _ in range(int(header["resources"])):
        head = _document(lines)
        gvr = GroupVersionResource(str(head["group"]), str(head["version"]),
                                   str(head["resource"]))
        items = [_item(_document(lines)) for _ in range(int(head["items"]))]
        if window.oldest <= int(head["resourceVersion"]) <= window.current:
            caches[gvr] = CachedList(items, str(head["resourceVersion"]))
        else:  # older than the watch can resume from: this resource lists
            log.info("informer cache of %s at %s is outside %d..%d: it lists", gvr,
                     head["resourceVersion"], window.oldest, window.current)
    if next(lines, None) is not None:
        raise _Invalid("more than its headers announce")
    return caches


#: Seconds between two looks at the store's revision (``CacheKeeper.revisions``).
POLL = 1.0
#: After a write that took d seconds, the next waits at least ``REST * d`` (so at most
#: a tenth of the time goes to writing): at 1M objects a write takes ~8 s, and a GC
#: cascade moves the store half a watch cache window every ~10 s, so the keeper wrote
#: without pause, its thread (orjson holds the GIL) slowing the event loop. Caches that
#: then fall out of the window after a crash only mean that start lists.
REST = 9.0


class CacheKeeper:
    """Writes the caches ``collect`` returns (the store's revision, the caches) to
    ``path`` every ``period`` seconds of ``clock``, and sooner once the store has moved
    ``revisions`` past the last write (0: never sooner), off the event loop, so that a
    crash leaves recent ones behind (cf. a reflector's last resourceVersion): caches more
    than the watch cache's window behind the store cannot be resumed from, and a burst of
    writes would otherwise outrun a fixed period.

    Ownership: the composition root runs ``run`` as one task and calls ``stop`` before
    its own last write, which then cannot interleave with one of these."""

    def __init__(self, path: Path, *, store: int, period: float, clock: Clock,
                 collect: Callable[[], tuple[int, Mapping[GroupVersionResource, CachedList]]],
                 revision: Callable[[], int] = lambda: 0, revisions: int = 0) -> None:
        self.path, self.store, self.period, self.clock = path, store, period, clock
        self.collect, self.revision, self.revisions = collect, revision, revisions
        self.written = 0  # files written (tests, logs)
        self._writing: asyncio.Future[None] | None = None

    def _due(self, since: float, last_revision: int) -> bool:
        if self.clock.monotonic() - since >= self.period:
            return True
        return self.revisions > 0 and self.revision() - last_revision >= self.revisions

    async def run(self) -> None:
        since, last_revision = self.clock.monotonic(), self.revision()
        resting_until = 0.0  # time.monotonic(): a write's cost is real time, any clock
        while True:
            await self.clock.sleep(min(POLL, self.period))
            if time.monotonic() < resting_until or not self._due(since, last_revision):
                continue
            since = self.clock.monotonic()
            revision, caches = self.collect()  # on the loop: each cache as of one event
            last_revision = revision
            if caches:
                started = time.monotonic()
                await self._write(revision, caches)
                resting_until = time.monotonic() + REST * (time.monotonic() - started)
            # not kept while resting: after a mass deletion these caches would hold every
            # deleted object's metadata until the next write (bench_after_deletion: 18,527
            # of 20,000 ConfigMaps)
            del caches

    async def _write(self, revision: int,
                     caches: Mapping[GroupVersionResource, CachedList]) -> None:
        self._writing = asyncio.ensure_future(asyncio.to_thread(
            write_caches, self.path, revision, caches, store=self.store))
        try:
            await asyncio.shield(self._writing)
            self.written += 1
        except OSError as e:  # the last file written (or none) stays
            log.warning("informer caches not written to %s: %s", self.path, e)

    async def stop(self) -> None:
        """Wait for a write under way (a cancelled ``run`` does not stop its thread)."""
        writing, self._writing = self._writing, None
        if writing is not None:
            with contextlib.suppress(OSError):
                await writing


def _document(lines: Iterator[bytes]) -> dict[str, Any]:
    line = next(lines, None)
    if line is None:
        raise _Invalid("cut short")
    doc = orjson.loads(line)
    if type(doc) is not dict:
        raise _Invalid("not an object")
    return doc


def _item(obj: dict[str, Any]) -> Obj:
    """An object as the live informer keeps it: its repeated strings and values shared."""
    meta = obj.get("metadata")
    if type(meta) is not dict or "managedFields" in meta:
        raise _Invalid("not a metadata-only object")
    intern_common(obj)
    share_metadata(meta)
    return obj
