"""The page's picture of the cluster, kept current by list+watch through the client.

``LiveObjects`` runs one ``SharedInformer`` per listable and watchable resource (the
preferred version of each, as ``read_inventory`` picks them, minus what it never reads),
so a change on the cluster reaches the page within one watch event. Listeners get the
changed objects in batches (``BATCH_DELAY``), keyed by ``object_id``: a deleted object
maps to None. Core Events are watched for the doctor (``OwnerRefInvalidNamespace``) but
are not objects of the graph, so they reach no listener.

``inventory(namespace)`` gives the tools an ``Inventory`` of what the informers hold,
read by ``read_inventory`` itself through a ``Client`` over the caches (``_CacheReader``),
so its rules (namespace scope, the cluster's clock, read errors) are the command line's.

A resource the client may not list is not watched: each resource is first listed once
(one object), and one that answers 403 is left out (``forbidden``) until a later
discovery finds it allowed — so a user's page shows what that user may list, and does
not wait on informers that could never sync. Such a resource is watched in each
namespace a page shows (``show_namespace``) where it may be listed: a user whose Role
is namespaced sees that namespace.
A dump never changes: its inventory is read from the dump as ``kubegc doctor --from``
reads it.

Ownership: the informers' tasks write the caches; ``_objects`` and the pending batch are
written by the informers' handlers only, on the event loop.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import logging
from collections.abc import Callable

from kubegc.api import errors
from kubegc.api.clock import Clock, RealClock
from kubegc.api.meta import namespace_of, uid_of
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache.shared_informer import FuncHandler, SharedInformer
from kubegc.client.cache.store import DeletedFinalStateUnknown
from kubegc.client.dump import DumpClient
from kubegc.client.interface import APIResource, Client, ListOptions
from kubegc.tools.inventory import SKIPPED, Inventory, preferred_resources, read_inventory
from kubegc.tools.ui.readonly import ReadOnlyClient
from kubegc.tools.ui.timeline import Observations
from kubegc.tools.wellformed import well_formed

log = logging.getLogger(__name__)

#: Watched for the doctor, not drawn.
NOT_DRAWN = frozenset({("", "events")})
#: Seconds changes are gathered before listeners get them (one batch per cascade burst).
BATCH_DELAY = 0.02
#: Seconds between two discoveries of the served resources (a CRD installed later).
REDISCOVER_EVERY = 30.0

#: (changed objects by id: the object, or None once deleted)
Listener = Callable[[dict[str, Obj | None]], None]


def object_id(obj: Obj) -> str:
    """The uid, or for an object without one (a hand-written dump) its kind and name."""
    uid = uid_of(obj)
    if uid:
        return uid
    meta = obj.get("metadata") or {}
    return f"{obj.get('apiVersion')}/{obj.get('kind')}/{meta.get('namespace') or ''}/" \
           f"{meta.get('name') or ''}"


def _key(res: APIResource) -> tuple[str, str]:
    return res.group, res.resource


#: an informer's key: (group, resource, namespace); namespace "" watches every namespace
InformerKey = tuple[str, str, str]


class LiveObjects:
    def __init__(self, client: Client, *, clock: Clock, source: str,
                 follow_cluster_clock: bool = True) -> None:
        #: a dump is read as itself (it refuses writes, and ``read_inventory`` reads dumps
        #: with their own rules); anything else only through a ``ReadOnlyClient``
        self.dump = client if isinstance(client, DumpClient) else None
        self.client: Client = self.dump or ReadOnlyClient(client)
        self.clock = clock  # ages are judged on it; the informers run on real time
        self.source = source
        self.follow_cluster_clock = follow_cluster_clock
        self.resources: list[APIResource] = []  # as discovery listed them
        self.generation = 0  # counts batches of changes
        self._informers: dict[InformerKey, SharedInformer] = {}
        #: resources the client may not list in every namespace, and the namespaces pages
        #: asked for (``show_namespace``), where they are watched when allowed there
        self._forbidden: dict[tuple[str, str], APIResource] = {}
        self._shown: set[str] = set()
        self._objects: dict[str, Obj] = {}
        self._in_namespace: dict[str, int] = {}  # drawn objects per namespace
        self._pending: dict[str, Obj | None] = {}
        self._flush: asyncio.TimerHandle | None = None
        self._listeners: list[Listener] = []
        self._rediscover: asyncio.Task[None] | None = None
        self._reader = _CacheReader(self)
        #: deletions seen: finalizers leaving, objects leaving (the page's timeline)
        self.observed = Observations()

    @property
    def forbidden(self) -> builtins.list[GroupVersionResource]:
        """The resources not watched in every namespace: listing them answered 403."""
        return [res.gvr for res in self._forbidden.values()]

    # -- life ------------------------------------------------------------------------

    async def start(self) -> None:
        await self._discover()
        if self.dump is None:
            self._rediscover = asyncio.create_task(self._rediscover_loop(),
                                                   name="ui-rediscover")

    async def stop(self) -> None:
        if self._rediscover is not None:
            self._rediscover.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._rediscover
        await asyncio.gather(*(i.stop() for i in self._informers.values()))
        if self._flush is not None:
            self._flush.cancel()

    async def wait_synced(self, timeout: float) -> list[str]:
        """Wait until every informer listed once, up to ``timeout`` s; the resources not
        yet listed (unavailable) are returned."""
        waiters = [asyncio.ensure_future(i.wait_for_sync())
                   for i in self._informers.values() if not i.has_synced()]
        if waiters:
            _, late = await asyncio.wait(waiters, timeout=timeout)
            for waiter in late:
                waiter.cancel()
        return sorted({str(i.gvr) for i in self._informers.values() if not i.has_synced()})

    async def show_namespace(self, namespace: str) -> None:
        """A page shows ``namespace``: watch there what may not be listed in every
        namespace but may be in this one (a user whose Role is namespaced)."""
        if self.dump is not None or not namespace or namespace in self._shown:
            return
        self._shown.add(namespace)
        await self._watch_in(namespace)

    async def _discover(self) -> None:
        self.resources = await self.client.discover()
        wanted = {_key(r): r for r in preferred_resources(self.resources)
                  if {"list", "watch"} <= set(r.verbs) and _key(r) not in SKIPPED}
        for gone in [k for k in self._informers if k[:2] not in wanted]:
            await self._drop(gone, deleted=True)
        self._forbidden = {k: r for k, r in self._forbidden.items() if k in wanted}
        new = [res for key, res in wanted.items() if (*key, "") not in self._informers]
        allowed = await asyncio.gather(*(self._may_list(res) for res in new))
        for res, ok in zip(new, allowed, strict=True):
            group_resource = _key(res)
            if not ok:
                self._forbidden[group_resource] = res
                continue
            self._forbidden.pop(group_resource, None)
            for scoped in [k for k in self._informers if k[:2] == group_resource]:
                await self._drop(scoped, deleted=False)  # the new informer has them all
            self._informers[(*group_resource, "")] = self._informer(res)
        for namespace in sorted(self._shown):
            await self._watch_in(namespace)

    async def _watch_in(self, namespace: str) -> None:
        new = [res for key, res in self._forbidden.items()
               if res.namespaced and (*key, namespace) not in self._informers]
        allowed = await asyncio.gather(*(self._may_list(res, namespace) for res in new))
        for res, ok in zip(new, allowed, strict=True):
            if ok:
                self._informers[(*_key(res), namespace)] = self._informer(res, namespace)

    async def _drop(self, key: InformerKey, *, deleted: bool) -> None:
        informer = self._informers.pop(key)
        await informer.stop()
        if deleted:
            for obj in informer.indexer.list():
                self._changed(obj, deleted=True, drawn=key[:2] not in NOT_DRAWN)

    async def _may_list(self, res: APIResource, namespace: str = "") -> bool:
        """Whether the client may list ``res`` (in ``namespace``; a dump may list what it
        holds)."""
        if self.dump is not None:
            return True
        try:
            await self.client.list(res.gvr, namespace=namespace, options=ListOptions(limit=1))
        except errors.StatusError as e:
            return e.code != 403
        except Exception:  # unreachable now: the informer retries it
            return True
        return True

    def _informer(self, res: APIResource, namespace: str = "") -> SharedInformer:
        informer = SharedInformer(self.client, res.gvr, clock=RealClock(), namespace=namespace)
        drawn = _key(res) not in NOT_DRAWN

        def deleted(obj: Obj | DeletedFinalStateUnknown) -> None:
            self._changed(obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj,
                          deleted=True, drawn=drawn)

        informer.add_event_handler(FuncHandler(
            add=lambda obj, _initial: self._changed(obj, drawn=drawn),
            update=lambda _old, new: self._changed(new, drawn=drawn), delete=deleted))
        informer.start()
        return informer

    async def _rediscover_loop(self) -> None:
        clock = RealClock()
        while True:
            await clock.sleep(REDISCOVER_EVERY)
            try:
                await self._discover()
            except Exception as e:  # the next round retries; the page keeps what it has
                log.warning("ui: discovery failed: %s", e)

    # -- changes ---------------------------------------------------------------------

    def objects(self) -> builtins.list[Obj]:
        """Every drawn object now."""
        return list(self._objects.values())

    def get(self, oid: str) -> Obj | None:
        return self._objects.get(oid)

    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def _changed(self, obj: Obj, *, deleted: bool = False, drawn: bool = True) -> None:
        if not drawn:
            self.generation += 1  # the doctor's answers may change with an Event
            return
        # drawn as the tools read it (its malformed fields left out; the doctor's
        # MalformedObject findings say what they were); an object that cannot be named is
        # not drawn
        readable, _ = well_formed([obj], self.clock.now())
        if not readable:
            self.generation += 1
            return
        obj = readable[0]
        oid = object_id(obj)
        old = self._objects.pop(oid, None) if deleted else self._objects.get(oid)
        if not deleted:
            self._objects[oid] = obj
            if old is None:
                self._count(obj, 1)
        elif old is not None:
            self._count(old, -1)
        self.observed.changed(oid, old, None if deleted else obj, self.clock.now())
        self._pending[oid] = None if deleted else obj
        if self._flush is None:
            self._flush = asyncio.get_running_loop().call_later(BATCH_DELAY, self._deliver)

    def _count(self, obj: Obj, delta: int) -> None:
        namespace = namespace_of(obj)
        if obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1":
            namespace = str((obj.get("metadata") or {}).get("name") or "")
        if namespace:
            left = self._in_namespace.get(namespace, 0) + delta
            if left > 0:
                self._in_namespace[namespace] = left
            else:
                self._in_namespace.pop(namespace, None)

    def namespaces(self) -> builtins.list[str]:
        """The namespaces that exist or hold objects, sorted."""
        return sorted(self._in_namespace)

    def _deliver(self) -> None:
        self._flush = None
        batch, self._pending = self._pending, {}
        self.generation += 1
        for listener in list(self._listeners):
            try:
                listener(batch)
            except Exception:
                log.exception("ui: a change listener failed")

    # -- the tools' view -------------------------------------------------------------

    async def inventory(self, namespace: str = "") -> Inventory:
        return await read_inventory(self.dump or self._reader, clock=self.clock,
                                    namespace=namespace, source=self.source,
                                    follow_cluster_clock=self.follow_cluster_clock)

    def informers_for(self, gvr: GroupVersionResource, namespace: str = ""
                      ) -> builtins.list[SharedInformer]:
        """The informers holding ``gvr``'s objects (of ``namespace``, or all): the one of
        every namespace, else those of the namespaces shown. Raises the 403 Status for a
        resource the client may list nowhere it was asked to."""
        key = (gvr.group, gvr.resource)
        whole = self._informers.get((*key, ""))
        if whole is not None:
            return [whole]
        found = [i for k, i in self._informers.items()
                 if k[:2] == key and k[2] and (not namespace or k[2] == namespace)]
        if not found and key in self._forbidden:
            where = f' in the namespace "{namespace}"' if namespace else ""
            raise errors.StatusError(403, "Forbidden",
                                     f"{gvr.resource} cannot be listed{where}")
        return found


class _CacheReader(ReadOnlyClient):
    """Discovery and lists answered from ``LiveObjects``' informers: what
    ``read_inventory`` reads. A resource not listed yet answers 503, which the inventory
    records as a read error, as for a cluster that failed to list it."""

    def __init__(self, live: LiveObjects) -> None:
        super().__init__(live.client)
        self._live = live

    async def discover(self) -> builtins.list[APIResource]:
        return list(self._live.resources)

    async def list(self, gvr: GroupVersionResource, *, namespace: str = "",
                   options: ListOptions | None = None) -> Obj:
        informers = self._live.informers_for(gvr, namespace)
        if not informers or not all(i.has_synced() for i in informers):
            raise errors.StatusError(503, "ServiceUnavailable",
                                     f"{gvr.resource} has not been listed yet")
        items = [o for i in informers for o in i.indexer.list()
                 if not namespace or namespace_of(o) == namespace]
        return {"kind": "List", "apiVersion": "v1", "items": items, "metadata": {
            "resourceVersion": informers[0].last_sync_resource_version()}}
