"""The controller manager ``kubegc serve`` runs (cf. kube-controller-manager).

``--controllers`` selects which controllers run: ``*`` for all, a name to add one, ``-name``
to drop one (``*,-kubelet``). Each controller is started once the informers it needs
have synced. Every controller talks to the API only through the ``Client`` it is given.

Concurrency: everything runs as tasks on the one event loop of the process.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kubegc.api.clock import Clock
from kubegc.client.cache import SharedInformerFactory
from kubegc.client.interface import Client
from kubegc.controllers.garbagecollector.records import DecisionSink
from kubegc.controllers.leaderelection import LeaderLease

log = logging.getLogger(__name__)

#: (query parameters) -> (content type, body)
DebugDocument = Callable[[dict[str, str]], tuple[str, bytes]]


class Controller(Protocol):
    name: str

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def is_idle(self) -> bool: ...

    def ready(self) -> bool: ...


@dataclass
class ManagerOptions:
    controllers: Sequence[str] = ("*",)
    concurrent_gc_syncs: int = 20
    gc_sync_period: float = 30.0
    nodes: int = 1
    event_ttl: float = 3600.0
    decision_ttl: float = 7 * 24 * 3600.0
    #: kubelet simulator defaults (per-pod annotations override them; see kubelet docs)
    pod_exit_delay: float = 0.0  # seconds a pod's processes take to exit after TERM
    pod_prestop_delay: float = 0.0  # seconds a preStop hook runs
    pod_ignore_term: bool = False  # processes ignore TERM and die only at KILL
    job_pod_duration: float = 0.0  # seconds a Job's pod runs before it succeeds
    node_max_pods: int = 110  # allocatable pods of each simulated node
    concurrent_namespace_syncs: int = 10  # namespace controller workers
    concurrent_endpoint_syncs: int = 5  # endpoints controller workers
    podgc_period: float = 20.0  # seconds between pod GC passes (upstream gcCheckPeriod)
    podgc_quarantine: float = 40.0  # seconds a missing node is awaited before its pods go
    terminated_pod_gc_threshold: int = 12500  # terminated pods kept (0: keep all)
    #: where the GC's decisions go instead of DeletionRecords written through the API (the
    #: planner's simulation keeps them in memory: they explain its steps, nobody reads
    #: them later, and writing 10,000 of them costs a third of a 10,000-object plan)
    decision_sink: DecisionSink | None = None
    extra: dict[str, object] = field(default_factory=dict)


def selected(all_names: Sequence[str], spec: Sequence[str]) -> list[str]:
    """Resolve a ``--controllers`` list against the known controller names."""
    chosen: list[str] = []
    for item in spec:
        if item == "*":
            chosen.extend(n for n in all_names if n not in chosen)
        elif item.startswith("-"):
            chosen = [n for n in chosen if n != item[1:]]
        elif item in all_names:
            if item not in chosen:
                chosen.append(item)
        else:
            raise ValueError(f"unknown controller {item!r}; known: {', '.join(all_names)}")
    return chosen


class ControllerManager:
    """Builds, starts and stops the selected controllers around one shared informer
    factory (each controller records events under its own upstream component name)."""

    def __init__(self, client: Client, *, clock: Clock, options: ManagerOptions) -> None:
        from kubegc.controllers.registry import CONTROLLERS

        self.client = client
        self.clock = clock
        self.options = options
        self.informers = SharedInformerFactory(client, clock=clock)
        self.names = selected(list(CONTROLLERS), options.controllers)
        self.controllers: list[Controller] = [
            CONTROLLERS[name](self) for name in self.names]
        self._started = False
        self.lease = LeaderLease(client, clock=clock)

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
