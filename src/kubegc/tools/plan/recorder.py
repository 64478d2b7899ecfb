"""Record what a deletion does to a cluster: every change to deletion-related metadata,
in order.

``Recorder(client, clock)`` lists every watchable resource (the state *before*), then
watches each from the list's resourceVersion and keeps the changes that matter to a
deletion (``relevant``): an object gets a deletionTimestamp, gains or loses finalizers or
ownerReferences (or a reference's blockOwnerDeletion), or is deleted. Warning events
created meanwhile (``OwnerRefInvalidNamespace`` ...) are kept apart.

Changes are ordered by resourceVersion when every one is an integer (kubegc's are global
storage revisions, so the order is the order of the writes), else by arrival. The same
recorder serves the planner (on the simulation) and the tests that check a plan against
what kubegc really does.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from dataclasses import dataclass, field
from typing import Any

from kubegc.api.clock import Clock
from kubegc.api.errors import StatusError
from kubegc.api.meta import ADDED, DELETED, MODIFIED, EventType, uid_of
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import APIResource, Client, ListOptions, WatchOptions
from kubegc.tools.inventory import preferred_resources
from kubegc.tools.model import group_of

_IGNORED = {("", "events"), ("events.k8s.io", "events"), ("kubegc.io", "deletionrecords")}
EVENTS = APIResource("", "v1", "events", "Event", True, ("list", "watch"))


@dataclass(frozen=True, slots=True)
class Change:
    order: int
    seq: int
    time: float  # clock seconds since the recorder started
    type: EventType  # MODIFIED | DELETED
    before: Obj
    after: Obj


def _meta(obj: Obj) -> dict[str, Any]:
    return obj.get("metadata") or {}


def _blocking(obj: Obj) -> dict[str, bool]:
    return {str(r.get("uid")): bool(r.get("blockOwnerDeletion"))
            for r in _meta(obj).get("ownerReferences") or []}


def relevant(old: Obj, new: Obj) -> bool:
    a, b = _meta(old), _meta(new)
    return (a.get("deletionTimestamp") != b.get("deletionTimestamp")
            or list(a.get("finalizers") or []) != list(b.get("finalizers") or [])
            or _blocking(old) != _blocking(new)
            or (old.get("spec") or {}).get("finalizers") != (new.get("spec") or {}).get(
                "finalizers"))


@dataclass
class Recorder:
    client: Client
    clock: Clock
    before: dict[str, Obj] = field(default_factory=dict)
    current: dict[str, Obj] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)
    warnings: list[Obj] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        #: uids of the objects of ``current`` that are being deleted
        self.deleting: set[str] = set()
        self._gvrs: dict[tuple[str, str], GroupVersionResource] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._seq = itertools.count()
        self._t0 = self.clock.monotonic()

    async def start(self) -> None:
        resources = [r for r in preferred_resources(await self.client.discover())
                     if "watch" in r.verbs and "list" in r.verbs
                     and (r.group, r.resource) not in _IGNORED]
        for res in resources:
            self._gvrs[(res.group, res.kind)] = res.gvr
            try:
                listed = await self.client.list(res.gvr, options=ListOptions())
            except StatusError as e:
                self.errors.append(f"{res.resource}: {e.message}")
                continue
            for item in listed.get("items") or []:
                self.before[uid_of(item)] = item
                self._keep(item)
            rv = str((listed.get("metadata") or {}).get("resourceVersion") or "")
            self._tasks.append(asyncio.create_task(self._watch(res, rv), name=f"plan-{res}"))
        events = await self.client.list(EVENTS.gvr, options=ListOptions(limit=1))
        rv = str((events.get("metadata") or {}).get("resourceVersion") or "")
        self._tasks.append(asyncio.create_task(self._watch_events(rv), name="plan-events"))
        self._t0 = self.clock.monotonic()
        await asyncio.sleep(0)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, StatusError):
                await task
        self._tasks = []

    def gvr_for(self, obj: Obj) -> GroupVersionResource | None:
        return self._gvrs.get((group_of(obj), str(obj.get("kind"))))

    def relevant_count(self) -> int:
        return len(self.changes)

    def checkpoint(self) -> tuple[int, dict[str, Obj]]:
        """Mark the current point: (number of changes so far, state of every object now).
        ``ordered(since=...)`` then returns only what happened after it, ``warnings`` only
        the events created after it, and times count from it."""
        self._t0 = self.clock.monotonic()
        self.warnings.clear()
        return len(self.changes), dict(self.current)

    def ordered(self, *, since: int = 0, until: int | None = None) -> list[Change]:
        changes = self.changes[since:until]
        if all(c.order >= 0 for c in changes):
            return sorted(changes, key=lambda c: (c.order, c.seq))
        return sorted(changes, key=lambda c: c.seq)

    async def _watch(self, res: APIResource, rv: str) -> None:
        options = WatchOptions(resource_version=rv)
        try:
            async for event in self.client.watch(res.gvr, options=options):
                if event.type in (MODIFIED, DELETED):
                    self._observe(event.type, event.object)
                elif event.type == ADDED:
                    self._keep(event.object)
        except StatusError as e:  # e.g. 410: what followed is not recorded
            self.errors.append(f"{res.resource}: watch ended: {e.message}")

    async def _watch_events(self, rv: str) -> None:
        async for event in self.client.watch(EVENTS.gvr, options=WatchOptions(resource_version=rv)):
            if event.type == ADDED and event.object.get("type") == "Warning":
                self.warnings.append(event.object)

    def _keep(self, obj: Obj) -> None:
        uid = uid_of(obj)
        self.current[uid] = obj
        if _meta(obj).get("deletionTimestamp"):
            self.deleting.add(uid)
        else:
            self.deleting.discard(uid)

    def _observe(self, kind: EventType, obj: Obj) -> None:
        uid = uid_of(obj)
        old = self.current.get(uid)
        if kind == DELETED:
            self.current.pop(uid, None)
            self.deleting.discard(uid)
        else:
            self._keep(obj)
        if old is None or (kind == MODIFIED and not relevant(old, obj)):
            return
        rv = str(_meta(obj).get("resourceVersion") or "")
        order = int(rv) if rv.isdigit() else -1
        if kind == DELETED:
            obj = old  # its last state will do: one object less to keep per deletion
        self.changes.append(Change(order, next(self._seq), self.clock.monotonic() - self._t0,
                                   kind, old, obj))
