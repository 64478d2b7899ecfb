"""Shared informers: one list+watch per resource feeding a cache and event handlers
(cf. client-go tools/cache/shared_informer.go, controller.go, delta_fifo.go).

Delivery semantics (as client-go's):
  * the first list gives ``on_add(obj, is_in_initial_list=True)`` for every object;
    ``has_synced()`` turns True once all of them were delivered;
  * watch ADDED/MODIFIED give ``on_add(obj, False)`` if the key is not cached, else
    ``on_update(old, new)``; DELETED gives ``on_delete(final_obj)``;
  * a relist (after a 410) gives ``on_update(old, new)`` for every listed object already
    cached, even if unchanged (resync semantics), ``on_add(obj, False)`` for new ones, and
    ``on_delete(DeletedFinalStateUnknown(key, last_known))`` for cached objects missing
    from the new list;
  * ``resync_period > 0`` re-delivers every cached object as ``on_update(obj, obj)``;
  * a handler added after objects are cached first gets ``on_add(obj, True)`` for each.

Handlers are plain synchronous callbacks run in the informer's task, in registration
order; they must be quick (usually: enqueue a key). An exception from a handler is
logged and does not stop delivery. Objects are shared with the cache: do not mutate.

``metadata_only=True`` stores PartialObjectMetadata-shaped objects (``apiVersion``,
``kind``, ``metadata`` without ``managedFields``), as the GC's metadata informers do; the
object keeps its own apiVersion/kind.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kubegc.api.clock import Clock
from kubegc.api.interning import SharedValues
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache.reflector import CachedList, Reflector
from kubegc.client.cache.store import DeletedFinalStateUnknown, Indexer
from kubegc.client.interface import Client

logger = logging.getLogger(__name__)

#: Objects delivered per event-loop turn during a (re)list, so one huge list does not
#: starve the loop; ``is_idle()`` is False between the chunks.
REPLACE_CHUNK = 500


class ResourceEventHandler(Protocol):
    """Receives an informer's notifications (see the module docstring for when)."""

    @abstractmethod
    def on_add(self, obj: Obj, is_in_initial_list: bool) -> None: ...

    @abstractmethod
    def on_update(self, old: Obj, new: Obj) -> None: ...

    @abstractmethod
    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None: ...


@dataclass
class FuncHandler(ResourceEventHandler):
    """A handler from optional callables (cf. ``ResourceEventHandlerFuncs``)."""

    add: Callable[[Obj, bool], None] | None = None
    update: Callable[[Obj, Obj], None] | None = None
    delete: Callable[[Obj | DeletedFinalStateUnknown], None] | None = None

    def on_add(self, obj: Obj, is_in_initial_list: bool) -> None:
        if self.add is not None:
            self.add(obj, is_in_initial_list)

    def on_update(self, old: Obj, new: Obj) -> None:
        if self.update is not None:
            self.update(old, new)

    def on_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        if self.delete is not None:
            self.delete(obj)


#: the labels and ownerReferences metadata-only informers' objects share
_SHARED = SharedValues()


def to_partial_object_metadata(obj: Obj) -> Obj:
    """``apiVersion``, ``kind`` and ``metadata`` (without ``managedFields``) of ``obj``.

    The metadata is ``obj``'s own dict when it has no managedFields (objects are shared
    and never mutated, see the module docstring), else a copy without them: the rest of
    ``obj`` (its spec, data, status) is not kept alive by the partial object. The copy's
    labels, annotations and ownerReferences are an equal earlier object's when there is
    one (``SharedValues``: the pods of a ReplicaSet, the dependents of an owner repeat
    them)."""
    return _partial(obj, shared=True)


def deleted_partial_object_metadata(obj: Obj) -> Obj:
    """``to_partial_object_metadata`` of a DELETED event's object, which no cache keeps:
    without looking for equal earlier values (~3 µs less per deletion, issue 27)."""
    return _partial(obj, shared=False)


def _partial(obj: Obj, *, shared: bool) -> Obj:
    meta = obj.get("metadata") or {}
    if "managedFields" in meta:
        meta = {k: v for k, v in meta.items() if k != "managedFields"}
        if shared:
            meta = share_metadata(meta)
    return {"apiVersion": obj.get("apiVersion", ""), "kind": obj.get("kind", ""), "metadata": meta}


