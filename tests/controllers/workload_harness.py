"""A small harness for unit tests of the workload controllers against ``FakeClient``.

``running(factory, client)`` builds the controller from a ``ControllerContext`` (client,
clock, shared informers, options, recorder) as the controller manager does, starts it and
its informers, and stops everything afterwards. ``eventually`` waits on a condition with a
deadline (never a sleep); ``quiet`` waits until the controller and informers are idle for
a number of consecutive loop turns, to check that something did *not* happen.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from kubegc.api.clock import Clock, ManualClock
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import SharedInformerFactory
from kubegc.client.fake import FakeClient
from kubegc.component import ControllerContext
from kubegc.component.config import ControllerManagerConfiguration
from kubegc.controllermanager import CONTROLLERS

PODS = GroupVersionResource("", "v1", "pods")
EVENTS = GroupVersionResource("", "v1", "events")
NODES = GroupVersionResource("", "v1", "nodes")


def context_for(factory: Any, client: FakeClient, clock: Clock, options: Any = None, *,
                informers: SharedInformerFactory | None = None) -> ControllerContext[Any]:
    """The context the controller manager would hand ``factory`` (a controller class);
    ``options`` default to its section of the default configuration."""
    if options is None:
        # the descriptor of the nearest subclass the manager runs (the class itself, pod
        # GC's recording one; not the ReplicationController's for a ReplicaSet), else of
        # the controller of that name (a test's subclass)
        subclasses = [d for d in CONTROLLERS.values() if isinstance(d.constructor, type)
                      and issubclass(d.constructor, factory)]
        if subclasses:
            descriptor = min(subclasses, key=lambda d: type.mro(
                d.constructor).index(factory))  # type: ignore[arg-type]
        else:
            [descriptor] = [d for d in CONTROLLERS.values()
                            if d.constructor.name == factory.name]
        options = descriptor.options(ControllerManagerConfiguration())
    return ControllerContext(
        client=client, clock=clock,
        informer_factory=informers or SharedInformerFactory(client, clock=clock),
        options=options, component=factory.component)


@asynccontextmanager
async def running(factory: Callable[[Any], Any], client: FakeClient,
                  clock: Clock | None = None, *, options: Any = None) -> AsyncIterator[Any]:
    """One controller, started with its informers (``options``: its configuration section,
    default the default one)."""
    async with running_all([factory], client, clock, options=[options]) as controllers:
        yield controllers[0]


@asynccontextmanager
async def running_all(factories: Sequence[Callable[[Any], Any]], client: FakeClient,
                      clock: Clock | None = None, *, options: Sequence[Any] = ()
                      ) -> AsyncIterator[list[Any]]:
    """Several controllers sharing one informer factory, as in the controller manager."""
    clock = clock or ManualClock()
    informers = SharedInformerFactory(client, clock=clock)
    sections = list(options) or [None] * len(factories)
    controllers = [factory(context_for(factory, client, clock, section, informers=informers))
                   for factory, section in zip(factories, sections, strict=True)]
    for controller in controllers:
        await controller.start()
    informers.start()
    try:
        yield controllers
    finally:
        for controller in controllers:
            await controller.stop()
        await informers.stop()


async def eventually(predicate: Callable[[], object], timeout: float = 5.0,
                     what: str = "") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"not true within {timeout}s: {what or predicate}")
        await asyncio.sleep(0.001)


async def quiet(controller: Any, turns: int = 50, timeout: float = 5.0) -> None:
    """Wait until the controller(s) have been idle for ``turns`` consecutive loop turns."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    idle = 0
    controllers = controller if isinstance(controller, list) else [controller]
    while idle < turns:
        idle = idle + 1 if all(c.is_idle() for c in controllers) else 0
        if loop.time() > deadline:
            raise AssertionError("controller never became quiet")
        await asyncio.sleep(0)


def objects(client: FakeClient, gvr: GroupVersionResource, namespace: str = "ns") -> list[Obj]:
    return [o for o in client.objects(gvr) if o["metadata"].get("namespace", "") == namespace]


def event_messages(client: FakeClient, reason: str | None = None) -> list[str]:
    events = client.objects(EVENTS)
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
    client.update_object(PODS, new)


def pod_template(labels: dict[str, str]) -> Obj:
    return {"metadata": {"labels": dict(labels)},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


@asynccontextmanager
async def fake_kubelet(client: FakeClient, *, phase: str = "Running",
                       ready: bool = True) -> AsyncIterator[None]:
    """A background task standing in for the kubelet: every pod without a phase set by it
    gets ``phase`` (Running and Ready by default) shortly after it appears."""

    async def loop() -> None:
        while True:
            for pod in client.objects(PODS):
                conditions = (pod.get("status") or {}).get("conditions")
                if not conditions and not pod["metadata"].get("deletionTimestamp"):
                    set_pod_phase(client, pod, phase, ready=ready)
            await asyncio.sleep(0.001)

    task = asyncio.get_running_loop().create_task(loop())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def wait_for(predicate: Callable[[], Awaitable[bool]], timeout: float = 20.0,
                   what: str = "") -> None:
    """Poll an async condition against a running cluster (real time) until it holds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await predicate():
        if loop.time() > deadline:
            raise AssertionError(f"not true within {timeout}s: {what or predicate}")
        await asyncio.sleep(0.01)
