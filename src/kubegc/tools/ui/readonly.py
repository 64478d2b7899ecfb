"""``ReadOnlyClient``: the page's only way to the cluster, which can read and never write.

Reads go to the wrapped client; ``create``, ``update``, ``patch`` and ``delete`` answer
405 MethodNotSupported without reaching it, so nothing the page does (doctor, why, the
what-if, whose delete runs in its own in-memory simulation) can change the cluster.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator
from typing import Any

from kubegc.api import errors
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import (
    APIResource,
    Client,
    DeleteOptions,
    ListOptions,
    PatchType,
    WatchEvent,
    WatchOptions,
)


def refused(gvr: GroupVersionResource, action: str) -> errors.StatusError:
    return errors.method_not_supported(errors.GroupResource(gvr.group, gvr.resource), action)


class ReadOnlyClient(Client):
    def __init__(self, inner: Client) -> None:
        self.inner = inner

    async def get(self, gvr: GroupVersionResource, name: str, *, namespace: str = "") -> Obj:
        return await self.inner.get(gvr, name, namespace=namespace)

    async def list(self, gvr: GroupVersionResource, *, namespace: str = "",
                   options: ListOptions | None = None) -> Obj:
        return await self.inner.list(gvr, namespace=namespace, options=options)

    def watch(self, gvr: GroupVersionResource, *, namespace: str = "",
              options: WatchOptions | None = None) -> AsyncIterator[WatchEvent]:
        return self.inner.watch(gvr, namespace=namespace, options=options)

    async def discover(self) -> builtins.list[APIResource]:
        return await self.inner.discover()

    async def create(self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "") -> Obj:
        raise refused(gvr, "create")

    async def update(self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "",
                     subresource: str = "") -> Obj:
        raise refused(gvr, "update")

    async def patch(self, gvr: GroupVersionResource, name: str, patch: Any, *,
                    namespace: str = "", patch_type: PatchType = PatchType.MERGE,
                    subresource: str = "", field_manager: str = "", force: bool = False) -> Obj:
        raise refused(gvr, "patch")

    async def delete(self, gvr: GroupVersionResource, name: str, *, namespace: str = "",
                     options: DeleteOptions | None = None) -> Obj:
        raise refused(gvr, "delete")

    async def delete_collection(self, gvr: GroupVersionResource, *, namespace: str = "",
                                options: DeleteOptions | None = None,
                                list_options: ListOptions | None = None) -> Obj:
        raise refused(gvr, "deletecollection")
