"""Faults on an open watch stream: ``closeWatch`` (the stream ends cleanly after n
events), ``expireWatch`` (an ``ERROR`` event 410 Expired, then the end: the watch
cache's ``newErrWatcher(NewResourceExpired("too old resource version: ..."))``),
``hang`` (the stream stalls, no event and no end, while the fault is set: a watch whose
TCP connection went silent without a FIN) and ``staleReads`` (events held back until the
lagging view shows them).

``guard`` wraps the registry watch's batches and costs a dict test per batch while no
fault is set. A fault set while a watch is open is told to it (``FaultRegistry.add`` →
``_Guard.poke``): one that ends the stream closes the registry watch, whose batches then
end, and the guard sends the ERROR (or nothing) and ends; a hang or a lag acts on the
watch's next batch (until then a stalled stream and a quiet one look the same).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable

from kubegc.api import errors
from kubegc.api.meta import BOOKMARK, ERROR
from kubegc.registry import Change
from kubegc.server.faults.model import Fault
from kubegc.server.faults.registry import SAMPLE_INTERVAL, WatchScope, current_watch

_STREAM = frozenset({"closeWatch", "expireWatch", "hang", "staleReads"})


def _expired(scope: WatchScope, fault: Fault) -> Change:
    rv = scope.resource_version or str(fault.revision)
    err = errors.resource_expired(f"too old resource version: {rv} ({fault.revision})")
    return Change(ERROR, err.to_status())


class _Guard:
    """The faults one watch has met (one per watch: a fault fires once on it)."""

    def __init__(self, scope: WatchScope, opened: int, close: Callable[[], None]) -> None:
        self.scope = scope
        self.opened = opened  # the fault ids up to this one existed when it opened
        self.close = close  # ends the registry watch's batches
        self.met: dict[str, bool] = {}  # fault id: whether it acts on this watch
        self.close_after: int | None = None
        self.events = 0
        self.hung: Fault | None = None
        self.stale: Fault | None = None  # a staleReads fault: events held back (``held``)
        self.ending: Change | None = None  # the ERROR to end with, once closed

    def _meets(self, fault: Fault) -> bool:
        acts = self.met.get(fault.id)
        if acts is None:  # asked once per watch
            acts = self.met[fault.id] = fault.admits()
            if acts:
                self.scope.faults.fire(fault)
        return acts

    def verdict(self) -> None:
        """Take in the faults now set: an ERROR to end with, a hang, a lag, a close."""
        s = self.scope
        for fault in s.faults.matching(s.attrs, s.user_agent, _STREAM):
            if fault.id in self.met:
                continue
            kind = fault.action.type
            if kind == "expireWatch":
                if self.ending is None and self._expires(fault) and self._meets(fault):
                    self.ending = _expired(s, fault)
            elif kind == "hang":
                if self._meets(fault):
                    self.hung = fault
            elif kind == "staleReads":
                if self.stale is None and self._meets(fault):
                    self.stale = fault
            elif self.close_after is None and self._meets(fault):  # closeWatch
                self.close_after = self.events + fault.action.after_events

    def poke(self) -> None:
        """The faults changed: one that ends the stream ends it now."""
        self.verdict()
        if self.ending is not None or self.done():
            self.close()

    def done(self) -> bool:
        return self.close_after is not None and self.events >= self.close_after

    def hang(self) -> Fault | None:
        if self.hung is not None and self.hung.cleared.is_set():
            self.hung = None
        return self.hung

    def _expires(self, fault: Fault) -> bool:
        """Open when the fault was set, or asking for a revision older than then."""
        if int(fault.id) > self.opened:
            return True
        rv = self.scope.resource_version
        return rv.isdigit() and rv != "0" and int(rv) < fault.revision

    def take(self, batch: list[Change]) -> tuple[list[Change], bool]:
        """The part of ``batch`` to send, and whether the stream ends after it."""
        if self.close_after is None:
            return batch, False
        out: list[Change] = []
        for change in batch:
            if self.events >= self.close_after:
                return out, True
            out.append(change)
            if change.type not in (BOOKMARK, ERROR):
                self.events += 1
        return out, self.done()


def guarded(batches: AsyncIterator[list[Change]], close: Callable[[], None]
            ) -> AsyncIterator[list[Change]]:
    """The watch verb's batches, guarded when the request goes through the faults hook
    (``close`` ends the registry watch)."""
    scope = current_watch.get()
    return batches if scope is None else guard(scope, batches, close)


async def guard(scope: WatchScope, batches: AsyncIterator[list[Change]],
                close: Callable[[], None]) -> AsyncIterator[list[Change]]:
    """``batches`` as the faults set now and later let them through."""
    faults = scope.faults
    g = _Guard(scope, max((int(f.id) for f in faults), default=0), close)
    faults.guards.add(g)
    try:
        if faults:
            g.verdict()
        if g.ending is None and not g.done():
            async for batch in batches:
                if faults or g.hung is not None:
                    g.verdict()
                    await _stalled(g, scope, batch)
                if g.ending is not None:
                    break
                sent, end = g.take(batch)
                if sent:
                    yield sent
                if end:
                    return
        if g.ending is not None:
            yield [g.ending]
    finally:
        faults.guards.discard(g)
        with contextlib.suppress(Exception):
            await batches.aclose()  # type: ignore[attr-defined]


async def _stalled(g: _Guard, scope: WatchScope, batch: list[Change]) -> None:
    """Hold ``batch`` while a hang holds the watch, then while the lag does."""
    hung = g.hang()
    if hung is not None:
        await hung.cleared.wait()
    if g.stale is not None:
        await held(scope, g.stale, batch, time.monotonic())


async def held(scope: WatchScope, fault: Fault, batch: list[Change], arrived: float) -> None:
    """Hold ``batch`` back until the lagging view of ``fault`` shows it (or the fault is
    cleared): ``revisionsBehind`` more writes, or ``seconds`` after it arrived."""
    action = fault.action
    if action.seconds:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(fault.cleared.wait(),
                                   max(0.0, arrived + action.seconds - time.monotonic()))
        return
    newest = max((_revision_of(c) for c in batch), default=0)
    while (not fault.cleared.is_set()
           and scope.faults.revision() < newest + action.revisions_behind):
        await asyncio.sleep(SAMPLE_INTERVAL)


def _revision_of(change: Change) -> int:
    if change.type in (BOOKMARK, ERROR):
        return 0
    rv = (change.object.get("metadata") or {}).get("resourceVersion", "")
    return int(rv) if isinstance(rv, str) and rv.isdigit() else 0
