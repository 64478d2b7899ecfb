"""The controller manager ``kubegc serve`` runs (cf. kube-controller-manager): the
controllers, and also the kubelet simulator and the scheduler (``descriptors``).

``--controllers`` selects which components run: ``*`` for all, a name to add one, ``-name``
to drop one (``*,-kubelet``). Each is built from a ``ControllerContext`` of its own and
started once the informers it needs have synced; it talks to the API only through the
``Client`` of that context and never sees the manager.

Concurrency: everything runs as tasks on the one event loop of the process.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from kubegc.api.clock import Clock
from kubegc.client.cache import SharedInformerFactory
from kubegc.client.interface import Client
from kubegc.component.config import ControllerManagerConfiguration
from kubegc.component.context import Controller, ControllerContext, DebugDocument
from kubegc.controllermanager.descriptors import CONTROLLERS, ControllerDescriptor
from kubegc.controllermanager.leaderelection import LeaderLease

log = logging.getLogger(__name__)


def selected(all_names: Sequence[str], spec: Sequence[str]) -> list[str]:
    """Resolve a ``--controllers`` list against the known controller names."""
    chosen: list[str] = []
    for item in spec:
        if item == "*":
            chosen.extend(n for n in all_names if n not in chosen)
        elif item.startswith("-") and item[1:] in all_names:
            chosen = [n for n in chosen if n != item[1:]]
        elif item in all_names:
            if item not in chosen:
                chosen.append(item)
        else:
            raise ValueError(f"unknown controller {item.removeprefix('-')!r}; known: "
                             f"{', '.join(all_names)}")
    return chosen


class ControllerManager:
    """Builds, starts and stops the selected controllers around one shared informer
    factory (each controller records events under its own upstream component name)."""

    def __init__(self, client: Client, *, clock: Clock,
                 config: ControllerManagerConfiguration) -> None:
        self.client = client
        self.clock = clock
        self.config = config
        self.informers = SharedInformerFactory(client, clock=clock)
        self.names = selected(list(CONTROLLERS), config.controllers)
        self.controllers: list[Controller] = [
            self._build(CONTROLLERS[name]) for name in self.names]
        self._started = False
        self.lease = LeaderLease(client, clock=clock)

    def _build(self, descriptor: ControllerDescriptor) -> Controller:
        """The component, from a context of its own (what upstream's start functions
        receive); the component never sees the manager."""
        constructor = descriptor.constructor
        return constructor(ControllerContext(
            client=self.client, clock=self.clock, informer_factory=self.informers,
            options=descriptor.options(self.config), component=constructor.component))

    async def start(self) -> None:
        if self.controllers:
            self.lease.start()
        for controller in self.controllers:
            await controller.start()
        self.informers.start()
        self._started = True

    async def stop(self) -> None:
        for controller in reversed(self.controllers):
            try:
                await controller.stop()
            except Exception:
                log.exception("stopping controller %s", controller.name)
        await self.lease.stop()
        await self.informers.stop()

    def ready(self) -> bool:
        return self._started and all(c.ready() for c in self.controllers)

    def is_idle(self) -> bool:
        return (all(i.is_idle() for i in self.informers.informers())
                and all(c.is_idle() for c in self.controllers))

    def on_catalog_change(self) -> None:
        for controller in self.controllers:
            hook = getattr(controller, "on_catalog_change", None)
            if hook is not None:
                hook()

    def debug_documents(self) -> dict[str, DebugDocument]:
        out: dict[str, DebugDocument] = {}
        for controller in self.controllers:
            docs = getattr(controller, "debug_documents", None)
            if docs is not None:
                out.update(docs())
        return out

    def get(self, name: str) -> Controller | None:
        for controller in self.controllers:
            if controller.name == name:
                return controller
        return None
