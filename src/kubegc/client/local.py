"""``LocalClient``: the ``Client`` protocol served in-process, straight to the registry.

Same semantics as ``RestClient`` against kubegc (same registry code paths, same
``StatusError``s), minus HTTP: controllers running inside ``kubegc serve`` use it.
Objects from ``watch`` are shared with the watch cache: never mutate them.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator
from typing import Any

import orjson

from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj, clone
from kubegc.client.interface import (
    APIResource,
    Client,
    DeleteOptions,
    ListOptions,
    PatchType,
    WatchEvent,
    WatchOptions,
)
from kubegc.registry import Registry, Target, WatchRequest


class LocalClient(Client):
    def __init__(self, registry: Registry, *, field_manager: str = "") -> None:
        """``field_manager`` "" (the default) records no managedFields for this client's
        writes: in-process controllers write often, and the bookkeeping costs more than the
        write itself (bench/README.md); name a manager to have its fields tracked."""
        self.registry = registry
        self.field_manager = field_manager

    def _target(self, gvr: GroupVersionResource, namespace: str) -> Target:
        return self.registry.target(gvr.group, gvr.version, gvr.resource, namespace)

    async def get(self, gvr: GroupVersionResource, name: str, *, namespace: str = "") -> Obj:
        return await self.registry.get(self._target(gvr, namespace), name)

    async def list(
        self, gvr: GroupVersionResource, *, namespace: str = "", options: ListOptions | None = None,
    ) -> Obj:
        o = options or ListOptions()
        return await self.registry.list(
            self._target(gvr, namespace), label_selector=o.label_selector,
            field_selector=o.field_selector, limit=o.limit, continue_=o.continue_,
            resource_version=o.resource_version)

    async def watch(
        self, gvr: GroupVersionResource, *, namespace: str = "",
        options: WatchOptions | None = None,
    ) -> AsyncIterator[WatchEvent]:
        o = options or WatchOptions()
        watch = self.registry.watch(self._target(gvr, namespace), WatchRequest(
            label_selector=o.label_selector, field_selector=o.field_selector,
            resource_version=o.resource_version, allow_bookmarks=o.allow_bookmarks,
            timeout_seconds=float(o.timeout_seconds)))
        try:
            await watch.start()
            async for batch in watch.batches():
                for change in batch:
                    yield WatchEvent(change.type, change.object)
        finally:
            watch.close()

    async def create(self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "") -> Obj:
        # The registry takes the object it creates; the caller's stays untouched, as over HTTP.
        return await self.registry.create(self._target(gvr, namespace), clone(obj),
                                          field_manager=self.field_manager)

    async def update(
        self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "", subresource: str = "",
    ) -> Obj:
        name = str((obj.get("metadata") or {}).get("name") or "")
        result, _ = await self.registry.update(
            self._target(gvr, namespace), name, obj, subresource=subresource,
            field_manager=self.field_manager)
        return result

    async def patch(
        self, gvr: GroupVersionResource, name: str, patch: Any, *, namespace: str = "",
        patch_type: PatchType = PatchType.MERGE, subresource: str = "", field_manager: str = "",
        force: bool = False,
    ) -> Obj:
        body = patch if isinstance(patch, bytes) else orjson.dumps(patch)
        result, _ = await self.registry.patch(
            self._target(gvr, namespace), name, str(patch_type), body, subresource=subresource,
            field_manager=field_manager or self.field_manager, force=force)
        return result

    async def delete(
        self, gvr: GroupVersionResource, name: str, *, namespace: str = "",
        options: DeleteOptions | None = None,
    ) -> Obj:
        body = (options or DeleteOptions()).to_body()
        body.pop("kind", None)
        body.pop("apiVersion", None)
        result, _ = await self.registry.delete(self._target(gvr, namespace), name, body)
        return result

    async def discover(self) -> builtins.list[APIResource]:
        out = []
        for info in self.registry.catalog:
            for version in info.versions:
                out.append(APIResource(
                    group=info.group, version=version, resource=info.resource, kind=info.kind,
                    namespaced=info.namespaced, verbs=info.verbs, short_names=info.short_names,
                    categories=info.categories, singular=info.singular_name))
        return out