def share_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` (a metadata dict of the informers' own) with its labels, annotations and
    ownerReferences replaced by equal earlier ones (in place)."""
    for field in ("labels", "annotations"):
        value = meta.get(field)
        if value and type(value) is dict:
            meta[field] = _SHARED.flat_map(value)
    refs = meta.get("ownerReferences")
    if refs and type(refs) is list:
        meta["ownerReferences"] = _SHARED.owner_references(refs)
    return meta


class SharedInformer:
    """A cache of one resource kept current by a Reflector, with event handlers.

    Ownership: the informer's task (``run``) is the only writer of ``indexer``; handlers
    are called from it. ``add_event_handler`` may be called from any task at any time.
    """

    def __init__(
        self, client: Client, gvr: GroupVersionResource, *, clock: Clock, namespace: str = "",
        metadata_only: bool = False, label_selector: str = "", field_selector: str = "",
        resync_period: float = 0.0, initial: CachedList | None = None,
    ) -> None:
        """``initial``: what the first LIST would answer, known already (``snapshot``):
        the reflector starts from it and watches, instead of listing."""
        self.gvr = gvr
        self.clock = clock
        self.metadata_only = metadata_only
        self.resync_period = resync_period
        self._indexer = Indexer()
        self._handlers: list[ResourceEventHandler] = []
        self._synced = asyncio.Event()
        self._dispatching = False
        self._task: asyncio.Task[None] | None = None
        self.reflector = Reflector(
            client, gvr, _InformerStore(self), clock=clock, namespace=namespace,
            label_selector=label_selector, field_selector=field_selector,
            transform=to_partial_object_metadata if metadata_only else None,
            transform_deleted=deleted_partial_object_metadata if metadata_only else None,
            initial=initial,
        )

    @property
    def indexer(self) -> Indexer:
        return self._indexer

    def add_event_handler(self, handler: ResourceEventHandler) -> None:
        """Register ``handler``; it first gets ``on_add(obj, True)`` for every cached object."""
        self._handlers.append(handler)
        for obj in self._indexer.list():
            _call(handler.on_add, obj, True)

    def remove_event_handler(self, handler: ResourceEventHandler) -> None:
        with contextlib.suppress(ValueError):
            self._handlers.remove(handler)

    def has_synced(self) -> bool:
        """True once the first list was stored and delivered to the handlers."""
        return self._synced.is_set()

    async def wait_for_sync(self) -> None:
        await self._synced.wait()

    def last_sync_resource_version(self) -> str:
        return self.reflector.last_sync_resource_version()

    def is_idle(self) -> bool:
        """Not in the middle of delivering a (re)list. Events still buffered in the client's
        watch stream are not visible here."""
        return not self._dispatching

    def is_started(self) -> bool:
        return self._task is not None

    async def run(self) -> None:
        """List, watch and (if configured) resync until cancelled."""
        async with asyncio.TaskGroup() as group:
            group.create_task(self.reflector.run())
            if self.resync_period > 0:
                group.create_task(self._resync_loop())

    def start(self) -> None:
        """Run in a background task (no-op if already started). Needs a running loop."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self.run(), name=f"informer-{self.gvr}",
            )

    async def stop(self) -> None:
        """Cancel the background task and wait for it to end. The cache is kept."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _resync_loop(self) -> None:
        while True:
            await self.clock.sleep(self.resync_period)
            if self.has_synced():
                for obj in self._indexer.list():
                    self._distribute_update(obj, obj)

    # -- the Reflector's store: keep the indexer and notify handlers -----------------

    def _on_add_or_update(self, obj: Obj) -> None:
        old = self._indexer.get(obj)
        self._indexer.add(obj)
        if old is None:
            self._distribute_add(obj, False)
        else:
            self._distribute_update(old, obj)

    def _on_delete(self, obj: Obj) -> None:
        self._indexer.delete(obj)
        for handler in list(self._handlers):
            _call(handler.on_delete, obj)

    async def _on_replace(self, objs: list[Obj], resource_version: str) -> None:
        initial = not self.has_synced()
        self._dispatching = True
        try:
            listed: set[str] = set()
            indexer = self._indexer
            for i, obj in enumerate(objs):
                if i and i % REPLACE_CHUNK == 0:
                    await asyncio.sleep(0)
                key = indexer.key_of(obj)
                listed.add(key)
                old = indexer.get_by_key(key)
                indexer.add(obj, key=key)
                if old is None:
                    self._distribute_add(obj, initial)
                else:
                    self._distribute_update(old, obj)
            self._delete_unlisted(listed)
            self._indexer.resource_version = resource_version
            self._synced.set()
        finally:
            self._dispatching = False

    def _delete_unlisted(self, listed: set[str]) -> None:
        for key in [k for k in self._indexer.list_keys() if k not in listed]:
            last_known = self._indexer.get_by_key(key)
            self._indexer.delete_key(key)
            if last_known is not None:
                tombstone = DeletedFinalStateUnknown(key, last_known)
                for handler in list(self._handlers):
                    _call(handler.on_delete, tombstone)

    def _distribute_add(self, obj: Obj, is_in_initial_list: bool) -> None:
        for handler in list(self._handlers):
            _call(handler.on_add, obj, is_in_initial_list)

    def _distribute_update(self, old: Obj, new: Obj) -> None:
        for handler in list(self._handlers):
            _call(handler.on_update, old, new)


class _InformerStore:
    """Adapts a SharedInformer to the Reflector's store protocol."""

    def __init__(self, informer: SharedInformer) -> None:
        self._informer = informer

    def add(self, obj: Obj) -> None:
        self._informer._on_add_or_update(obj)

    def update(self, obj: Obj) -> None:
        self._informer._on_add_or_update(obj)

    def delete(self, obj: Obj) -> None:
        self._informer._on_delete(obj)

    async def replace(self, objs: list[Obj], resource_version: str) -> None:
        await self._informer._on_replace(objs, resource_version)


def _call(fn: Callable[..., None], *args: object) -> None:
    try:
        fn(*args)
    except Exception:  # utilruntime.HandleError: one bad handler must not stop delivery
        logger.exception("event handler %r failed", fn)


class SharedInformerFactory:
    """One shared ``SharedInformer`` per (resource, metadata_only) (cf. client-go
    ``SharedInformerFactory`` and the metadata informer factory the GC uses).

    Ownership: the controller manager creates, starts and stops informers; controllers
    ask ``for_resource`` and register handlers. Stopping an informer removes it, so a
    later ``for_resource`` for the same resource builds a fresh one (as the GC does when
    a resource disappears from discovery and comes back).
    """

    def __init__(
        self, client: Client, *, clock: Clock, namespace: str = "", resync_period: float = 0.0,
        initial: dict[GroupVersionResource, CachedList] | None = None,
    ) -> None:
        """``initial``: metadata-only informers' first LISTs, known already (``snapshot``;
        each used by the first informer of its resource)."""
        self.client = client
        self.clock = clock
        self.namespace = namespace
        self.resync_period = resync_period
        self._informers: dict[tuple[GroupVersionResource, bool, str], SharedInformer] = {}
        self._initial = dict(initial or {})

    def for_resource(
        self, gvr: GroupVersionResource, *, metadata_only: bool = False,
        field_selector: str = "",
    ) -> SharedInformer:
        """The shared informer of ``gvr``; with ``field_selector``, one of only the objects
        it selects (client-go's ``WithTweakListOptions``), shared by who asks the same."""
        key = (gvr, metadata_only, field_selector)
        informer = self._informers.get(key)
        if informer is None:
            informer = SharedInformer(
                self.client, gvr, clock=self.clock, namespace=self.namespace,
                metadata_only=metadata_only, resync_period=self.resync_period,
                field_selector=field_selector,
                initial=self._initial.pop(gvr, None)
                if metadata_only and not field_selector and not self.namespace else None,
            )
            self._informers[key] = informer
        return informer

    def cached_lists(self) -> dict[GroupVersionResource, CachedList]:
        """The caches of the synced metadata-only informers of whole resources, each at
        the resourceVersion of the last event it applied (``snapshot.write_caches``)."""
        return {gvr: CachedList(informer.indexer.list(), informer.last_sync_resource_version())
                for (gvr, metadata_only, selector), informer in self._informers.items()
                if metadata_only and not selector and not self.namespace
                and informer.has_synced() and informer.is_idle()  # not amid a relist
                and informer.last_sync_resource_version()}

    def start(self) -> None:
        """Start every informer not started yet. Needs a running event loop."""
        for informer in self._informers.values():
            informer.start()

    async def wait_for_cache_sync(self, timeout: float) -> bool:
        """Wait (``timeout`` seconds of the factory's clock) until every informer has
        synced; return whether they all did."""
        pending = [i for i in self._informers.values() if not i.has_synced()]
        if not pending:
            return True
        deadline = self.clock.monotonic() + timeout

        async def timer() -> None:  # measured from now, even if the task starts later
            await self.clock.sleep(deadline - self.clock.monotonic())

        waiters: set[asyncio.Future[Any]] = {
            asyncio.ensure_future(asyncio.gather(*(i.wait_for_sync() for i in pending))),
            asyncio.ensure_future(timer()),
        }
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for fut in waiters:
                fut.cancel()
        return all(i.has_synced() for i in pending)

    async def stop(self, gvr: GroupVersionResource | None = None) -> None:
        """Stop and forget the informers of ``gvr`` (every flavour), or all of them."""
        keys = [k for k in self._informers if gvr is None or k[0] == gvr]
        for key in keys:
            await self._informers.pop(key).stop()

    def informers(self) -> list[SharedInformer]:
        return list(self._informers.values())
