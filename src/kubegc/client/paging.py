"""A paged LIST as client-go's pager walks it: ``limit``, then each page's ``continue``
token until a page has none. One place for the loop the controllers and tools that read a
whole resource a page at a time share (the Event TTL controller, the DeletionRecord
pruner, the tools' inventory)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import Client, ListOptions


async def list_pages(client: Client, gvr: GroupVersionResource, *, limit: int,
                     namespace: str = "", label_selector: str = "") -> AsyncIterator[Obj]:
    """Each page (a List object) of ``gvr``'s objects, ``limit`` at a time; a failure of
    any page is raised from the iteration (a 410 of a continued one: the token expired)."""
    token = ""
    while True:
        page = await client.list(gvr, namespace=namespace, options=ListOptions(
            label_selector=label_selector, limit=limit, continue_=token))
        yield page
        token = str((page.get("metadata") or {}).get("continue") or "")
        if not token:
            return
