"""Evictions scheduled for later (cf. pkg/controller/tainteviction/timed_workers.go
``TimedWorkerQueue``): one entry per pod key, fired on the injected clock.

``add_work`` does nothing for a key already present, as upstream; ``cancel_work`` removes
the key and says whether a pending eviction was cancelled. A fired eviction that succeeded
stays as a ``done`` entry, so that a later update of the same pod does not schedule it
again, until ``cancel_work`` forgets it (the pod is gone, or its node untainted).

Ownership: the controller's update worker adds and cancels; the eviction workers take
due keys from ``due`` (a DelayingQueue) and report ``finished``. One event loop, no lock.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubegc.api.clock import Clock
from kubegc.client.workqueue import DelayingQueue
from kubegc.controllers.tainteviction.decision import TaintEviction


@dataclass
class TimedWorker:
    """One scheduled eviction: created (monotonic) at ``created_at``, due at ``fire_at``."""

    created_at: float
    fire_at: float
    node: str
    eviction: TaintEviction
    done: bool = False


class TimedWorkerQueue:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.workers: dict[str, TimedWorker] = {}
        self.due: DelayingQueue[str] = DelayingQueue(name="taint_eviction", clock=clock)

    def add_work(self, key: str, worker: TimedWorker) -> None:
        if key in self.workers:
            return
        self.workers[key] = worker
        self.due.add_after(key, max(worker.fire_at - self.clock.monotonic(), 0.0))

    def cancel_work(self, key: str) -> bool:
        worker = self.workers.pop(key, None)
        return worker is not None and not worker.done

    def get_worker(self, key: str) -> TimedWorker | None:
        """The pending (not yet fired) eviction of ``key``."""
        worker = self.workers.get(key)
        return worker if worker is not None and not worker.done else None

    def take(self, key: str) -> TimedWorker | None:
        """The eviction of ``key`` if it is due now (a cancelled one, or one replaced by a
        later schedule, is not)."""
        worker = self.get_worker(key)
        if worker is None:
            return None
        wait = worker.fire_at - self.clock.monotonic()
        if wait > 1e-6:
            self.due.add_after(key, wait)
            return None
        return worker

    def finished(self, key: str, worker: TimedWorker, ok: bool) -> None:
        """After the eviction ran: kept as done on success (no second DELETE), forgotten
        on failure."""
        if self.workers.get(key) is not worker:
            return
        if ok:
            worker.done = True
        else:
            del self.workers[key]

    def pending(self) -> int:
        return sum(1 for w in self.workers.values() if not w.done)
