"""The seed's accidents, on demand (issue 25):

* ``delete_and_recreate``: an owner deleted and created again under the same name
  between two steps of a cascade, with the garbage collector held between them — its
  dependents now point at a uid that no longer exists (the "child written with a stale
  uid"); upstream's GC resolves owners by uid (``attemptToDeleteItem`` → ``classifyReferences``
  asks the API for the owner and compares uids), so they are garbage once it resumes;
* ``restart_api_server``: the API server stops and starts on the same port in the same
  process — every connection (watches included) dropped, stored state kept, faults gone
  (a fault never outlives the server).
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from kubegc.api import errors
from kubegc.api.meta import DeleteOptions, DeletionPropagation
from kubegc.api.resources import GroupVersionResource
from kubegc.client.interface import Client
from kubegc.controllermanager import ControllerManager
from kubegc.server import APIServer

#: what a new object cannot carry over from the one it replaces
_SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
                  "deletionGracePeriodSeconds", "generation", "managedFields")


def parse_resource(resource: str | GroupVersionResource) -> GroupVersionResource:
    """``"v1/configmaps"`` / ``"apps/v1/deployments"`` (or a GVR as it is)."""
    if isinstance(resource, GroupVersionResource):
        return resource
    parts = resource.split("/")
    if len(parts) == 2:
        return GroupVersionResource("", parts[0], parts[1])
    if len(parts) == 3:
        return GroupVersionResource(*parts)
    raise ValueError(f"{resource!r}: want VERSION/RESOURCE or GROUP/VERSION/RESOURCE")


async def delete_and_recreate(client: Client, manager: ControllerManager | None,
                              gvr: GroupVersionResource, name: str, namespace: str = "",
                              *, timeout: float = 30.0) -> dict[str, Any]:
    """Delete the object (background propagation) with the garbage collector paused,
    wait until it is gone (an operator's finalizers released: ``TimeoutError`` after
    ``timeout`` s), create it again from its last state (a new uid), resume the GC; the
    new object."""
    gc = manager.gates.get("garbagecollector") if manager is not None else None
    was_paused = gc is not None and gc.paused
    if gc is not None:
        gc.set_paused(True)
    try:
        old = await client.get(gvr, name, namespace=namespace)
        await client.delete(gvr, name, namespace=namespace,
                            options=DeleteOptions(propagation_policy=DeletionPropagation.BACKGROUND))
        await _gone(client, gvr, name, namespace, old["metadata"].get("uid"), timeout)
        fresh = copy.deepcopy(old)
        meta = fresh["metadata"]
        for key in _SERVER_FIELDS:
            meta.pop(key, None)
        meta.pop("finalizers", None)  # the controllers' to add again
        fresh.pop("status", None)
        created: dict[str, Any] = await client.create(gvr, fresh, namespace=namespace)
        return created
    finally:
        if gc is not None and not was_paused:
            gc.set_paused(False)


async def _gone(client: Client, gvr: GroupVersionResource, name: str, namespace: str,
                uid: str | None, timeout: float) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            current = await client.get(gvr, name, namespace=namespace)
        except errors.StatusError as e:
            if errors.is_not_found(e):
                return
            raise
        if current["metadata"].get("uid") != uid:
            return
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"{gvr.resource}/{name} is still there after {timeout}s: "
                               f"finalizers {current['metadata'].get('finalizers')}")
        await asyncio.sleep(0.05)


async def restart_api_server(server: APIServer) -> None:
    """Stop serving (connections dropped) and serve again on the same port."""
    port = server.port
    await server.stop()  # clears the faults too
    server.options.port = port
    await server.start()
