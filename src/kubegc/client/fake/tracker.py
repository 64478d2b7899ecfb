"""The fake client's object tracker (cf. client-go's ``testing.ObjectTracker``): objects per
resource *version*, keyed by namespace/name; one global resourceVersion counter; the watch
history and the open watches; and the few API-server rules the fake emulates (creation
defaults, removal once a deleting object has no finalizers, GC finalizers on DELETE).
Nothing here records actions: the client does. Stored objects are never handed out; every
method returning an object returns a copy."""

from __future__ import annotations

import asyncio
import copy
import uuid
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field

from kubegc.api import errors
from kubegc.api.clock import Clock, format_time
from kubegc.api.meta import (
    ADDED,
    BOOKMARK,
    DELETED,
    ERROR,
    FINALIZER_DELETE_DEPENDENTS,
    FINALIZER_ORPHAN_DEPENDENTS,
    GC_FINALIZERS,
    MODIFIED,
    DeletionPropagation,
    EventType,
    finalizers_of,
    metadata,
)
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import APIResource, DeleteOptions, WatchEvent

Matcher = Callable[[Obj], bool]
Key = tuple[str, str]  # namespace, name
_OMIT_EMPTY = ("finalizers", "ownerReferences", "labels", "annotations", "managedFields")


@dataclass(eq=False)
class _Watcher:
    gvr: GroupVersionResource
    matches: Matcher
    bookmarks: bool
    queue: asyncio.Queue[WatchEvent | None] = field(default_factory=asyncio.Queue)


