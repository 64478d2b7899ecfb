"""Leader election on a Lease (cf. client-go tools/leaderelection/leaderelection.go:
``LeaderElector``, ``Run``, ``acquire``, ``renew``, ``tryAcquireOrRenew``, ``release``).

As upstream, a candidate acts only on times it captured itself: the record's ``renewTime``
is written for people and tools, never compared with this host's clock. A candidate
remembers the record it last observed and *when it observed it change* (``observed_time``,
on the injected clock's monotonic time); the lock is free once no change was observed for
the record's ``leaseDurationSeconds``. So:

* the Lease is taken only when absent, expired on the observed clock, held by nobody
  (``holderIdentity`` empty, after a release), or already held by this identity;
* every write is a compare-and-swap (``LeaseLock.update`` carries the resourceVersion of
  the Lease read), so of two candidates racing for an expired Lease one gets a Conflict;
* ``acquireTime`` and ``leaseTransitions`` change only when the holder changes;
* a candidate retries every ``retry_period`` × (1 + up to ``JITTER_FACTOR``); the leader
  renews every ``retry_period`` and stops leading when a renewal has not succeeded within
  ``renew_deadline``, which is shorter than the lease, so it stops before another
  candidate may take over (``lease_duration`` − ``renew_deadline`` − ``retry_period`` is
  the time it has to stop its work: 3 s with the defaults).

Concurrency: one task runs ``run``; ``on_started_leading`` runs as a task beside the
renewals and is cancelled when leadership ends, before ``on_stopped_leading`` is awaited.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from kubegc.api.clock import Clock, format_micro_time
from kubegc.api.errors import StatusError, is_not_found
from kubegc.client.events import EVENT_TYPE_NORMAL, EventRecorder
from kubegc.client.leaderelection.resourcelock import LeaderElectionRecord, LeaseLock

log = logging.getLogger(__name__)

#: upstream's ``JitterFactor``: a candidate waits retry_period × (1 + [0, 1.2)) between tries
JITTER_FACTOR = 1.2


def check_timing(*, lease_duration: float, renew_deadline: float, retry_period: float) -> None:
    """``NewLeaderElector``'s checks, with its messages (``ValueError``)."""
    if lease_duration <= renew_deadline:
        raise ValueError("leaseDuration must be greater than renewDeadline")
    if renew_deadline <= JITTER_FACTOR * retry_period:
        raise ValueError("renewDeadline must be greater than retryPeriod*JitterFactor")
    if lease_duration <= 0:
        raise ValueError("leaseDuration must be greater than zero")
    if renew_deadline <= 0:
        raise ValueError("renewDeadline must be greater than zero")
    if retry_period <= 0:
        raise ValueError("retryPeriod must be greater than zero")


@dataclass(frozen=True)
class LeaderCallbacks:
    """``on_started_leading`` runs as a task while leading (cancelled when leadership
    ends); ``on_stopped_leading`` is awaited when ``run`` ends, whether or not it led;
    ``on_new_leader`` is told each newly observed holder (this one included)."""

    on_started_leading: Callable[[], Coroutine[Any, Any, None]]
    on_stopped_leading: Callable[[], Awaitable[None]]
    on_new_leader: Callable[[str], None] | None = None


