"""Durable "why was this deleted": the GC's decisions, and the DELETEs of the other deleting
controllers (pod GC, taint eviction: ``kubegc.component.deletions``, each record naming its
``deleter``, also the label ``kubegc.io/deleter``), as ``kubegc.io/v1 DeletionRecord``
objects, written through the API and pruned after a TTL (default 7 days — far longer than
the one hour an Event lives).

A record is cluster-scoped (it must outlive the namespace of the object it explains) and
labelled with the object's uid, namespace, kind and name so that ``kubegc why`` — or
``kubectl get deletionrecords -l kubegc.io/object-uid=<uid>`` — finds it on any kubegc.

Writes are queued, deferred and batched: ``record`` only queues (it never blocks the GC);
one task writes the queue ``WRITE_BATCH`` records at a time, created in one call
(``client.batch.create_all``: in process one write batch, one transaction; over HTTP
concurrent creates, which share the store's group commits), a record that failed then
written again on its own. Writing competes with the GC for the one event loop, so
while the GC is busy (the ``busy`` callable: items ready or in hand, not an item waiting
for a retry's backoff) it waits until the GC stops working, the oldest
queued record is ``MAX_DEFER`` seconds old, or ``MAX_PENDING`` records are queued. ``stop``
writes every queued record before it returns, so a clean shutdown loses none (a crash can
lose what was queued: at most ``MAX_DEFER`` seconds' or ``MAX_PENDING`` records' worth).
A failing write is logged and retried a few times, never raised into the GC.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from datetime import datetime
from typing import Any

from kubegc.api.clock import Clock, format_time, parse_time
from kubegc.api.deletionrecord import (
    DELETION_RECORDS,
    GC_DELETER,
    LABEL_ACTION,
    LABEL_DELETER,
    LABEL_KIND,
    LABEL_NAME,
    LABEL_NAMESPACE,
    LABEL_REASON,
    LABEL_UID,
    label_value,
    record_object,
)
from kubegc.api.errors import StatusError, is_gone, is_not_found
from kubegc.api.types import Obj
from kubegc.client.batch import create_all
from kubegc.client.interface import Client, DeleteOptions
from kubegc.client.paging import list_pages
from kubegc.component.config import GarbageCollectorControllerConfiguration
from kubegc.component.deletions import Deletion, DeletionSink
from kubegc.controllers.garbagecollector.records import DecisionSink, DeletionRecord

log = logging.getLogger(__name__)

__all__ = ["DELETION_RECORDS", "GC_DELETER", "LABEL_ACTION", "LABEL_DELETER", "LABEL_KIND",
           "LABEL_NAME", "LABEL_NAMESPACE",
           "LABEL_REASON", "LABEL_UID", "DeletionRecordSink", "deletion_to_object", "label_value",
           "to_object"]
#: How often expired records are pruned.
PRUNE_PERIOD = 300.0
#: Records listed at once when pruning.
PRUNE_PAGE = 500
_WRITE_ATTEMPTS = 5
#: A repeated decision about the same object within this many seconds is one record.
DUPLICATE_WINDOW = 60.0
_RECENT_LIMIT = 10_000
#: Records created concurrently, hence in one group commit of a SQLite store.
WRITE_BATCH = 500
#: Longest a record is held back (real seconds) while the GC is busy.
MAX_DEFER = 30.0
#: Most records held back while the GC is busy (~0.7 KB each: ~35 MB at most). A cascade
#: of more dependents writes the excess as it goes.
MAX_PENDING = 50_000
#: How often a held-back writer looks whether the GC went idle (real seconds).
DEFER_POLL = 0.02
#: Longest ``stop`` waits (real seconds) for the API to take the queued records.
STOP_TIMEOUT = 60.0


def to_object(rec: DeletionRecord, seq: int) -> Obj:
    """The DeletionRecord object for ``rec``, the ``seq``-th record (names are unique)."""
    return _object_of(_queued(rec, seq))


#: A queued record: ``(queued_at, seq, time, action, apiVersion, kind, name, uid,
#: namespace, reason, message, propagationPolicy, owners, (deleter, node, taint,
#: toleration))``, owners as tuples of ``(apiVersion, kind, name, uid, classification,
#: detail)``. Plain tuples of strings and
#: numbers, because the cyclic GC stops tracking those at their first collection: the
#: thousands queued during a cascade would otherwise be rescanned by every collection and
#: bring full ones forward (a DeletionRecord, a dataclass, stays tracked for life).
_Queued = tuple[Any, ...]


def _queued(rec: DeletionRecord, seq: int) -> _Queued:
    ref = rec.object
    owners = tuple((o.api_version, o.kind, o.name, o.uid, o.classification.value, o.detail)
                   for o in rec.owners)
    return (time.monotonic(), seq, rec.time, rec.action.value, ref.api_version, ref.kind,
            ref.name, ref.uid, ref.namespace, rec.reason.value, rec.message,
            rec.propagation_policy, owners, (GC_DELETER, "", "", ""))


def _queued_deletion(d: Deletion, seq: int) -> _Queued:
    ref = d.object
    return (time.monotonic(), seq, d.time, "delete", ref.api_version, ref.kind, ref.name,
            ref.uid, ref.namespace, d.reason, d.message, d.propagation_policy or None, (),
            (d.deleter, d.node, d.taint, d.toleration))


def deletion_to_object(d: Deletion, seq: int) -> Obj:
    """The DeletionRecord object for another controller's deletion ``d``."""
    return _object_of(_queued_deletion(d, seq))


