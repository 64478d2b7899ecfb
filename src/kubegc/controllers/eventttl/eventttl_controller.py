"""Event expiry (the role of the API server's ``--event-ttl``, 1 hour by default, which
upstream implements with etcd leases on every Event write).

Every ``sweep_period`` seconds of the injected clock the controller lists core/v1 Events
(in pages) and deletes those whose last write is older than ``event_ttl``: the latest of
``lastTimestamp``, ``eventTime``, ``series.lastObservedTime`` and
``metadata.creationTimestamp`` (a correlated Event whose count was just bumped lives
on, as an etcd lease is renewed by the write). The delete carries the listed
``resourceVersion`` as precondition, so an Event updated meanwhile survives.
core/v1 and events.k8s.io/v1 Events are one store, so this covers both.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import datetime, timedelta

from kubegc.api.clock import parse_time
from kubegc.api.errors import StatusError, is_conflict, is_not_found
from kubegc.api.meta import name_of, namespace_of, resource_version_of
from kubegc.api.types import Obj
from kubegc.client.events import EVENTS
from kubegc.client.interface import DeleteOptions
from kubegc.client.paging import list_pages
from kubegc.component.config import EventTTLConfiguration
from kubegc.component.context import ControllerContext

log = logging.getLogger(__name__)

LIST_PAGE_SIZE = 500
MAX_SWEEP_PERIOD = 60.0


def sweep_period_for(ttl: float) -> float:
    """A tenth of the TTL, between 1 s and a minute: expiry is at most that late."""
    return min(MAX_SWEEP_PERIOD, max(1.0, ttl / 10))


def last_write_time(event: Obj) -> datetime | None:
    """When the Event was last written, as far as its fields tell; a field of the wrong
    type is no evidence (the server-set ``creationTimestamp`` still is), so an Event stored
    below the API's validation expires too."""
    series, meta = event.get("series"), event.get("metadata")
    series = series if isinstance(series, dict) else {}
    meta = meta if isinstance(meta, dict) else {}
    stamps = [event.get("lastTimestamp"), event.get("eventTime"),
              series.get("lastObservedTime"), meta.get("creationTimestamp")]
    parsed = []
    for stamp in stamps:
        if stamp:
            with contextlib.suppress(ValueError):
                parsed.append(parse_time(str(stamp)))
    return max(parsed) if parsed else None


def is_expired(event: Obj, *, now: datetime, ttl: float) -> bool:
    written = last_write_time(event)
    return written is not None and written + timedelta(seconds=ttl) <= now


class EventTTLController:
    """Deletes expired Events. ``sweep`` runs in the controller's one task."""

    name = "eventttl"
    component = "eventttl-controller"

    def __init__(self, ctx: ControllerContext[EventTTLConfiguration]) -> None:
        self.client, self.clock = ctx.client, ctx.clock
        self.ttl = float(ctx.options.event_ttl)
        self.period = sweep_period_for(self.ttl)
        self._busy = False
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def is_idle(self) -> bool:
        return not self._busy

    def ready(self) -> bool:
        return True

    async def _run(self) -> None:
        while True:
            await self.clock.sleep(self.period)
            self._busy = True
            try:
                await self.sweep()
            except Exception:
                log.exception("event expiry sweep failed")
            finally:
                self._busy = False

    async def sweep(self) -> int:
        """Delete every expired Event now; returns how many were deleted."""
        now = self.clock.now()
        expired: list[Obj] = []
        # collect first: deleting while paging could shift the pages
        async for page in list_pages(self.client, EVENTS, limit=LIST_PAGE_SIZE):
            expired += [e for e in page.get("items") or [] if is_expired(e, now=now, ttl=self.ttl)]
        deleted = 0
        for event in expired:
            deleted += await self._delete(event)
        return deleted

    async def _delete(self, event: Obj) -> bool:
        options = DeleteOptions(preconditions_resource_version=resource_version_of(event) or None)
        try:
            await self.client.delete(EVENTS, name_of(event), namespace=namespace_of(event),
                                     options=options)
        except StatusError as exc:
            if is_not_found(exc) or is_conflict(exc):
                return False
            raise
        return True
