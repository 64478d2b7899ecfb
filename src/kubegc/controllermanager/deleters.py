"""The deleting controllers besides the garbage collector, each with the sink that writes
its deletions as DeletionRecords (kubegc's own: upstream's answer to "who deleted it" is
the audit log): pod GC, taint eviction, and the workload controllers whose history limits
and pod rules delete (StatefulSet, DaemonSet, Deployment), as the manager runs them. The
controllers take a ``kubegc.component.deletions.DeletionSink``; this module hands them the
durable one and starts and stops it with them (``stop`` writes every queued record)."""

from __future__ import annotations

from typing import Any

from kubegc.component.config import PodGCControllerConfiguration
from kubegc.component.context import ControllerContext
from kubegc.controllers.deletionrecords import DeletionRecordSink
from kubegc.controllers.podgc import PodGCController
from kubegc.controllers.statefulset import StatefulSetController
from kubegc.controllers.tainteviction import TaintEvictionController


def _sink(ctx: ControllerContext[Any]) -> DeletionRecordSink:
    # the garbage collector's sink prunes every deleter's expired records
    return DeletionRecordSink(ctx.client, clock=ctx.clock, prune=False)


class _Recorded:
    """Starts and stops a controller's DeletionRecord sink with it (the controller's
    class comes after this one in the bases)."""

    sink: DeletionRecordSink

    async def start(self) -> None:
        self.sink.start()
        await super().start()  # type: ignore[misc]

    async def stop(self) -> None:
        await super().stop()  # type: ignore[misc]
        await self.sink.stop()

    def is_idle(self) -> bool:
        return bool(super().is_idle()) and self.sink.is_idle()  # type: ignore[misc]


class RecordedPodGC(_Recorded, PodGCController):
    def __init__(self, ctx: ControllerContext[PodGCControllerConfiguration]) -> None:
        self.sink = _sink(ctx)
        super().__init__(ctx, deletions=self.sink)


class RecordedTaintEviction(_Recorded, TaintEvictionController):
    def __init__(self, ctx: ControllerContext[Any]) -> None:
        self.sink = _sink(ctx)
        super().__init__(ctx, deletions=self.sink)


class RecordedStatefulSet(_Recorded, StatefulSetController):
    def __init__(self, ctx: ControllerContext[None]) -> None:
        self.sink = _sink(ctx)
        super().__init__(ctx, deletions=self.sink)
