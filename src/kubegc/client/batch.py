"""Creating many objects of one resource at once (``BatchCreater``), for in-process writers
that make many small objects and read none of the answers: the DeletionRecord sink.

``create_all`` is what such a writer calls with any ``Client``: one ``create_batch`` where
the client offers it (``LocalClient``: one write batch, one SQLite transaction, no copy of
each object and no decoded answers: ``registry/generic/batch_create.py``), else one
``create`` per object, all in flight at once (``RestClient``: one request each).
"""

from __future__ import annotations

import asyncio
from typing import Protocol, runtime_checkable

from kubegc.api.errors import StatusError
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import Client

#: One object's outcome: None when created, else the API's error for it.
CreateOutcome = StatusError | None


@runtime_checkable
class BatchCreater(Protocol):
    """A client that creates many objects of one resource in one call."""

    async def create_batch(self, gvr: GroupVersionResource, objs: list[Obj], *,
                           namespace: str = "") -> list[CreateOutcome]:
        """Create ``objs``, which the client may edit (they are handed over); one outcome
        per object, in order. Raises what stops the whole call (not authorized, storage
        failing)."""
        ...


async def create_all(client: Client, gvr: GroupVersionResource, objs: list[Obj], *,
                     namespace: str = "") -> list[CreateOutcome]:
    """``objs`` created through ``client`` (see the module docstring); an error that is no
    ``StatusError`` (the connection, the storage) is raised."""
    if isinstance(client, BatchCreater):
        return await client.create_batch(gvr, objs, namespace=namespace)
    return await create_each(client, gvr, objs, namespace=namespace)


async def create_each(client: Client, gvr: GroupVersionResource, objs: list[Obj], *,
                      namespace: str = "") -> list[CreateOutcome]:
    """``objs`` created by one ``client.create`` each, all in flight at once."""
    results = await asyncio.gather(*(client.create(gvr, obj, namespace=namespace)
                                     for obj in objs), return_exceptions=True)
    outcomes: list[CreateOutcome] = []
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, StatusError):
            raise result
        outcomes.append(result if isinstance(result, StatusError) else None)
    return outcomes


__all__ = ["BatchCreater", "CreateOutcome", "create_all", "create_each"]
