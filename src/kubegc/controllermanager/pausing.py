"""Paused controllers (``POST /debug/kubegc/controllers/{name}`` ``{"paused": true}``,
issue 25): a controller that is down while its objects change, as in the seed's accident
"the controller is down while the parent is deleted".

A paused component's requests wait at its ``Gate``: every call of its own client (each
component has one, with its identity: ``ControllerManager._client_for``) blocks until the
gate opens, so it writes nothing and reads nothing; what its informers see keeps landing
in its queue, which keeps its items. On resume the waiting calls go on and the workers
drain the queue — it catches up, as a controller manager does after a restart. The
shared informers keep running: they are the manager's, not the component's.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator, Callable
from typing import Any

from kubegc.api.meta import DeleteOptions, ListOptions
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client import APIResource, Client, PatchType, ServerResources, WatchEvent
from kubegc.client.batch import CreateOutcome, create_all
from kubegc.client.interface import WatchOptions


class Gate:
    """Open unless paused; ``passed`` waits while it is closed."""

    def __init__(self) -> None:
        self._open = asyncio.Event()
        self._open.set()

    @property
    def paused(self) -> bool:
        return not self._open.is_set()

    def set_paused(self, paused: bool) -> None:
        if paused:
            self._open.clear()
        else:
            self._open.set()

    async def passed(self) -> None:
        if not self._open.is_set():
            await self._open.wait()


class GatedClient(Client):
    """``client``, each request of it waiting at ``gate`` first."""

    def __init__(self, client: Client, gate: Gate) -> None:
        self._client = client
        self._gate = gate

    def __getattr__(self, name: str) -> Any:  # what else the wrapped client offers
        return getattr(self._client, name)

    async def get(self, gvr: GroupVersionResource, name: str, *, namespace: str = "") -> Obj:
        await self._gate.passed()
        return await self._client.get(gvr, name, namespace=namespace)

    async def list(self, gvr: GroupVersionResource, *, namespace: str = "",
                   options: ListOptions | None = None) -> Obj:
        await self._gate.passed()
        return await self._client.list(gvr, namespace=namespace, options=options)

    def watch(self, gvr: GroupVersionResource, *, namespace: str = "",
              options: WatchOptions | None = None) -> AsyncIterator[WatchEvent]:
        return self._client.watch(gvr, namespace=namespace, options=options)

    async def create(self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "") -> Obj:
        await self._gate.passed()
        return await self._client.create(gvr, obj, namespace=namespace)

    async def create_batch(self, gvr: GroupVersionResource, objs: builtins.list[Obj], *,
                           namespace: str = "") -> builtins.list[CreateOutcome]:
        await self._gate.passed()
        return await create_all(self._client, gvr, objs, namespace=namespace)

    async def update(self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "",
                     subresource: str = "") -> Obj:
        await self._gate.passed()
        return await self._client.update(gvr, obj, namespace=namespace,
                                         subresource=subresource)

    async def patch(self, gvr: GroupVersionResource, name: str, patch: Any, *,
                    namespace: str = "", patch_type: PatchType = PatchType.MERGE,
                    subresource: str = "", field_manager: str = "", force: bool = False
                    ) -> Obj:
        await self._gate.passed()
        return await self._client.patch(gvr, name, patch, namespace=namespace,
                                        patch_type=patch_type, subresource=subresource,
                                        field_manager=field_manager, force=force)

    async def delete(self, gvr: GroupVersionResource, name: str, *, namespace: str = "",
                     options: DeleteOptions | None = None) -> Obj:
        await self._gate.passed()
        return await self._client.delete(gvr, name, namespace=namespace, options=options)

    async def delete_collection(self, gvr: GroupVersionResource, *, namespace: str = "",
                                options: DeleteOptions | None = None,
                                list_options: ListOptions | None = None) -> Obj:
        await self._gate.passed()
        return await self._client.delete_collection(gvr, namespace=namespace, options=options,
                                                    list_options=list_options)

    async def delete_collection_each(
        self, gvr: GroupVersionResource, each: Callable[[builtins.list[Obj]], None], *,
        namespace: str = "", options: DeleteOptions | None = None,
        list_options: ListOptions | None = None,
    ) -> None:
        await self._gate.passed()
        await self._client.delete_collection_each(gvr, each, namespace=namespace,
                                                  options=options, list_options=list_options)

    async def discover(self) -> builtins.list[APIResource]:
        await self._gate.passed()
        return await self._client.discover()

    async def server_resources(self) -> ServerResources:
        await self._gate.passed()
        return await self._client.server_resources()