class ObjectTracker:
    """In-memory objects and watches. One event loop; not thread-safe."""

    def __init__(
        self, clock: Clock, info: Callable[[GroupVersionResource], APIResource | None],
    ) -> None:
        self.clock = clock
        self._info = info
        self._objects: dict[GroupVersionResource, dict[Key, Obj]] = {}
        self.resource_version = 0  # of the last write
        self._history: list[tuple[int, GroupVersionResource, WatchEvent]] = []
        self._compacted = 0
        self._watchers: list[_Watcher] = []

    # -- reads -----------------------------------------------------------------------

    def find(self, gvr: GroupVersionResource, namespace: str, name: str) -> Obj | None:
        """The stored object itself (not a copy), or None."""
        return self._objects.get(gvr, {}).get((namespace, name))

    def must(self, gvr: GroupVersionResource, namespace: str, name: str) -> Obj:
        """The stored object itself; upstream's 404 if absent."""
        obj = self.find(gvr, namespace, name)
        if obj is None:
            raise errors.not_found(errors.GroupResource(gvr.group, gvr.resource), name)
        return obj

    def items(self, gvr: GroupVersionResource, matches: Matcher | None = None) -> list[Obj]:
        """Copies of the stored objects of ``gvr`` (that ``matches``), by namespace/name."""
        return [copy.deepcopy(o) for _, o in sorted(self._objects.get(gvr, {}).items())
                if matches is None or matches(o)]

    # -- writes ----------------------------------------------------------------------

    def create(self, gvr: GroupVersionResource, obj: Obj, namespace: str) -> Obj:
        """Store a new object: name (or generateName), apiVersion/kind, uid and
        creationTimestamp filled in when missing; 409 AlreadyExists on a taken name."""
        new = copy.deepcopy(obj)
        meta = metadata(new)
        if namespace:
            meta["namespace"] = namespace
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
        key = (str(meta.get("namespace") or ""), str(meta.get("name") or ""))
        if not key[1]:
            cause = errors.field_error("FieldValueRequired", "metadata.name",
                                       "name or generateName is required")
            raise errors.invalid(new.get("kind", ""), gvr.group, "", [cause])
        if key in self._objects.get(gvr, {}):
            raise errors.already_exists(errors.GroupResource(gvr.group, gvr.resource), key[1])
        info = self._info(gvr)
        new.setdefault("apiVersion", gvr.group_version)
        if info is not None:
            new.setdefault("kind", info.kind)
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", format_time(self.clock.now()))
        return self._store(gvr, new, ADDED)

    def commit(self, gvr: GroupVersionResource, new: Obj) -> Obj:
        """Store ``new`` (taken over, not copied) over the object of the same key, without
        the empty metadata lists and maps Go's ``omitempty`` drops; an object being deleted
        with no finalizers left is removed instead."""
        meta = new["metadata"]
        for key in _OMIT_EMPTY:
            if key in meta and meta[key] in (None, [], {}):
                del meta[key]
        if new["metadata"].get("deletionTimestamp") and not finalizers_of(new):
            self.remove(gvr, new)
            return copy.deepcopy(new)
        return self._store(gvr, new, MODIFIED)

    def remove(self, gvr: GroupVersionResource, final: Obj) -> None:
        """Remove the object of ``final``'s key; watchers get ``final`` as DELETED."""
        meta = final["metadata"]
        self._objects[gvr].pop((meta.get("namespace") or "", meta["name"]))
        gone = copy.deepcopy(final)
        self.resource_version += 1
        gone["metadata"]["resourceVersion"] = str(self.resource_version)
        self._notify(gvr, WatchEvent(DELETED, gone))

    def delete(
        self, gvr: GroupVersionResource, existing: Obj, options: DeleteOptions,
    ) -> Obj | None:
        """DELETE ``existing`` (stored): GC finalizers per ``options`` (cf. the registry's
        ``deletionFinalizersForGarbageCollection``); with finalizers left the object is marked
        deleting (a copy returned), without it is removed (None). No grace periods."""
        current = finalizers_of(existing)
        finalizers = deletion_finalizers(current, options)
        if not finalizers:
            self.remove(gvr, existing)
            return None
        if existing["metadata"].get("deletionTimestamp") and finalizers == current:
            return copy.deepcopy(existing)  # already being deleted: nothing to write
        new = copy.deepcopy(existing)
        meta = metadata(new)
        meta["finalizers"] = finalizers
        meta.setdefault("deletionTimestamp", format_time(self.clock.now()))
        meta["deletionGracePeriodSeconds"] = 0
        return self._store(gvr, new, MODIFIED)

    def _store(self, gvr: GroupVersionResource, obj: Obj, event_type: EventType) -> Obj:
        self.resource_version += 1
        meta = obj["metadata"]
        meta["resourceVersion"] = str(self.resource_version)
        self._objects.setdefault(gvr, {})[(meta.get("namespace") or "", meta["name"])] = obj
        self._notify(gvr, WatchEvent(event_type, obj))
        return copy.deepcopy(obj)

    # -- watches ---------------------------------------------------------------------

    async def watch(
        self, gvr: GroupVersionResource, matches: Matcher, resource_version: str,
        bookmarks: bool,
    ) -> AsyncGenerator[WatchEvent, None]:
        """""/"0": synthetic ADDED events for what exists, then live events; ``N``: the kept
        history after N (410 Expired ERROR if compacted away), then live events."""
        if resource_version in ("", "0"):
            backlog = [WatchEvent(ADDED, o) for o in self.items(gvr, matches)]
        elif int(resource_version) < self._compacted:
            message = f"too old resource version: {resource_version} ({self._compacted + 1})"
            yield WatchEvent(ERROR, errors.resource_expired(message).to_status())
            return
        else:
            backlog = [WatchEvent(e.type, copy.deepcopy(e.object)) for r, g, e in self._history
                       if g == gvr and r > int(resource_version) and matches(e.object)]
        watcher = _Watcher(gvr, matches, bookmarks)
        self._watchers.append(watcher)
        try:
            for event in backlog:
                yield event
            while (event_or_end := await watcher.queue.get()) is not None:
                yield event_or_end
        finally:
            if watcher in self._watchers:
                self._watchers.remove(watcher)

    def compact(self, resource_version: int | None = None) -> None:
        self._compacted = self.resource_version if resource_version is None else resource_version
        self._history = [h for h in self._history if h[0] > self._compacted]

    def end_watches(self, gvr: GroupVersionResource | None, last: WatchEvent | None) -> None:
        """End open watches (all, or of ``gvr``), after ``last`` if given."""
        for w in list(self._watchers):
            if gvr is None or w.gvr == gvr:
                if last is not None:
                    w.queue.put_nowait(last)
                w.queue.put_nowait(None)
                self._watchers.remove(w)

    def send_bookmark(self, gvr: GroupVersionResource, bookmark: Obj) -> None:
        for w in self._watchers:
            if w.gvr == gvr and w.bookmarks:
                w.queue.put_nowait(WatchEvent(BOOKMARK, copy.deepcopy(bookmark)))

    def watcher_count(self, gvr: GroupVersionResource | None = None) -> int:
        return sum(1 for w in self._watchers if gvr is None or w.gvr == gvr)

    def _notify(self, gvr: GroupVersionResource, event: WatchEvent) -> None:
        self._history.append((self.resource_version, gvr, event))
        for w in self._watchers:
            if w.gvr == gvr and w.matches(event.object):
                w.queue.put_nowait(WatchEvent(event.type, copy.deepcopy(event.object)))


def deletion_finalizers(current: list[str], options: DeleteOptions) -> list[str]:
    """The finalizers a DELETE leaves: ``orphanDependents`` > ``propagationPolicy`` > a GC
    finalizer already present > background (no GC finalizer). GC finalizers go last; an
    unchanged set keeps its order."""
    if options.orphan_dependents is not None:
        orphan, foreground = options.orphan_dependents, False
    elif options.propagation_policy is not None:
        orphan = options.propagation_policy == DeletionPropagation.ORPHAN
        foreground = options.propagation_policy == DeletionPropagation.FOREGROUND
    else:
        first = next((f for f in current if f in GC_FINALIZERS), None)
        orphan, foreground = (first == FINALIZER_ORPHAN_DEPENDENTS,
                              first == FINALIZER_DELETE_DEPENDENTS)
    new = [f for f in current if f not in GC_FINALIZERS]
    new += [FINALIZER_ORPHAN_DEPENDENTS] * orphan + [FINALIZER_DELETE_DEPENDENTS] * foreground
    return current if set(new) == set(current) else new
