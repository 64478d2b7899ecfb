"""The queue-and-workers skeleton every workload controller shares.

Upstream's three-level worker shape: ``run_worker`` loops, ``process_next_work_item`` does
one get/done cycle and decides between forget, rate-limited requeue and a delayed requeue,
and the subclass's ``sync(key)`` holds the decision for one ``"namespace/name"`` key.

Lifecycle (``kubegc.component.Controller``): ``start()`` registers informer handlers
(the subclass's ``register_handlers``) and starts the event recorder and the workers; the
workers wait until every informer the controller reads has synced. ``stop()`` shuts the
queue down and cancels the workers. ``is_idle()`` is True when nothing is queued or being
processed and every event is written; keys waiting for a *delayed* requeue (a CronJob's
next schedule, a Deployment's progress deadline, a rate-limited retry) do not count, so
``settle()`` returns under a ``ManualClock`` that nobody advances.

Errors (upstream's ``handleErr``): see ``kubegc.component.failures``; a failed sync is
retried with the queue's backoff, and an object the controller cannot understand gets a
Warning event and waits for the backoff until it changes. Handlers queue keys through
``enqueue`` / ``enqueue_key`` so that they respect that wait.

Concurrency: asyncio, one loop. Handlers run in informer tasks and only enqueue keys;
workers are the only writers of a controller's expectations besides those handlers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from abc import ABC, abstractmethod
from typing import Any, Protocol

from kubegc.api.clock import Clock
from kubegc.api.errors import StatusError
from kubegc.api.types import Obj
from kubegc.client.cache import (
    DeletedFinalStateUnknown,
    SharedInformer,
    deletion_handling_meta_namespace_key,
)
from kubegc.client.events import EventRecorder
from kubegc.client.interface import Client
from kubegc.client.workqueue import RateLimitingQueue
from kubegc.component.context import ControllerContext
from kubegc.component.failures import FailedSyncs
from kubegc.component.pending import Pending, of_queue

log = logging.getLogger(__name__)

class ControllerView(Protocol):
    """What the helper modules of a controller read of it (upstream's methods of that
    controller, split into modules that must not import it back): its context's client,
    clock and recorder. Extended by each controller's own view."""

    @property
    def client(self) -> Client: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def recorder(self) -> EventRecorder: ...


class BaseController(ABC):
    """A work queue of object keys, ``workers`` worker tasks and an event recorder.

    Ownership: ``queue`` is fed by informer handlers and drained by the workers; the
    recorder (the context's) writes events under the controller's upstream component name.
    """

    name: str = ""
    #: the upstream component its events are recorded under (the context's ``component``)
    component: str = ""

    def __init__(self, ctx: ControllerContext[Any], *, workers: int = 5) -> None:
        self.client = ctx.client
        self.clock = ctx.clock
        self.informer_factory = ctx.informer_factory
        self.recorder = ctx.recorder
        self.queue: RateLimitingQueue[str] = RateLimitingQueue(name=self.name, clock=ctx.clock)
        self.workers = workers
        self.synced_informers: list[SharedInformer] = []
        #: the informer of the objects the keys name (a failed sync is recorded on them)
        self.primary_informer: SharedInformer | None = None
        self.failures = FailedSyncs(self.name, self.queue, lookup=self._primary,
                                    recorder=lambda _: self.recorder,
                                    expected=self.expected_errors)
        self._tasks: list[asyncio.Task[None]] = []
        self._synced = False

    # -- lifecycle ---------------------------------------------------------------------

    @abstractmethod
    def register_handlers(self) -> None:
        """Add informer event handlers (called once by ``start``)."""

    async def start(self) -> None:
        self.register_handlers()
        self.recorder.start()
        loop = asyncio.get_running_loop()
        for i in range(self.workers):
            self._tasks.append(loop.create_task(self.run_worker(), name=f"{self.name}-{i}"))

    async def stop(self) -> None:
        self.queue.shut_down()
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.recorder.stop()

    def is_idle(self) -> bool:
        return (len(self.queue) == 0 and self.queue.processing_count() == 0
                and self.recorder.is_idle())

    def pending(self) -> Pending:
        """What keeps it from being idle: keys queued or in hand (those whose last sync
        failed with their error) and events to write."""
        return of_queue(self.name, self.queue, self.failures.errors,
                        other=() if self.recorder.is_idle() else ("events to write",))

    def ready(self) -> bool:
        return self._synced

    async def wait_for_cache_sync(self) -> None:
        for informer in self.synced_informers:
            await informer.wait_for_sync()
        self._synced = True

    # -- the three levels ----------------------------------------------------------------

    async def run_worker(self) -> None:
        await self.wait_for_cache_sync()
        while await self.process_next_work_item():
            pass

    async def process_next_work_item(self) -> bool:
        key, shutdown = await self.queue.get()
        if shutdown:
            return False
        try:
            requeue_after = await self.sync(key)
        except asyncio.CancelledError:
            self.queue.done(key)
            raise
        except Exception as err:  # handleErr: log, maybe record, retry later
            self.handle_err(err, key)
        else:
            self.queue.forget(key)
            self.failures.succeeded(key)
            if requeue_after is not None:
                self.queue.add_after(key, requeue_after)
        self.queue.done(key)
        return True

    @abstractmethod
    async def sync(self, key: str) -> float | None:
        """Reconcile the object ``key``; return seconds until it must be synced again
        (``None``: only when something changes). Raise to retry with backoff."""

    #: errors that are part of normal operation (retried quietly, logged at info)
    expected_errors: tuple[type[Exception], ...] = (StatusError,)

    def handle_err(self, err: Exception, key: str) -> None:
        """Retry ``key`` with the queue's backoff; a failure not the API's is recorded on
        the object (``FailedSyncs.failed``)."""
        self.failures.failed(err, key)

    def _primary(self, key: str) -> Obj | None:
        informer = self.primary_informer
        return informer.indexer.get_by_key(key) if informer is not None else None

    # -- enqueueing ------------------------------------------------------------------------

    def enqueue(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        self.enqueue_key(deletion_handling_meta_namespace_key(obj))

    def enqueue_key(self, key: str) -> None:
        """Queue ``key`` now, unless it waits for the backoff after failing on its object
        as it still is (``FailedSyncs.add``)."""
        self.failures.add(key)

    def enqueue_after(self, obj: Obj, delay: float) -> None:
        self.queue.add_after(deletion_handling_meta_namespace_key(obj), delay)

    def enqueue_rate_limited(self, obj: Obj) -> None:
        self.queue.add_rate_limited(deletion_handling_meta_namespace_key(obj))


def tombstone_object(obj: Obj | DeletedFinalStateUnknown) -> Obj:
    """The object of a delete notification, unwrapping a tombstone."""
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
