"""Durable "why was this deleted": the GC's decisions as ``kubegc.io/v1 DeletionRecord``
objects, written through the API and pruned after a TTL (default 7 days — far longer than
the one hour an Event lives).

A record is cluster-scoped (it must outlive the namespace of the object it explains) and
labelled with the object's uid, namespace, kind and name so that ``kubegc why`` — or
``kubectl get deletionrecords -l kubegc.io/object-uid=<uid>`` — finds it on any kubegc.

Writes are queued and done by one task: ``record`` never blocks the GC, and a failing
write is logged and retried a few times, never raised into the GC.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections import OrderedDict
from typing import Any

from kubegc.api.clock import Clock, format_time, parse_time
from kubegc.api.errors import StatusError, is_not_found
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import Client, ListOptions
from kubegc.controllers.garbagecollector.records import DecisionSink, DeletionRecord

log = logging.getLogger(__name__)

DELETION_RECORDS = GroupVersionResource("kubegc.io", "v1", "deletionrecords")
LABEL_UID = "kubegc.io/object-uid"
LABEL_NAMESPACE = "kubegc.io/object-namespace"
LABEL_KIND = "kubegc.io/object-kind"
LABEL_NAME = "kubegc.io/object-name"
LABEL_ACTION = "kubegc.io/action"
LABEL_REASON = "kubegc.io/reason"
#: How often expired records are pruned.
PRUNE_PERIOD = 300.0
_WRITE_ATTEMPTS = 5
#: A repeated decision about the same object within this many seconds is one record.
DUPLICATE_WINDOW = 60.0
_RECENT_LIMIT = 10_000


def label_value(text: str) -> str:
    """A label-safe form of ``text`` (names can be longer than a label value may be)."""
    if len(text) <= 63:
        return text
    return text[:52] + "-" + hashlib.sha256(text.encode()).hexdigest()[:10]


def to_object(rec: DeletionRecord, seq: int) -> Obj:
    ref = rec.object
    labels = {LABEL_UID: ref.uid, LABEL_KIND: label_value(ref.kind),
              LABEL_NAME: label_value(ref.name), LABEL_ACTION: rec.action.value,
              LABEL_REASON: rec.reason.value}
    if ref.namespace:
        labels[LABEL_NAMESPACE] = ref.namespace
    body: dict[str, Any] = {
        "apiVersion": "kubegc.io/v1", "kind": "DeletionRecord",
        "metadata": {"name": f"{ref.uid or 'unknown'}.{rec.action.value}.{seq:x}",
                     "labels": labels},
        "time": format_time(rec.time),
        "action": rec.action.value,
        "reason": rec.reason.value,
        "message": rec.message,
        "object": {"apiVersion": ref.api_version, "kind": ref.kind, "namespace": ref.namespace,
                   "name": ref.name, "uid": ref.uid},
        "owners": [{"apiVersion": o.api_version, "kind": o.kind, "name": o.name, "uid": o.uid,
                    "classification": o.classification.value, "detail": o.detail}
                   for o in rec.owners],
    }
    if rec.propagation_policy:
        body["propagationPolicy"] = rec.propagation_policy
    return body


class DeletionRecordSink(DecisionSink):
    """Queues records and writes them as DeletionRecord objects; prunes expired ones."""

    def __init__(self, client: Client, *, clock: Clock, ttl: float = 7 * 24 * 3600.0) -> None:
        self.client = client
        self.clock = clock
        self.ttl = ttl
        self._queue: asyncio.Queue[DeletionRecord] = asyncio.Queue()
        self._busy = 0
        self._seq = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._recent: OrderedDict[tuple[str, str, str], float] = OrderedDict()

    def record(self, rec: DeletionRecord) -> None:
        # The GC may repeat a decision (a second DELETE of a dependent its informer has not
        # yet seen terminating); one record per decision is what "why" needs.
        key = (rec.object.uid, rec.action.value, rec.reason.value)
        now = self.clock.monotonic()
        seen = self._recent.get(key)
        if seen is not None and now - seen < DUPLICATE_WINDOW:
            return
        self._recent[key] = now
        if len(self._recent) > _RECENT_LIMIT:
            self._recent.popitem(last=False)
        self._queue.put_nowait(rec)

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._write_loop(), name="deletionrecords-writer"),
                       asyncio.create_task(self._prune_loop(), name="deletionrecords-pruner")]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    def is_idle(self) -> bool:
        return self._queue.empty() and self._busy == 0

    async def _write_loop(self) -> None:
        while True:
            rec = await self._queue.get()
            self._busy += 1
            try:
                self._seq += 1
                seq = int(self.clock.now().timestamp() * 1e6) * 1000 + self._seq % 1000
                await self._write(to_object(rec, seq))
            finally:
                self._busy -= 1

    async def _write(self, obj: Obj) -> None:
        for attempt in range(_WRITE_ATTEMPTS):
            try:
                await self.client.create(DELETION_RECORDS, obj)
                return
            except StatusError as e:
                if e.reason == "AlreadyExists":
                    return
                log.warning("writing deletion record %s failed (%s); attempt %d",
                            obj["metadata"]["name"], e, attempt + 1)
            await self.clock.sleep(0.1 * 2 ** attempt)

    async def _prune_loop(self) -> None:
        while True:
            try:
                await self.prune()
            except StatusError as e:
                log.warning("pruning deletion records failed: %s", e)
            await self.clock.sleep(PRUNE_PERIOD)

    async def prune(self) -> int:
        """Delete records older than the TTL; returns how many were deleted."""
        listed = await self.client.list(DELETION_RECORDS, options=ListOptions())
        now = self.clock.now()
        deleted = 0
        for item in listed.get("items") or []:
            stamp = item.get("time") or item["metadata"].get("creationTimestamp")
            if stamp and (now - parse_time(stamp)).total_seconds() > self.ttl:
                try:
                    await self.client.delete(DELETION_RECORDS, item["metadata"]["name"])
                    deleted += 1
                except StatusError as e:
                    if not is_not_found(e):
                        raise
        return deleted
