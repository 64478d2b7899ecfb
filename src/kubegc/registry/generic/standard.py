"""The storages of stored resources (cf. ``genericregistry.Store`` as a ``rest.Storage``,
and the ``StatusREST`` every resource with a status subresource has).

``StoredResource`` implements every verb over the generic Store; ``StandardREST`` serves
them all, and a resource that serves fewer (namespaces: no ``deletecollection``) declares
its own class with the interfaces it serves. ``StatusREST`` serves ``<resource>/status``
(and a CertificateSigningRequest's ``approval``, the same kind of write).
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace

from kubegc.api.meta import DeleteOptions
from kubegc.api.resources import ResourceInfo
from kubegc.api.types import Obj
from kubegc.registry import printers
from kubegc.registry.generic.batch_create import CreateOutcome, create_batch
from kubegc.registry.generic.collection import PageSink, delete_collection
from kubegc.registry.generic.deletion import delete
from kubegc.registry.generic.listing import list_encoded, list_encoded_stream, list_objects
from kubegc.registry.generic.patching import patch
from kubegc.registry.generic.rest import (
    BatchCreater,
    CollectionDeleter,
    EncodedGetter,
    EncodedLister,
    GracefulDeleter,
    ListOptions,
    Patcher,
    Resource,
    Storage,
    Updater,
    Watcher,
    WriteOptions,
)
from kubegc.registry.generic.store import Store
from kubegc.registry.generic.strategy import DEFAULT, Strategy
from kubegc.registry.generic.target import Created, Target
from kubegc.registry.generic.watch_cache import WatchCache
from kubegc.registry.generic.watching import RegistryWatch, WatchRequest
from kubegc.registry.printers import TableConvertor


@dataclass(frozen=True)
class StorageContext:
    """What every storage is built from (upstream's ``generic.RESTOptions``): the generic
    Store over the cluster's KV, and the watch cache its watches read."""

    store: Store
    cache: WatchCache


def success_status(t: Target, name: str, obj: Obj) -> Obj:
    """Upstream's ``finalizeDelete`` for a store that does not return deleted objects: a
    Success Status naming what was removed (Kind: the resource)."""
    meta = obj.get("metadata") or {}
    details = {"name": meta.get("name", name), "group": t.info.group, "kind": t.info.resource,
               "uid": meta.get("uid", "")}
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": {k: v for k, v in details.items() if v}}


class StoredResource:
    """Every verb of a stored resource, over the generic Store (the methods of upstream's
    ``genericregistry.Store``). Not a storage by itself: a storage class adds the
    interfaces of the verbs it serves."""

    def __init__(self, ctx: StorageContext) -> None:
        self.store = ctx.store
        self.cache = ctx.cache
        # a create is decoded for the hook only when a subclass has one (creates are hot)
        self._observes = type(self).after_write is not StoredResource.after_write

    async def get(self, t: Target, name: str) -> Obj:
        return await self.store.get(t, name)

    async def get_encoded(self, t: Target, name: str) -> bytes | None:
        return await self.store.get_encoded(t, name) if t.direct else None

    async def list(self, t: Target, options: ListOptions) -> Obj:
        return await list_objects(
            self.store, t, label_selector=options.label_selector,
            field_selector=options.field_selector, limit=options.limit,
            continue_=options.continue_, resource_version=options.resource_version,
            resource_version_match=options.resource_version_match)

    async def list_encoded(self, t: Target, options: ListOptions) -> bytes | None:
        if not t.direct or options.selects:
            return None
        return await list_encoded(
            self.store, t, limit=options.limit, continue_=options.continue_,
            resource_version=options.resource_version,
            resource_version_match=options.resource_version_match)

    async def list_encoded_stream(self, t: Target, options: ListOptions
                                  ) -> AsyncIterator[bytes] | None:
        if not t.direct or options.selects or options.limit or options.continue_:
            return None
        return await list_encoded_stream(
            self.store, t, resource_version=options.resource_version,
            resource_version_match=options.resource_version_match)

    def watch(self, t: Target, request: WatchRequest) -> RegistryWatch:
        return RegistryWatch(self.store, self.cache, t, request)

    def after_write(self, t: Target, obj: Obj, *, removed: bool) -> None:
        """Called after every write that was not a dry run, before it is answered, with
        the object as stored (``removed``: as it was when deleted) — upstream's
        ``AfterCreate`` / ``AfterUpdate`` / ``AfterDelete`` hooks. Nothing by default."""

    async def create(self, t: Target, obj: Obj, options: WriteOptions) -> Created | Obj:
        created = await self.store.create_stored(
            t, obj, dry_run=options.dry_run, field_manager=options.field_manager,
            field_validation=options.field_validation, warnings=options.warnings)
        if created.revision and self._observes:
            self.after_write(t, created.object(), removed=False)
        return created

    async def create_batch(self, t: Target, objs: builtins.list[Obj],
                           options: WriteOptions) -> builtins.list[CreateOutcome]:
        """Create ``objs`` (the caller's, edited in place) in one write batch
        (``batch_create``); each by ``create`` when this storage observes its writes."""
        return await create_batch(self.store, self, t, objs, options,
                                  batched=not self._observes)

    async def update(self, t: Target, name: str, obj: Obj,
                     options: WriteOptions) -> tuple[Obj, bool]:
        result, created = await self.store.update(
            t, name, obj, dry_run=options.dry_run, field_manager=options.field_manager,
            field_validation=options.field_validation, warnings=options.warnings)
        if not options.dry_run:
            self.after_write(t, result, removed=False)
        return result, created

    async def patch(self, t: Target, name: str, patch_type: str, body: bytes,
                    options: WriteOptions) -> tuple[Obj, bool]:
        result, created = await patch(
            self.store, t, name, patch_type, body, dry_run=options.dry_run,
            field_manager=options.field_manager, force=options.force,
            field_validation=options.field_validation, warnings=options.warnings)
        if not options.dry_run:
            self.after_write(t, result, removed=False)
        return result, created

    async def delete(self, t: Target, name: str,
                     options: DeleteOptions) -> tuple[Obj, bool]:
        result, removed = await delete(self.store, t, name, options)
        if not options.dry_run:
            self.after_write(t, result, removed=removed)
        return result, removed

    def deleted_answer(self, t: Target, name: str, obj: Obj) -> Obj | None:
        return None if t.strategy.return_deleted_object else success_status(t, name, obj)

    async def delete_collection(self, t: Target, options: DeleteOptions,
                                list_options: ListOptions, *,
                                each_page: PageSink | None = None) -> Obj:
        """``DeleteCollection`` (``collection.delete_collection``): the listed objects'
        removals written a chunk per write batch, unless this storage deletes an object
        its own way (or lists its own way): then each by its ``delete``."""
        own = (type(self).delete is not StoredResource.delete
               or type(self).list is not StoredResource.list)
        return await delete_collection(self.store, self, t, options, list_options,
                                       batched=not own, each_page=each_page)


class StandardREST(StoredResource, EncodedGetter, EncodedLister, Watcher, BatchCreater, Updater,
                   Patcher, GracefulDeleter, CollectionDeleter):
    """A stored resource serving every verb (most resources)."""


class StatusREST(EncodedGetter, Updater, Patcher):
    """``<resource>/status`` (and the like: a CSR's ``approval``): GET, and writes that
    change only that part of the object (``Store.prepare_update`` keeps the rest)."""

    def __init__(self, ctx: StorageContext, *, subresource: str = "status") -> None:
        self.store = ctx.store
        self.subresource = subresource

    async def get(self, t: Target, name: str) -> Obj:
        return await self.store.get(t, name)

    async def get_encoded(self, t: Target, name: str) -> bytes | None:
        return await self.store.get_encoded(t, name) if t.direct else None

    async def update(self, t: Target, name: str, obj: Obj,
                     options: WriteOptions) -> tuple[Obj, bool]:
        return await self.store.update(
            t, name, obj, subresource=self.subresource, dry_run=options.dry_run,
            field_manager=options.field_manager, field_validation=options.field_validation,
            warnings=options.warnings)

    async def patch(self, t: Target, name: str, patch_type: str, body: bytes,
                    options: WriteOptions) -> tuple[Obj, bool]:
        return await patch(
            self.store, t, name, patch_type, body, subresource=self.subresource,
            dry_run=options.dry_run, field_manager=options.field_manager, force=options.force,
            field_validation=options.field_validation, warnings=options.warnings)


def stored(ctx: StorageContext, info: ResourceInfo, strategy: Strategy = DEFAULT, *,
           status: bool = False, scale: bool = False, storage: Storage | None = None,
           subresources: dict[str, Storage] | None = None,
           table: TableConvertor = printers.DEFAULT) -> Resource:
    """A stored resource: ``storage`` (default ``StandardREST``), its ``status`` and
    ``scale`` subresources when it has them, any other subresource storages, and how it
    prints (``table``: Name and Age unless said)."""
    from kubegc.registry.generic.scale import ScaleREST

    subs: dict[str, Storage] = {}
    if status:
        subs["status"] = StatusREST(ctx)
        strategy = replace(strategy, status_subresource=True)
    if scale:
        subs["scale"] = ScaleREST(ctx)
    subs.update(subresources or {})
    return Resource(info, storage or StandardREST(ctx), subs, strategy, table)


__all__ = [
    "StandardREST",
    "StatusREST",
    "StorageContext",
    "StoredResource",
    "stored",
    "success_status",
]
