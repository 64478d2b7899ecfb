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
* errors (discovery failing for a group whose APIService is unavailable among them): with
  upstream's ``nsControllerRateLimiter``, 5 ms doubling up to 60 s.

Unlike upstream, a namespace is processed as soon as it is seen terminating (upstream
waits 5 s for HA API servers to converge; kubegc has one).
"""

from __future__ import annotations

from kubegc.api.clock import Clock
from kubegc.api.errors import StatusError
from kubegc.api.features import ORDERED_NAMESPACE_DELETION
from kubegc.api.meta import is_being_deleted, name_of, namespace_of
from kubegc.api.pod import PODS
from kubegc.api.types import Obj
from kubegc.client.cache import DeletedFinalStateUnknown, FuncHandler
from kubegc.client.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
)
from kubegc.component import objects
from kubegc.component.base_controller import BaseController
from kubegc.component.config import NamespaceControllerConfiguration
from kubegc.component.context import ControllerContext
from kubegc.component.deletions import DeletionSink
from kubegc.controllers.namespace.deletion.namespaced_resources_deleter import (
    NAMESPACES,
    NamespaceDeletionError,
    NamespacedResourcesDeleter,
    ResourcesRemainingError,
)

CONTENT_BACKOFF_BASE = 0.05


def ns_controller_rate_limiter(clock: Clock) -> MaxOfRateLimiter[str]:
    """Upstream's ``nsControllerRateLimiter``: a failed namespace (an unavailable
    aggregated API) is retried at least every minute, never longer: exponential from 5 ms
    to 60 s, and 10 qps with a burst of 100 overall."""
    return MaxOfRateLimiter(ItemExponentialFailureRateLimiter(0.005, 60.0),
                            BucketRateLimiter(10.0, 100, clock))


class NamespaceController(BaseController):
    """Ownership: one worker at a time per namespace (the queue guarantees it); the
    deleter is shared by the workers (only its discovery cache is state)."""

    name = "namespace"
    component = "namespace-controller"
    #: "content remains" is the normal state of a namespace being emptied
    expected_errors: tuple[type[Exception], ...] = (StatusError, NamespaceDeletionError)

    def __init__(self, ctx: ControllerContext[NamespaceControllerConfiguration], *,
                 deletions: DeletionSink | None = None) -> None:
        super().__init__(ctx, workers=ctx.options.concurrent_namespace_syncs)
        self.queue.rate_limiter = ns_controller_rate_limiter(ctx.clock)
        self.deleter = NamespacedResourcesDeleter(
            self.client, clock=self.clock, deletions=deletions, deleter=self.component,
            ordered=ctx.features.enabled(ORDERED_NAMESPACE_DELETION))
        self.namespaces = self.informer_factory.for_resource(NAMESPACES)
        self.pods = self.informer_factory.for_resource(PODS)
        self.synced_informers = [self.namespaces, self.pods]
        self.primary_informer = self.namespaces
        self.content_backoff: ItemExponentialFailureRateLimiter[str] = (
            ItemExponentialFailureRateLimiter(CONTENT_BACKOFF_BASE, 1000.0))

    def register_handlers(self) -> None:
        self.namespaces.add_event_handler(FuncHandler(
            add=lambda obj, _: self._enqueue_namespace(obj),
            update=lambda _, new: self._enqueue_namespace(new)))
        self.pods.add_event_handler(FuncHandler(delete=self._on_pod_delete))

    def on_catalog_change(self) -> None:
        self.deleter.invalidate()

    def _enqueue_namespace(self, namespace: Obj) -> None:
        if is_being_deleted(namespace):
            self.enqueue_key(name_of(namespace))

    def _on_pod_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        namespace = self.namespaces.indexer.get_by_key(namespace_of(pod))
        if namespace is not None and is_being_deleted(namespace):
            self.enqueue_key(namespace_of(pod))

    async def sync(self, key: str) -> float | None:
        """One deleter pass; the delay until the next one if content remains."""
        cached = self.namespaces.indexer.get_by_key(key)
        if cached is not None:
            objects.NAMESPACE.check(cached)
        try:
            await self.deleter.delete(key)
        except ResourcesRemainingError as remaining:
            upstream = remaining.estimate / 2 + 1
            if remaining.pods_remaining:
                return upstream  # a pod deletion requeues the namespace before that
            return min(self.content_backoff.when(key), upstream)
        self.content_backoff.forget(key)
        return None