def _object_of(q: _Queued) -> Obj:
    (_, seq, when, action, api_version, kind, name, uid, namespace, reason, message, policy,
     owners, (deleter, node, taint, toleration)) = q
    return record_object(
        name=f"{uid or 'unknown'}.{action}.{seq:x}", time=format_time(when), action=action,
        reason=reason, message=message,
        about={"apiVersion": api_version, "kind": kind, "namespace": namespace,
               "name": name, "uid": uid},
        owners=[{"apiVersion": a, "kind": k, "name": n, "uid": u, "classification": c,
                 "detail": d} for a, k, n, u, c, d in owners],
        propagationPolicy=policy, deleter=deleter, node=node, taint=taint,
        toleration=toleration)


def _never_busy() -> bool:
    return False


class DeletionRecordSink(DecisionSink, DeletionSink):
    """Queues records and writes them as DeletionRecord objects; prunes expired ones
    (``prune``: the garbage collector's sink prunes every deleter's records, the other
    controllers' sinks only write).

    Ownership: ``record`` (the GC, on the loop) appends to ``_pending``; the writer task
    alone pops from it. ``busy`` says whether the GC has work (default: never busy).
    """

    def __init__(
        self, client: Client, *, clock: Clock,
        ttl: float = GarbageCollectorControllerConfiguration.decision_ttl,
        busy: Callable[[], bool] = _never_busy, max_defer: float = MAX_DEFER,
        max_pending: int = MAX_PENDING, prune: bool = True,
    ) -> None:
        self.client = client
        self.clock = clock
        self.ttl = ttl
        self.max_defer = max_defer
        self.max_pending = max_pending
        self.busy = busy
        self.prunes = prune
        self._pending: deque[_Queued] = deque()
        self._writing = 0
        self._wakeup = asyncio.Event()
        self._stopping = False
        self._seq = 0
        self._writer: asyncio.Task[None] | None = None
        self._pruner: asyncio.Task[None] | None = None
        self._recent: OrderedDict[tuple[str, str, str], float] = OrderedDict()
        self.written = 0  # records the API has taken
        self.failed = 0  # records given up on after retries

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
        self._pending.append(_queued(rec, self._next_seq(rec.time)))
        self._wakeup.set()

    def record_deletion(self, deletion: Deletion) -> None:
        self._pending.append(_queued_deletion(deletion, self._next_seq(deletion.time)))
        self._wakeup.set()

    def _next_seq(self, when: datetime) -> int:
        self._seq += 1
        return int(when.timestamp() * 1e6) * 1000 + self._seq % 1000

    def pending(self) -> int:
        """Records queued or being written."""
        return len(self._pending) + self._writing

    def start(self) -> None:
        self._stopping = False
        self._writer = asyncio.create_task(self._write_loop(), name="deletionrecords-writer")
        if self.prunes:
            self._pruner = asyncio.create_task(self._prune_loop(),
                                               name="deletionrecords-pruner")

    async def stop(self) -> None:
        """Write every queued record (without holding back), then stop. Gives up after
        ``STOP_TIMEOUT`` seconds if the API does not take them, logging how many are lost."""
        self._stopping = True
        self._wakeup.set()
        if self.pending():
            log.info("writing %d queued deletion records before stopping", self.pending())
        writer, self._writer = self._writer, None
        if writer is None or writer.done():
            writer = asyncio.create_task(self._write_loop(), name="deletionrecords-flush")
        try:
            await asyncio.wait_for(asyncio.shield(writer), STOP_TIMEOUT)
        except TimeoutError:
            log.error("%d deletion records were not written before shutdown", self.pending())
        finally:
            for task in (writer, self._pruner):
                if task is not None:
                    task.cancel()
            await asyncio.gather(*(t for t in (writer, self._pruner) if t is not None),
                                 return_exceptions=True)
            self._pruner = None

    def is_idle(self) -> bool:
        return not self._pending and self._writing == 0

    async def _write_loop(self) -> None:
        """Until stopped and drained: wait for records, hold back while the GC is busy,
        write a batch."""
        while True:
            if not self._pending:
                if self._stopping:
                    return
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            await self._hold_back()
            await self._write_batch()

    async def _hold_back(self) -> None:
        while (not self._stopping and self._pending and self.busy()
               and len(self._pending) < self.max_pending
               and time.monotonic() - self._pending[0][0] < self.max_defer):
            # real time: the wait is about sharing the loop's CPU with the GC
            await asyncio.sleep(DEFER_POLL)

    async def _write_batch(self) -> None:
        """One batch: created together (``create_all``: one write batch in process), then
        each record that failed written again on its own, with retries."""
        batch = [self._pending.popleft() for _ in range(min(WRITE_BATCH, len(self._pending)))]
        self._writing += len(batch)
        try:
            again = await self._create_all(batch)
            done = await asyncio.gather(*(self._write(_object_of(q)) for q in again))
        finally:
            self._writing -= len(batch)
        self.written += len(batch) - len(again) + sum(done)
        self.failed += len(done) - sum(done)

    async def _create_all(self, batch: list[_Queued]) -> list[_Queued]:
        """The records of ``batch`` created in one call; those to write again."""
        try:
            outcomes = await create_all(self.client, DELETION_RECORDS,
                                        [_object_of(q) for q in batch])
        except Exception as e:  # never into the GC; each is tried again on its own
            log.warning("writing %d deletion records failed (%s); writing each", len(batch), e)
            return batch
        return [q for q, outcome in zip(batch, outcomes, strict=True)
                if outcome is not None and outcome.reason != "AlreadyExists"]

    async def _write(self, obj: Obj) -> bool:
        for attempt in range(_WRITE_ATTEMPTS):
            try:
                await self.client.create(DELETION_RECORDS, obj)
                return True
            except Exception as e:  # never into the GC; a later attempt may succeed
                if isinstance(e, StatusError) and e.reason == "AlreadyExists":
                    return True
                log.warning("writing deletion record %s failed (%s); attempt %d",
                            obj["metadata"]["name"], e, attempt + 1)
            if attempt + 1 < _WRITE_ATTEMPTS:
                await self.clock.sleep(0.1 * 2 ** attempt)
        log.error("deletion record %s lost after %d attempts", obj["metadata"]["name"],
                  _WRITE_ATTEMPTS)
        return False

    async def _prune_loop(self) -> None:
        while True:
            try:
                await self.prune()
            except StatusError as e:
                log.warning("pruning deletion records failed: %s", e)
            await self.clock.sleep(PRUNE_PERIOD)

    async def prune(self) -> int:
        """Delete records older than the TTL; returns how many were deleted.

        Lists in pages of ``PRUNE_PAGE`` (as the Event TTL controller does: after a
        million-object run there are over a million records, ~1 KB each decoded), keeping
        only the expired ones' names and uids, then deletes those (each with its uid as
        precondition). A continue token that expired meanwhile (410: the pages' revision
        was compacted) ends the listing for this round: what was found expired so far is
        deleted, the rest waits for the next period."""
        expired = await self._expired()
        deleted = 0
        for name, uid in expired:
            try:
                await self.client.delete(DELETION_RECORDS, name, options=DeleteOptions(
                    preconditions_uid=uid or None))
                deleted += 1
            except StatusError as e:
                if not is_not_found(e):
                    raise
        return deleted

    async def _expired(self) -> list[tuple[str, str]]:
        """The names and uids of the records older than the TTL, listed page by page."""
        now = self.clock.now()
        expired: list[tuple[str, str]] = []
        pages = 0
        try:  # collect first, then delete (as eventttl's sweep)
            async for page in list_pages(self.client, DELETION_RECORDS, limit=PRUNE_PAGE):
                pages += 1
                for item in page.get("items") or []:
                    meta = item["metadata"]
                    stamp = item.get("time") or meta.get("creationTimestamp")
                    if stamp and (now - parse_time(stamp)).total_seconds() > self.ttl:
                        expired.append((meta["name"], meta.get("uid") or ""))
        except StatusError as e:
            if not (pages and is_gone(e)):
                raise
            log.info("pruning deletion records: the listing expired (%s); the rest "
                     "waits for the next round", e)
        return expired
