"""Faults on an open watch stream: ``closeWatch`` (the stream ends cleanly after n
events), ``expireWatch`` (an ``ERROR`` event 410 Expired, then the end: the watch
cache's ``newErrWatcher(NewResourceExpired("too old resource version: ..."))``) and
``hang`` (the stream stalls, no event and no end, while the fault is set: a watch whose
TCP connection went silent without a FIN).

``guard`` wraps the registry watch's batches; it wakes when the faults change, so a fault
set while a watch is open acts on it at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

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

    def __init__(self, scope: WatchScope, opened: int) -> None:
        self.scope = scope
        self.opened = opened  # the fault ids up to this one existed when it opened
        self.met: dict[str, bool] = {}  # fault id: whether it acts on this watch
        self.close_after: int | None = None
        self.events = 0
        self.hung: Fault | None = None
        self.stale: Fault | None = None  # a staleReads fault: events held back (``held``)

    def _meets(self, fault: Fault) -> bool:
        acts = self.met.get(fault.id)
        if acts is None:  # asked once per watch
            acts = self.met[fault.id] = fault.admits()
            if acts:
                self.scope.faults.fire(fault)
        return acts

    def verdict(self) -> tuple[Change | None, Fault | None]:
        """(an ERROR to end with, a hang fault to wait on), from the faults now set."""
        if self.hung is not None and not self.hung.cleared.is_set():
            return None, self.hung
        s = self.scope
        for fault in s.faults.matching(s.attrs, s.user_agent, _STREAM):
            if fault.id in self.met and fault.action.type != "hang":
                continue
            kind = fault.action.type
            if kind == "expireWatch" and self._expires(fault) and self._meets(fault):
                return _expired(s, fault), None
            if kind == "hang" and self._meets(fault):
                self.hung = fault
                return None, fault
            if kind == "staleReads" and self.stale is None and self._meets(fault):
                self.stale = fault
            if kind == "closeWatch" and self.close_after is None and self._meets(fault):
                self.close_after = self.events + fault.action.after_events
        return None, None

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
        return out, self.events >= self.close_after


def guarded(batches: AsyncIterator[list[Change]]) -> AsyncIterator[list[Change]]:
    """The watch verb's batches, guarded when the request goes through the faults hook."""
    scope = current_watch.get()
    return batches if scope is None else guard(scope, batches)


async def guard(scope: WatchScope, batches: AsyncIterator[list[Change]]
                ) -> AsyncIterator[list[Change]]:
    """``batches`` as the faults set now and later let them through."""
    faults = scope.faults
    g = _Guard(scope, max((int(f.id) for f in faults), default=0))
    pending: asyncio.Future[list[Change]] | None = None
    try:
        while True:
            changed = faults.changed  # before looking: a change after it wakes us
            error, hang = g.verdict()
            if error is not None:
                yield [error]
                return
            if g.close_after is not None and g.events >= g.close_after:
                return
            if pending is None:
                pending = asyncio.ensure_future(anext(batches))
            if not await _next_ready(pending, changed, hang is None):
                continue
            try:
                batch = pending.result()
            except StopAsyncIteration:
                return
            pending = None
            if g.stale is not None:
                await held(scope, g.stale, batch, time.monotonic())
            batch, end = g.take(batch)
            if batch:
                yield batch
            if end:
                return
    finally:
        await _close(pending, batches)


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


async def _next_ready(pending: asyncio.Future[list[Change]], changed: asyncio.Event,
                      wanted: bool) -> bool:
    """Wait for the next batch (when ``wanted``) or a change of the faults; whether the
    batch is there to take."""
    woken = asyncio.ensure_future(changed.wait())
    waits: set[asyncio.Future[Any]] = {woken}
    if wanted:
        waits.add(pending)
    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    woken.cancel()
    return wanted and pending.done()


async def _close(pending: asyncio.Future[list[Change]] | None,
                 batches: AsyncIterator[list[Change]]) -> None:
    if pending is not None:
        pending.cancel()
        with contextlib.suppress(BaseException):
            await pending
    with contextlib.suppress(Exception):
        await batches.aclose()  # type: ignore[attr-defined]
