"""The garbage collector as a controller of the manager (cf. kube-controller-manager's
``startGarbageCollectorController``): wiring, debug graph, resync on CRD changes, and its
decision records."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from kubegc.component.config import GarbageCollectorControllerConfiguration
from kubegc.component.context import ControllerContext, DebugDocument
from kubegc.component.pending import Pending
from kubegc.controllers.deletionrecords import DeletionRecordSink
from kubegc.controllers.garbagecollector import GarbageCollector, InMemoryDecisionSink
from kubegc.controllers.garbagecollector.owner_ref_warnings import COMPONENT
from kubegc.controllers.garbagecollector.resources import DEFAULT_IGNORED_RESOURCES

#: kubegc's own deletion records are never owners or dependents.
IGNORED_RESOURCES = DEFAULT_IGNORED_RESOURCES | {("kubegc.io", "deletionrecords")}


class GarbageCollectorController:
    name = "garbagecollector"
    #: its events' source is upstream's: garbage-collector-controller
    component = COMPONENT

    def __init__(self, ctx: ControllerContext[GarbageCollectorControllerConfiguration]) -> None:
        opts = ctx.options
        # records wait while the GC works: they would slow the cascades they explain (not
        # while an item only waits for a retry: a DELETE a webhook refuses waits for ever)
        self.sink = DeletionRecordSink(ctx.client, clock=ctx.clock, ttl=opts.decision_ttl,
                                       busy=self.gc_is_working)
        #: the planner's simulation keeps the records in memory: they explain its steps,
        #: nobody reads them later, and writing 10,000 costs a third of a 10,000-object plan
        self.memory = InMemoryDecisionSink() if opts.records_in_memory else None
        self.recorder = ctx.recorder
        self.gc = GarbageCollector(
            ctx.client, informer_factory=ctx.informer_factory, recorder=self.recorder,
            clock=ctx.clock, decisions=self.memory if self.memory is not None else self.sink,
            workers=opts.concurrent_gc_syncs,
            sync_period=opts.gc_sync_period, ignored_resources=IGNORED_RESOURCES)
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

    def gc_is_working(self) -> bool:
        return self.gc.is_working()

    def pending(self) -> Pending:
        """The GC's pending work (``GarbageCollector.pending``), with the records and
        events not yet written and a resync in progress."""
        pending = self.gc.pending()
        other = list(pending.other)
        if not self.sink.is_idle():
            other.append("DeletionRecords to write")
        if not self.recorder.is_idle():
            other.append("events to write")
        if self._resync is not None and not self._resync.done():
            other.append("rediscovering resources")
        return replace(pending, component=self.name, other=tuple(other))

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
