"""The namespace controller: empties Terminating namespaces and releases them (cf.
pkg/controller/namespace/namespace_controller.go; the work of one pass is
``namespace_deleter.NamespacedResourcesDeleter``, the conditions
``namespace_conditions``).

A namespace is queued when it is seen with a ``deletionTimestamp``; ``concurrent_namespace_
syncs`` workers (upstream default 10) process different namespaces at once. A pass that
leaves content behind is repeated:

* pods still terminating: when one of the namespace's pods is deleted (pod informer), and
  at the latest after ``estimate / 2 + 1`` seconds as upstream;
* other content held by finalizers: after a backoff starting at ``CONTENT_BACKOFF_BASE``
  and doubling up to ``estimate / 2 + 1`` seconds (upstream waits that long at once);
* errors: with the queue's rate limiter.

Unlike upstream, a namespace is processed as soon as it is seen terminating (upstream
waits 5 s for HA API servers to converge; kubegc has one).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from kubegc.api.meta import is_being_deleted, name_of, namespace_of
from kubegc.api.types import Obj
from kubegc.client.cache import DeletedFinalStateUnknown, FuncHandler
from kubegc.client.workqueue import ItemExponentialFailureRateLimiter, RateLimitingQueue
from kubegc.controllers.namespace_deleter import (
    NAMESPACES,
    PODS,
    NamespacedResourcesDeleter,
    ResourcesRemainingError,
)

if TYPE_CHECKING:
    from kubegc.controllers.manager import ControllerManager

log = logging.getLogger(__name__)

CONTENT_BACKOFF_BASE = 0.05


class NamespaceController:
    """Ownership: one worker at a time per namespace (the queue guarantees it); the
    deleter is shared by the workers (only its discovery cache is state)."""

    name = "namespace"

    def __init__(self, manager: ControllerManager) -> None:
        self.client, self.clock = manager.client, manager.clock
        self.workers = manager.options.concurrent_namespace_syncs
        self.deleter = NamespacedResourcesDeleter(self.client, clock=self.clock)
        self.namespaces = manager.informers.for_resource(NAMESPACES)
        self.pods = manager.informers.for_resource(PODS)
        self.queue: RateLimitingQueue[str] = RateLimitingQueue(name="namespace",
                                                              clock=self.clock)
        self.content_backoff: ItemExponentialFailureRateLimiter[str] = (
            ItemExponentialFailureRateLimiter(CONTENT_BACKOFF_BASE, 1000.0))
        self._retrying: set[str] = set()
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        self.namespaces.add_event_handler(FuncHandler(
            add=lambda obj, _: self._enqueue_namespace(obj),
            update=lambda _, new: self._enqueue_namespace(new)))
        self.pods.add_event_handler(FuncHandler(delete=self._on_pod_delete))
        self._tasks.append(asyncio.ensure_future(self._run()))

    async def stop(self) -> None:
        self.queue.shut_down()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def is_idle(self) -> bool:
        """Nothing queued or being processed and no failed pass awaiting its retry;
        namespaces waiting for their content to go do not count."""
        return len(self.queue) == 0 and self.queue.processing_count() == 0 and not self._retrying

    def ready(self) -> bool:
        return True

    def on_catalog_change(self) -> None:
        self.deleter.invalidate()

    def _enqueue_namespace(self, namespace: Obj) -> None:
        if is_being_deleted(namespace):
            self.queue.add(name_of(namespace))

    def _on_pod_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        namespace = self.namespaces.indexer.get_by_key(namespace_of(pod))
        if namespace is not None and is_being_deleted(namespace):
            self.queue.add(namespace_of(pod))

    async def _run(self) -> None:
        await asyncio.gather(self.namespaces.wait_for_sync(), self.pods.wait_for_sync())
        for _ in range(self.workers):
            self._tasks.append(asyncio.ensure_future(self._run_worker()))

    async def _run_worker(self) -> None:
        while await self._process_next_work_item():
            pass

    async def _process_next_work_item(self) -> bool:
        key, shutdown = await self.queue.get()
        if shutdown:
            return False
        try:
            await self.deleter.delete(key)
        except ResourcesRemainingError as remaining:
            self._retrying.discard(key)
            self.queue.forget(key)
            self.queue.add_after(key, self._remaining_delay(key, remaining))
        except Exception as exc:
            log.error("deletion of namespace %s failed: %s", key, exc)
            self._retrying.add(key)
            self.queue.add_rate_limited(key)
        else:
            self._retrying.discard(key)
            self.queue.forget(key)
            self.content_backoff.forget(key)
        finally:
            self.queue.done(key)
        return True

    def _remaining_delay(self, key: str, remaining: ResourcesRemainingError) -> float:
        upstream = remaining.estimate / 2 + 1
        if remaining.pods_remaining:
            return upstream  # a pod deletion requeues the namespace before that
        return min(self.content_backoff.when(key), upstream)