class LeaderElector:
    """One candidate for ``lock``.

    Ownership: the task running ``run`` is the only writer of the observed record;
    ``is_leader`` and ``get_leader`` may be read from anywhere on the loop.
    """

    def __init__(self, lock: LeaseLock, *, clock: Clock, lease_duration: float,
                 renew_deadline: float, retry_period: float, callbacks: LeaderCallbacks,
                 release_on_cancel: bool = False, recorder: EventRecorder | None = None,
                 now: Callable[[], datetime] | None = None) -> None:
        """``clock`` times the election (sleeps, the observed time); ``now`` (default:
        the clock's) gives the ``acquireTime``/``renewTime`` written, which only people
        and tools read: a cluster whose clock runs scaled writes its own time there."""
        check_timing(lease_duration=lease_duration, renew_deadline=renew_deadline,
                     retry_period=retry_period)
        self.lock = lock
        self.clock = clock
        self.now = now or clock.now
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.callbacks = callbacks
        self.release_on_cancel = release_on_cancel
        self.recorder = recorder
        self.observed_record = LeaderElectionRecord()
        self._observed_raw = b""
        self._observed_time = 0.0
        self._reported_leader = ""
        #: set once the first try to acquire has been answered (either way)
        self.attempted = asyncio.Event()

    # -- what others read ------------------------------------------------------------------

    def is_leader(self) -> bool:
        return self.observed_record.holder_identity == self.lock.identity

    def get_leader(self) -> str:
        return self.observed_record.holder_identity

    # -- Run ---------------------------------------------------------------------------------

    async def run(self) -> None:
        """Acquire, lead, renew; returns once leadership is lost. Cancel it to stop: the
        leading task is cancelled and ``on_stopped_leading`` awaited first, then (with
        ``release_on_cancel``) the Lease is released, so that nothing the lease guards
        still runs when another candidate may take it."""
        leading: asyncio.Task[None] | None = None
        cancelled = False
        try:
            await self._acquire()
            leading = asyncio.create_task(self.callbacks.on_started_leading(),
                                          name=f"leading-{self.lock.name}")
            await self._renew()
        except asyncio.CancelledError:
            cancelled = True
            raise
        finally:
            if leading is not None:
                leading.cancel()
                for result in await asyncio.gather(leading, return_exceptions=True):
                    if isinstance(result, Exception):
                        log.error("leading %s failed", self.lock.describe(), exc_info=result)
            await self.callbacks.on_stopped_leading()
            if cancelled and self.release_on_cancel:
                await self.release()

    async def _acquire(self) -> None:
        log.info("attempting to acquire leader lease %s...", self.lock.describe())
        while True:
            succeeded = await self.try_acquire_or_renew()
            self._maybe_report_transition()
            self.attempted.set()
            if succeeded:
                self._record_event("became leader")
                log.info("successfully acquired lease %s", self.lock.describe())
                return
            await self.clock.sleep(self.retry_period * (1 + random.random() * JITTER_FACTOR))

    async def _renew(self) -> None:
        try:
            while await self._poll_renew():
                self._maybe_report_transition()
                await self.clock.sleep(self.retry_period)
            self._maybe_report_transition()
            log.warning("failed to renew lease %s within %gs: leader election lost",
                        self.lock.describe(), self.renew_deadline)
        finally:
            self._record_event("stopped leading")

    async def _poll_renew(self) -> bool:
        """Try at once, then every retry period, until one succeeds or ``renew_deadline``
        has passed (cf. ``wait.PollUntilContextTimeout``); each try is cut off at the
        deadline."""
        deadline = self.clock.monotonic() + self.renew_deadline
        while (remaining := deadline - self.clock.monotonic()) > 0:
            if await self._within(remaining, self.try_acquire_or_renew()):
                return True
            remaining = deadline - self.clock.monotonic()
            await self.clock.sleep(max(0.0, min(self.retry_period, remaining)))
        return False

    async def _within(self, seconds: float, attempt: Coroutine[Any, Any, bool]) -> bool:
        """``attempt``'s answer, or False once ``seconds`` have passed on the clock."""
        task = asyncio.ensure_future(attempt)
        timer = asyncio.ensure_future(self.clock.sleep(seconds))
        try:
            await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
            if not task.done():
                task.cancel()
            await asyncio.gather(task, timer, return_exceptions=True)
        return task.done() and not task.cancelled() and task.exception() is None and (
            task.result())

    # -- tryAcquireOrRenew -------------------------------------------------------------------

    async def try_acquire_or_renew(self) -> bool:
        """Acquire the lock if it is free, renew it if it is ours; True on success."""
        now = format_micro_time(self.now())
        record = LeaderElectionRecord(
            holder_identity=self.lock.identity, lease_duration_seconds=int(self.lease_duration),
            acquire_time=now, renew_time=now)
        # 1. fast path: the leader updates the Lease it last wrote, assuming nobody else did
        if self.is_leader() and self._is_lease_valid():
            old = self.observed_record
            mine = replace(record, acquire_time=old.acquire_time,
                           leader_transitions=old.leader_transitions)
            if await self._write(mine, "failed to update lock optimistically, falling back "
                                       "to slow path"):
                return True
        # 2. obtain or create the record
        try:
            old, raw = await self.lock.get()
        except StatusError as e:
            if not is_not_found(e):
                log.error("retrieving resource lock %s failed: %s", self.lock.describe(), e)
                return False
            return await self._write(record, "creating initial leader election record "
                                             "failed", create=True)
        except Exception as e:  # a transport failure: try again later
            log.error("retrieving resource lock %s failed: %s", self.lock.describe(), e)
            return False
        # 3. the record obtained: a change restarts the observed lease
        if raw != self._observed_raw:
            self._set_observed_record(old)
            self._observed_raw = raw
        if old.holder_identity and self._is_lease_valid() and not self.is_leader():
            log.debug("lock is held by %s and has not yet expired", old.holder_identity)
            return False
        # 4. take or renew it: the term (acquireTime, leaseTransitions) goes on if ours
        if self.is_leader():
            record = replace(record, acquire_time=old.acquire_time,
                             leader_transitions=old.leader_transitions)
        else:
            record = replace(record, leader_transitions=old.leader_transitions + 1)
        return await self._write(record, "failed to update lock")

    async def _write(self, record: LeaderElectionRecord, failure: str, *,
                     create: bool = False) -> bool:
        try:
            if create:
                await self.lock.create(record)
            else:
                await self.lock.update(record)
        except Exception as e:  # a Conflict, AlreadyExists or transport failure
            log.info("%s %s: %s", failure, self.lock.describe(), e)
            return False
        self._set_observed_record(record)
        return True

    async def release(self) -> bool:
        """Give the Lease up if held: no holder, a 1 s lease, the transitions kept (the
        next holder counts the hand-over)."""
        if not self.is_leader():
            return True
        now = format_micro_time(self.now())
        record = LeaderElectionRecord(
            leader_transitions=self.observed_record.leader_transitions,
            lease_duration_seconds=1, renew_time=now, acquire_time=now)
        if not await self._within(self.renew_deadline,
                                  self._write(record, "failed to release lock")):
            return False
        log.info("released lease %s", self.lock.describe())
        return True

    # -- bookkeeping -------------------------------------------------------------------------

    def _is_lease_valid(self) -> bool:
        expires = self._observed_time + self.observed_record.lease_duration_seconds
        return expires > self.clock.monotonic()

    def _set_observed_record(self, record: LeaderElectionRecord) -> None:
        self.observed_record = record
        self._observed_time = self.clock.monotonic()

    def _maybe_report_transition(self) -> None:
        holder = self.observed_record.holder_identity
        if holder == self._reported_leader:
            return
        self._reported_leader = holder
        if self.callbacks.on_new_leader is not None:
            self.callbacks.on_new_leader(holder)

    def _record_event(self, what: str) -> None:
        if self.recorder is not None and self.lock.lease is not None:
            self.recorder.event(self.lock.lease, EVENT_TYPE_NORMAL, "LeaderElection",
                                f"{self.lock.identity} {what}")
