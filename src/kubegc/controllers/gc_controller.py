"""The garbage collector as a controller of the manager: wiring, debug graph, resync on
CRD changes, and its decision records."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from kubegc.client.events import EventRecorder
from kubegc.controllers.garbagecollector import GarbageCollector
from kubegc.controllers.garbagecollector.graph_builder import COMPONENT
from kubegc.controllers.garbagecollector.resources import DEFAULT_IGNORED_RESOURCES

if TYPE_CHECKING:
    from kubegc.controllers.manager import ControllerManager, DebugDocument

#: kubegc's own deletion records are never owners or dependents.
IGNORED_RESOURCES = DEFAULT_IGNORED_RESOURCES | {("kubegc.io", "deletionrecords")}


class GarbageCollectorController:
    name = "garbagecollector"

    def __init__(self, manager: ControllerManager) -> None:
        from kubegc.controllers.deletionrecords import DeletionRecordSink

        # records wait while the GC works: they would slow the cascades they explain
        self.sink = DeletionRecordSink(manager.client, clock=manager.clock,
                                       ttl=manager.options.decision_ttl,
                                       busy=lambda: not self.gc.is_idle())
        decisions = manager.options.decision_sink  # the planner keeps its own
        if decisions is None:
            decisions = self.sink
        # its events' source is upstream's: garbage-collector-controller
        self.recorder = EventRecorder(manager.client, component=COMPONENT, clock=manager.clock)
        self.gc = GarbageCollector(
            manager.client, informer_factory=manager.informers, recorder=self.recorder,
            clock=manager.clock, decisions=decisions, workers=manager.options.concurrent_gc_syncs,
            sync_period=manager.options.gc_sync_period, ignored_resources=IGNORED_RESOURCES)
        self._resync: asyncio.Task[object] | None = None

    async def start(self) -> None:
        self.recorder.start()
        self.sink.start()
        self.gc.start()

    async def stop(self) -> None:
        await self.gc.stop()
        await self.sink.stop()  # after the GC: writes every record the GC made
        await self.recorder.stop()

    def is_idle(self) -> bool:
        return self.gc.is_idle() and self.sink.is_idle() and self.recorder.is_idle() and (
            self._resync is None or self._resync.done())

    def ready(self) -> bool:
        return True

    def on_catalog_change(self) -> None:
        """A CRD came or went: rediscover resources now rather than at the next period."""
        self._resync = asyncio.ensure_future(self.gc.resync())

    def debug_documents(self) -> dict[str, DebugDocument]:
        def graph(query: dict[str, str]) -> tuple[str, bytes]:
            uids = [u for u in query.get("uid", "").split(",") if u]
            return "text/vnd.graphviz", self.gc.dot(uids or None).encode()

        return {"/debug/controllers/garbagecollector/graph": graph}
