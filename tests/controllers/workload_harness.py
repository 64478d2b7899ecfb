"""A small harness for unit tests of the workload controllers against ``FakeClient``.

``running(factory, client)`` builds the controller over a minimal stand-in for the
``ControllerManager`` (client, clock, shared informers, options), starts it and its
informers, and stops everything afterwards. ``eventually`` waits on a condition with a
deadline (never a sleep); ``quiet`` waits until the controller and informers are idle for
a number of consecutive loop turns, to check that something did *not* happen.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from kubegc.api.clock import Clock, ManualClock
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import SharedInformerFactory
from kubegc.client.events import EventRecorder
from kubegc.client.fake import FakeClient
from kubegc.controllers.manager import ManagerOptions

PODS = GroupVersionResource("", "v1", "pods")
EVENTS = GroupVersionResource("", "v1", "events")
NODES = GroupVersionResource("", "v1", "nodes")


class FakeManager:
    def __init__(self, client: FakeClient, clock: Clock) -> None:
        self.client = client
        self.clock = clock
        self.options = ManagerOptions()
        self.informers = SharedInformerFactory(client, clock=clock)
        self.recorder = EventRecorder(client, component="test", clock=clock)


@asynccontextmanager
async def running(factory: Callable[[Any], Any], client: FakeClient,
                  clock: Clock | None = None) -> AsyncIterator[Any]:
    manager = FakeManager(client, clock or ManualClock())
    controller = factory(manager)
    await controller.start()
    manager.informers.start()
    try:
        yield controller
    finally:
        await controller.stop()
        await manager.informers.stop()


async def eventually(predicate: Callable[[], object], timeout: float = 5.0,
                     what: str = "") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"not true within {timeout}s: {what or predicate}")
        await asyncio.sleep(0.001)


async def quiet(controller: Any, turns: int = 50, timeout: float = 5.0) -> None:
    """Wait until the controller has been idle for ``turns`` consecutive loop turns."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    idle = 0
    while idle < turns:
        idle = idle + 1 if controller.is_idle() else 0
        if loop.time() > deadline:
            raise AssertionError("controller never became quiet")
        await asyncio.sleep(0)


def objects(client: FakeClient, gvr: GroupVersionResource, namespace: str = "ns") -> list[Obj]:
    return [o for (ns, _), o in sorted(client._objects.get(gvr, {}).items()) if ns == namespace]


def event_messages(client: FakeClient, reason: str | None = None) -> list[str]:
    events = [o for o in client._objects.get(EVENTS, {}).values()]
    return sorted(str(e.get("message")) for e in events
                  if reason is None or e.get("reason") == reason)


def set_pod_phase(client: FakeClient, pod: Obj, phase: str, *, ready: bool = False,
                  at: str = "2026-01-01T00:00:00Z") -> None:
    """Stand in for the kubelet: give a pod a phase (and a Ready condition)."""
    meta = pod["metadata"]
    stored = client.stored(PODS, meta["name"], namespace=meta["namespace"])
    if stored is None:
        return
    new = copy.deepcopy(stored)
    new["status"] = {"phase": phase, "conditions": [
        {"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": at}]}
    client._commit(PODS, new)


def pod_template(labels: dict[str, str]) -> Obj:
    return {"metadata": {"labels": dict(labels)},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
