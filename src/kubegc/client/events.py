"""Record core/v1 Events about objects (cf. client-go tools/record event.go, events_cache.go).

``EventRecorder.event(obj, type, reason, message)`` never blocks: it stamps the event
with the clock's time and queues it; one background task writes queued events in order.

Written Events look like client-go's: name ``"<involved name>.<hex nanoseconds>"`` (16
hex digits), the involved object's namespace (``"default"`` for cluster-scoped objects),
``involvedObject`` {kind, namespace, name, uid, apiVersion, resourceVersion}, ``source``
{component, host}, ``firstTimestamp``/``lastTimestamp``, ``count``, ``type``, ``reason``,
``message``, ``reportingComponent``, ``reportingInstance``.

Correlation (client-go's ``eventLogger``): an event equal to one already recorded (same
source, involved object, type, reason and message) within ``DEDUP_WINDOW`` seconds of its
last occurrence is not created again: the existing Event gets ``count + 1`` and a new
``lastTimestamp`` by a JSON merge patch; if that Event is gone (404) it is re-created.
Not ported: the aggregator ("combined from similar events") and the spam filter.

Failures: an API error (``StatusError``) drops the event, as upstream; any other error is
retried up to ``MAX_TRIES`` times, ``RETRY_INTERVAL`` clock-seconds apart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict, deque
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kubegc.api.clock import Clock, format_time
from kubegc.api.errors import StatusError, is_not_found
from kubegc.api.meta import ObjectReference
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import Client, PatchType

logger = logging.getLogger(__name__)

EVENTS = GroupVersionResource("", "v1", "events")
EVENT_TYPE_NORMAL = "Normal"
EVENT_TYPE_WARNING = "Warning"
DEDUP_WINDOW = 600.0  # seconds; client-go's defaultAggregateIntervalInSeconds (10 min)
MAX_LRU_ENTRIES = 4096  # client-go's maxLruCacheEntries
MAX_TRIES = 12  # client-go's maxTriesPerEvent
RETRY_INTERVAL = 10.0  # seconds; client-go's defaultSleepDuration


@dataclass(slots=True)
class _Observation:
    """What the correlator remembers of one recorded event (cf. ``eventLog``)."""

    name: str
    count: int
    first_timestamp: str
    last_seen: datetime


@dataclass(frozen=True, slots=True)
class _Pending:
    key: tuple[str, ...]
    event: Obj
    at: datetime


class EventRecorder:
    """Queues events and writes them in the background.

    Ownership: any task calls ``event``; the writer task (``start``) is the only reader of
    the queue and the only user of the correlation cache.
    """

    _last_nanos = 0  # shared by all recorders; see _make_event

    def __init__(self, client: Client, *, component: str, clock: Clock, host: str = "") -> None:
        self.client = client
        self.component = component
        self.host = host
        self.clock = clock
        self._pending: deque[_Pending] = deque()
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._cache: OrderedDict[tuple[str, ...], _Observation] = OrderedDict()
        self._task: asyncio.Task[None] | None = None
        self._stopped = False

    def event(self, obj: Obj | ObjectReference, type: str, reason: str, message: str) -> None:
        """Queue an event about ``obj`` (an object or an ``ObjectReference``).

        ``type`` must be ``Normal`` or ``Warning`` (others are logged and dropped, as
        upstream). Starts the writer if a loop is running and ``stop`` was not called.
        """
        if type not in (EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING):
            logger.error("unsupported event type: %r", type)
            return
        if self._stopped:
            logger.warning("event recorder stopped, dropping event %s: %s", reason, message)
            return
        involved = _involved_object(obj)
        now = self.clock.now()
        event = self._make_event(involved, now, type, reason, message)
        key = (self.component, self.host, involved.get("kind", ""),
               involved.get("namespace", ""), involved.get("name", ""), involved.get("uid", ""),
               involved.get("apiVersion", ""), type, reason, message)
        self._pending.append(_Pending(key, event, now))
        self._idle.clear()
        self._wakeup.set()
        with contextlib.suppress(RuntimeError):  # no running loop: start() will do it
            self.start()

    async def flush(self) -> None:
        """Wait until every queued event was written (or given up on)."""
        if self._pending and self._task is None:
            self.start()
        await self._idle.wait()

    def is_idle(self) -> bool:
        """Nothing queued and nothing being written (for ``settle()``)."""
        return self._idle.is_set()

    def start(self) -> None:
        """Start the writer task (no-op if running). Needs a running event loop."""
        if self._task is None and not self._stopped:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name=f"event-recorder-{self.component}",
            )

    async def stop(self) -> None:
        """Stop the writer. Events still queued are dropped: ``flush`` first to keep them."""
        self._stopped = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._pending.clear()
        self._idle.set()

    async def _run(self) -> None:
        while True:
            while not self._pending:
                self._idle.set()
                self._wakeup.clear()
                await self._wakeup.wait()
            item = self._pending.popleft()
            try:
                await self._record_to_sink(item)
            except Exception:  # HandleError: one bad event must not stop the writer
                logger.exception("unable to write event %s", item.event["metadata"]["name"])

    def _make_event(
        self, involved: dict[str, str], now: datetime, type: str, reason: str, message: str,
    ) -> Obj:
        nanos = int(now.timestamp()) * 1_000_000_000 + now.microsecond * 1000
        # Unique names even if the clock stands still, across every recorder of the process
        # (several controllers record about the same pod in the same instant).
        nanos = max(nanos, EventRecorder._last_nanos + 1)
        EventRecorder._last_nanos = nanos
        timestamp = format_time(now)
        source = {"component": self.component}
        if self.host:
            source["host"] = self.host
        return {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{involved.get('name', '')}.{nanos:016x}",
                         "namespace": involved.get("namespace") or "default"},
            "involvedObject": involved, "reason": reason, "message": message, "source": source,
            "firstTimestamp": timestamp, "lastTimestamp": timestamp, "count": 1, "type": type,
            "reportingComponent": self.component,
            **({"reportingInstance": self.host} if self.host else {}),
        }

    def _observe(self, item: _Pending) -> tuple[Obj, bool]:
        """Correlate: the event to write and whether it updates an existing Event."""
        event = dict(item.event)
        seen = self._cache.get(item.key)
        update = seen is not None and (item.at - seen.last_seen).total_seconds() <= DEDUP_WINDOW
        if seen is not None and update:
            event.update(count=seen.count + 1, firstTimestamp=seen.first_timestamp,
                         metadata={**event["metadata"], "name": seen.name})
        self._cache[item.key] = _Observation(
            event["metadata"]["name"], event["count"], event["firstTimestamp"], item.at,
        )
        self._cache.move_to_end(item.key)
        while len(self._cache) > MAX_LRU_ENTRIES:
            self._cache.popitem(last=False)
        return event, update

    async def _record_to_sink(self, item: _Pending) -> None:
        event, update = self._observe(item)
        namespace = event["metadata"]["namespace"]
        for attempt in range(1, MAX_TRIES + 1):
            try:
                if update:
                    patch: dict[str, Any] = {"count": event["count"],
                                             "lastTimestamp": event["lastTimestamp"],
                                             "message": event["message"]}
                    await self.client.patch(EVENTS, event["metadata"]["name"], patch,
                                            namespace=namespace, patch_type=PatchType.MERGE)
                else:
                    await self.client.create(EVENTS, event, namespace=namespace)
                return
            except StatusError as exc:
                if update and is_not_found(exc):  # the Event was deleted: create it again
                    update = False
                    continue
                # e.g. the namespace is terminating: expected, upstream logs it at debug level
                level = logging.DEBUG if exc.code in (403, 404, 409) else logging.ERROR
                logger.log(level, "server rejected event %s: %s", event["metadata"]["name"], exc)
                return
            except Exception as exc:
                logger.warning("unable to write event (attempt %d): %s", attempt, exc)
                if attempt < MAX_TRIES:
                    await self.clock.sleep(RETRY_INTERVAL)
        logger.error("unable to write event %s, giving up", event["metadata"]["name"])


def _involved_object(obj: Obj | ObjectReference) -> dict[str, str]:
    """The ``involvedObject`` reference (cf. ``reference.GetReference``); empty fields out."""
    if isinstance(obj, ObjectReference):
        ref = {"kind": obj.kind, "namespace": obj.namespace, "name": obj.name,
               "uid": obj.uid, "apiVersion": obj.api_version}
    else:
        meta = obj.get("metadata") or {}
        ref = {"kind": str(obj.get("kind") or ""), "namespace": str(meta.get("namespace") or ""),
               "name": str(meta.get("name") or ""), "uid": str(meta.get("uid") or ""),
               "apiVersion": str(obj.get("apiVersion") or ""),
               "resourceVersion": str(meta.get("resourceVersion") or "")}
    return {k: v for k, v in ref.items() if v}
