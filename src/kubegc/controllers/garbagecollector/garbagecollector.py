"""GarbageCollector: the workers that delete, orphan and unblock (cf. garbagecollector.go).

``GraphBuilder`` keeps the graph and fills ``attempt_to_delete`` / ``attempt_to_orphan``;
``workers`` tasks per queue decide against the API state (never only the graph) and write
through ``Actions`` (actions.py), which records every write that succeeds in the
``DecisionSink`` with its reason. One item of ``attempt_to_delete`` is decided and acted
on in attempt_to_delete.py; orphaning an owner's dependents is orphan.py. A periodic sync
(``sync_period``) and the explicit ``resync()`` rediscover resources and start/stop
monitors.

Ownership: workers read the graph and may enqueue virtual delete events; they never
write ``uid_to_node``. Everything a worker read before an ``await`` may be stale after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from kubegc.api.clock import Clock
from kubegc.api.errors import StatusError
from kubegc.api.meta import FINALIZER_ORPHAN_DEPENDENTS, ObjectReference
from kubegc.client.interface import Client
from kubegc.client.workqueue import RateLimitingQueue
from kubegc.component.config import GarbageCollectorControllerConfiguration
from kubegc.component.pending import LastErrors, Pending
from kubegc.controllers.garbagecollector import dump
from kubegc.controllers.garbagecollector import records as rec
from kubegc.controllers.garbagecollector.actions import Actions
from kubegc.controllers.garbagecollector.attempt_to_delete import AttemptToDelete, DeleteItemOutcome
from kubegc.controllers.garbagecollector.classify import ReferenceClassifier
from kubegc.controllers.garbagecollector.errors import (
    NamespacedOwnerOfClusterScopedObjectError,
    OrphanDependentsError,
    RESTMappingError,
)
from kubegc.controllers.garbagecollector.graph import Node
from kubegc.controllers.garbagecollector.graph_builder import GraphBuilder
from kubegc.controllers.garbagecollector.operations import Operations
from kubegc.controllers.garbagecollector.orphan import orphan_dependents
from kubegc.controllers.garbagecollector.owner_ref_warnings import EventRecorderLike
from kubegc.controllers.garbagecollector.resource_sync import ResourceSync, SyncResult
from kubegc.controllers.garbagecollector.resources import DEFAULT_IGNORED_RESOURCES, RESTMapper
from kubegc.controllers.garbagecollector.uid_cache import ReferenceCache

if TYPE_CHECKING:
    from kubegc.client.cache import SharedInformerFactory

log = logging.getLogger(__name__)

#: How often ``run`` checks whether the monitors have synced before starting workers.
SYNC_POLL_PERIOD = 0.01
#: Longest ``stop`` lets workers finish the items in hand (real seconds).
STOP_GRACE = 5.0


class WorkItemAction(enum.Enum):
    FORGET = "forget"
    REQUEUE = "requeue"


class GarbageCollector:
    """Deletes objects whose owners are gone, orphans and unblocks (cf. ``GarbageCollector``).

    Needs only a ``Client``, an informer factory, an event recorder and a clock.
    ``run()`` (or ``start()``/``stop()``) discovers resources, starts monitors, waits up
    to ``initial_sync_timeout`` (default: ``sync_period``; 0: do not wait) for them to
    sync, then runs ``workers`` delete workers and ``workers`` orphan workers. ``stop()``
    shuts the queues down: a stopped GC is not restarted (build a new one), and the shared
    informers are left running for their owner to stop.
    """

    def __init__(
        self, client: Client, *, informer_factory: SharedInformerFactory,
        recorder: EventRecorderLike, clock: Clock, decisions: rec.DecisionSink | None = None,
        workers: int = GarbageCollectorControllerConfiguration.concurrent_gc_syncs,
        sync_period: float = GarbageCollectorControllerConfiguration.gc_sync_period,
        initial_sync_timeout: float | None = None,
        ignored_resources: Iterable[tuple[str, str]] = DEFAULT_IGNORED_RESOURCES,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self._client = client
        self._clock = clock
        self.workers = workers
        self.sync_period = sync_period
        self.initial_sync_timeout = (
            sync_period if initial_sync_timeout is None else initial_sync_timeout)
        self.rest_mapper = RESTMapper()
        self.graph_builder = GraphBuilder(
            rest_mapper=self.rest_mapper, informer_factory=informer_factory, recorder=recorder,
            clock=clock, ignored_resources=ignored_resources,
        )
        self.operations = Operations(
            client, rest_mapper=self.rest_mapper, graph_builder=self.graph_builder, clock=clock,
        )
        sink = rec.NullDecisionSink() if decisions is None else decisions
        self.actions = Actions(self.operations, rec.DecisionRecorder(sink, now=clock.now))
        self._attempt_to_delete = AttemptToDelete(
            graph_builder=self.graph_builder, operations=self.operations,
            classifier=ReferenceClassifier(
                client, rest_mapper=self.rest_mapper, graph_builder=self.graph_builder),
            actions=self.actions,
        )
        self._resource_sync = ResourceSync(
            client, rest_mapper=self.rest_mapper, graph_builder=self.graph_builder,
        )
        self._busy = 0  # items in hand, both queues
        self._hands_free = asyncio.Event()  # set while _busy == 0
        self._hands_free.set()
        self._parked: set[Node] = set()  # requeued on RESTMappingError (see is_idle)
        #: the last error of each item retried after failing (for ``pending``)
        self.errors: LastErrors[Node] = LastErrors()
        self._task: asyncio.Task[None] | None = None

    # Queues live on the GraphBuilder (their producer); the GC is their consumer.
    @property
    def attempt_to_delete(self) -> RateLimitingQueue[Node]:
        return self.graph_builder.attempt_to_delete

    @property
    def attempt_to_orphan(self) -> RateLimitingQueue[Node]:
        return self.graph_builder.attempt_to_orphan

    @property
    def absent_owner_cache(self) -> ReferenceCache:
        return self.graph_builder.absent_owner_cache

    # ----------------------------------------------------------------- lifecycle
    def start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self.run(), name="garbagecollector")

    async def stop(self) -> None:
        """Shut the queues down, let the workers finish the items in hand (an API call
        that happened gets its decision record) for at most ``STOP_GRACE`` seconds, then
        cancel everything. Queued items are left: a new GC re-evaluates from its graph."""
        task, self._task = self._task, None
        self._shut_down_queues()
        if task is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._hands_free.wait(), STOP_GRACE)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def run(self) -> None:
        """Discover, monitor, then collect garbage until cancelled or stopped."""
        log.info("Starting controller garbagecollector")
        tasks: list[asyncio.Task[None]] = []
        loop = asyncio.get_running_loop()
        try:
            await self.resync()
            tasks.append(loop.create_task(self.graph_builder.run(), name="gc-graph-builder"))
            await self._wait_for_initial_sync()
            for i in range(self.workers):
                tasks += [
                    loop.create_task(self.run_attempt_to_delete_worker(), name=f"gc-delete-{i}"),
                    loop.create_task(self.run_attempt_to_orphan_worker(), name=f"gc-orphan-{i}"),
                ]
            tasks.append(loop.create_task(self._sync_loop(), name="gc-sync"))
            await asyncio.gather(*tasks)
        finally:
            self._shut_down_queues()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await self.graph_builder.monitors.stop()
            log.info("Shutting down controller garbagecollector")

    def _shut_down_queues(self) -> None:
        self.graph_builder.shut_down()
        self.attempt_to_delete.shut_down()
        self.attempt_to_orphan.shut_down()

    async def _wait_for_initial_sync(self) -> None:
        """Wait for the monitors, at most ``initial_sync_timeout`` of the clock's time or of
        real time, whichever ends first: informers make progress in real time, so a clock
        that tests hold still (ManualClock) must not keep the workers from starting."""
        loop = asyncio.get_running_loop()
        deadline = self._clock.monotonic() + self.initial_sync_timeout
        real_deadline = loop.time() + self.initial_sync_timeout
        while not self.is_synced():
            if self._clock.monotonic() >= deadline or loop.time() >= real_deadline:
                log.info("Garbage collector: not all resource monitors could be synced, "
                         "proceeding anyways: %s", self.graph_builder.monitors.unsynced())
                return
            await asyncio.sleep(SYNC_POLL_PERIOD)  # informer progress is real-time work

    async def _sync_loop(self) -> None:
        while True:
            await self._clock.sleep(self.sync_period)
            try:
                await self.resync()
            except Exception:
                log.exception("garbage collector sync failed")

    async def resync(self) -> SyncResult:
        """Rediscover resources; start monitors for new ones, stop vanished ones
        (cf. ``Sync``; see resource_sync.py). Discovery failures keep the monitors."""
        return await self._resource_sync.resync()

    def is_synced(self) -> bool:
        return self.graph_builder.is_synced()

    def is_idle(self) -> bool:
        """No queued, delayed or in-flight work anywhere in the GC (for ``settle()``).

        Items *parked* on a REST-mapping error do not count: they wait (with backoff) for
        discovery to learn their kind, which may never happen (upstream's integration tests
        TestCrossNamespaceReferences and TestClusterScopedOwners wait on it), and
        would otherwise keep the GC busy forever. Every other delayed retry counts.
        """
        return (self._busy == 0 and self.graph_builder.is_idle()
                and _queue_idle(self.attempt_to_delete, parked=len(self._parked))
                and _queue_idle(self.attempt_to_orphan, parked=0))

    def is_working(self) -> bool:
        """Items ready or in hand, or graph changes to process: the GC is using the loop
        (unlike ``is_idle``, items waiting for a retry's backoff do not count)."""
        return not (self._busy == 0 and self.graph_builder.is_idle()
                    and all(len(q) == 0 and q.processing_count() == 0
                            for q in (self.attempt_to_delete, self.attempt_to_orphan)))

    def pending(self) -> Pending:
        """What keeps the GC from being idle (``is_idle``): its items queued, in hand or
        waiting for a retry, each retrying one with its last error, and graph changes."""
        queues = (self.attempt_to_delete, self.attempt_to_orphan)
        items = sum(len(q) + q.processing_count() + q.waiting_count() for q in queues)
        other = []
        changes = self.graph_builder.graph_changes
        count = len(changes) + changes.processing_count() + changes.waiting_count()
        if count:
            other.append(f"{count} graph change{'' if count == 1 else 's'}")
        elif not self.graph_builder.is_idle():
            other.append("its informers delivering events")
        return Pending("garbagecollector", items=max(0, items - len(self._parked)),
                       retrying=self.errors.retrying(_item_key), other=tuple(other))

    def parked(self) -> list[ObjectReference]:
        """Identities retried only because their (owner) kind cannot be mapped."""
        return sorted((n.identity for n in self._parked), key=str)

    def graph_has_uid(self, uid: str) -> bool:
        return uid in self.graph_builder.uid_to_node

    def dot(self, uid: str | Sequence[str] | None = None) -> str:
        """The graph in DOT (cf. /debug/controllers/garbagecollector/graph[?uid=])."""
        uids = [uid] if isinstance(uid, str) else list(uid or [])
        return dump.to_dot(self.graph_builder.uid_to_node.snapshot(), uids=uids or None)

    # ----------------------------------------------------------------- delete workers
    async def run_attempt_to_delete_worker(self) -> None:
        while await self.process_attempt_to_delete_worker():
            # With an in-memory store no call ever suspends: yield so the watch cache,
            # informers and graph builder keep up while a large cascade is processed.
            await asyncio.sleep(0)

    async def process_attempt_to_delete_worker(self) -> bool:
        return await self._process_work_item(self.attempt_to_delete,
                                             self.attempt_to_delete_worker)

    async def _process_work_item(
        self, queue: RateLimitingQueue[Node],
        worker: Callable[[Node], Awaitable[WorkItemAction]],
    ) -> bool:
        """One get/done cycle on ``queue`` (cf. ``processAttemptToDeleteWorker`` and
        ``processAttemptToOrphanWorker``); False once the queue shuts down."""
        item, shutdown = await queue.get()
        if shutdown:
            return False
        if queue.shutting_down():  # stopping: take no new item
            queue.done(item)
            return False
        self._take_item()
        try:
            action = await worker(item)
            if action is WorkItemAction.FORGET:
                queue.forget(item)
                self.errors.succeeded(item)
            else:
                queue.add_rate_limited(item)
        finally:
            queue.done(item)
            self._release_item()
        return True

    def _take_item(self) -> None:
        self._busy += 1
        self._hands_free.clear()

    def _release_item(self) -> None:
        self._busy -= 1
        if self._busy == 0:
            self._hands_free.set()

    async def attempt_to_delete_worker(self, n: Node) -> WorkItemAction:
        self._parked.discard(n)
        if not n.is_observed():
            in_graph = self.graph_builder.uid_to_node.read(n.identity.uid)
            if in_graph is None or in_graph.is_observed():
                # requeued virtual node whose real object was observed or deleted meanwhile
                return WorkItemAction.FORGET
        try:
            outcome = await self.attempt_to_delete_item(n)
        except NamespacedOwnerOfClusterScopedObjectError:
            # will not resolve on retry (cf. namespacedOwnerOfClusterScopedObjectErr)
            return WorkItemAction.FORGET
        except RESTMappingError as exc:
            # an unserved or not yet discovered kind: retry with backoff, never delete
            log.debug("error syncing item %s: %s", n.identity, exc)
            self._parked.add(n)
            self.errors.succeeded(n)  # parked: not waited for (is_idle)
            return WorkItemAction.REQUEUE
        except Exception as exc:
            self.handle_error(exc, item=n)
            return WorkItemAction.REQUEUE
        if outcome is DeleteItemOutcome.ENQUEUED_VIRTUAL_DELETE:
            return WorkItemAction.FORGET
        if not n.is_observed():
            # keep polling until observed: a virtual node for an object added and removed
            # while a watch was re-established must not stay in the graph (issue 56121)
            return WorkItemAction.REQUEUE
        return WorkItemAction.FORGET

    def handle_error(self, exc: BaseException, *, item: Node) -> None:
        """Log an unexpected failure of one work item, with its traceback (the item is
        retried with backoff; cf. ``utilruntime.HandleError``). API errors (a Status from
        the server) are expected and logged without one. ``pending`` reports the error
        until the item succeeds."""
        self.errors.failed(item, exc)
        if isinstance(exc, StatusError | OrphanDependentsError):
            log.error("error syncing item %s: %s", item.identity, exc)
        else:
            log.error("error syncing item %s: %s", item.identity, exc, exc_info=exc)

    async def attempt_to_delete_item(self, item: Node) -> DeleteItemOutcome:
        """Decide ``item`` and act (attempt_to_delete.py; cf. ``attemptToDeleteItem``)."""
        return await self._attempt_to_delete.attempt_to_delete_item(item)

    async def process_deleting_dependents_item(self, item: Node) -> None:
        """cf. ``processDeletingDependentsItem`` (attempt_to_delete.py)."""
        await self._attempt_to_delete.process_deleting_dependents_item(item)

    # ----------------------------------------------------------------- orphan workers
    async def run_attempt_to_orphan_worker(self) -> None:
        while await self.process_attempt_to_orphan_worker():
            pass

    async def process_attempt_to_orphan_worker(self) -> bool:
        return await self._process_work_item(self.attempt_to_orphan,
                                             self.attempt_to_orphan_worker)

    async def attempt_to_orphan_worker(self, owner: Node) -> WorkItemAction:
        """Strip ``owner``'s reference from its dependents, then remove ``orphan``
        (orphan.py; cf. ``attemptToOrphanWorker``)."""
        try:
            await orphan_dependents(self.actions, owner.identity, owner.get_dependents())
            await self.actions.remove_finalizer(owner.identity, FINALIZER_ORPHAN_DEPENDENTS,
                                                rec.DecisionReason.DEPENDENTS_ORPHANED)
        except Exception as exc:
            self.handle_error(exc, item=owner)
            return WorkItemAction.REQUEUE
        return WorkItemAction.FORGET


def _item_key(node: Node) -> str:
    """``v1/ConfigMap ns/name`` (``v1/Node name`` when cluster-scoped)."""
    ref = node.identity
    where = f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name
    return f"{ref.api_version}/{ref.kind} {where}"


def _queue_idle(queue: RateLimitingQueue[Node], *, parked: int) -> bool:
    """Nothing ready, nothing in flight, and at most ``parked`` items waiting (parked items
    are always waiting, ready or in flight, so with the first two empty they are exactly
    the waiting ones)."""
    return len(queue) == 0 and queue.processing_count() == 0 and queue.waiting_count() <= parked
