"""The deleting controllers besides the garbage collector, each with the sink that writes
its deletions as DeletionRecords (kubegc's own: upstream's answer to "who deleted it" is
the audit log): pod GC, taint eviction, TTL-after-finished, and the workload
controllers whose history limits and pod rules delete (StatefulSet, DaemonSet,
Deployment, Job, CronJob), as the manager runs them. The controllers take a
``kubegc.component.deletions.DeletionSink``; this module hands them the durable one
and starts and stops it with them (``stop`` writes every queued record) — or, in the
planner's simulation, the manager's in-memory sink (``ControllerContext.deletions``)."""

from __future__ import annotations

from typing import Any

from kubegc.component.config import (
    EndpointControllerConfiguration,
    NamespaceControllerConfiguration,
    PodGCControllerConfiguration,
    ServiceAccountTokenControllerConfiguration,
    TTLAfterFinishedControllerConfiguration,
)
from kubegc.component.context import ControllerContext
from kubegc.component.deletions import DeletionSink
from kubegc.controllers.cronjob import CronJobController
from kubegc.controllers.daemon import DaemonSetsController
from kubegc.controllers.deletionrecords import DeletionRecordSink
from kubegc.controllers.deployment import DeploymentController
from kubegc.controllers.endpoint import EndpointsController
from kubegc.controllers.job import JobController
from kubegc.controllers.namespace import NamespaceController
from kubegc.controllers.podgc import PodGCController
from kubegc.controllers.replicaset import ReplicaSetController
from kubegc.controllers.replication import ReplicationManager
from kubegc.controllers.serviceaccount import TokensController
from kubegc.controllers.statefulset import StatefulSetController
from kubegc.controllers.tainteviction import TaintEvictionController
from kubegc.controllers.ttlafterfinished import TTLAfterFinishedController


def _sink(ctx: ControllerContext[Any]) -> tuple[DeletionSink, DeletionRecordSink | None]:
    """Where the controller's deletions go, and the durable sink to start and stop with it
    (None when the manager keeps deletions in memory: the planner's simulation)."""
    if ctx.deletions is not None:
        return ctx.deletions, None
    # the garbage collector's sink prunes every deleter's expired records
    durable = DeletionRecordSink(ctx.client, clock=ctx.clock, prune=False)
    return durable, durable


class _Recorded:
    """Starts and stops a controller's DeletionRecord sink with it (the controller's
    class comes after this one in the bases)."""

    sink: DeletionRecordSink | None

    async def start(self) -> None:
        if self.sink is not None:
            self.sink.start()
        await super().start()  # type: ignore[misc]

    async def stop(self) -> None:
        await super().stop()  # type: ignore[misc]
        if self.sink is not None:
            await self.sink.stop()

    def is_idle(self) -> bool:
        return bool(super().is_idle()) and (  # type: ignore[misc]
            self.sink is None or self.sink.is_idle())


class RecordedPodGC(_Recorded, PodGCController):
    def __init__(self, ctx: ControllerContext[PodGCControllerConfiguration]) -> None:
        deletions, self.sink = _sink(ctx)
        super().__init__(ctx, deletions=deletions)


class RecordedTaintEviction(_Recorded, TaintEvictionController):
    def __init__(self, ctx: ControllerContext[Any]) -> None:
        deletions, self.sink = _sink(ctx)
        super().__init__(ctx, deletions=deletions)


class RecordedTTLAfterFinished(_Recorded, TTLAfterFinishedController):
    def __init__(self, ctx: ControllerContext[TTLAfterFinishedControllerConfiguration]
                 ) -> None:
        deletions, self.sink = _sink(ctx)
        super().__init__(ctx, deletions=deletions)


class RecordedJob(_Recorded, JobController):
    def __init__(self, ctx: ControllerContext[None]) -> None:
        deletions, self.sink = _sink(ctx)
        super().__init__(ctx, deletions=deletions)


class RecordedCronJob(_Recorded, CronJobController):
    def __init__(self, ctx: ControllerContext[None]) -> None:
        deletions, self.sink = _sink(ctx)
        super().__init__(ctx, deletions=deletions)


class RecordedStatefulSet(_Recorded, StatefulSetController):
    def __init__(self, ctx: ControllerContext[None]) -> None:
        deletions, self.sink = _sink(ctx)
        super().__init__(ctx, deletions=deletions)


class RecordedDaemonSet(_Recorded, DaemonSetsController):
    def __init__(self, ctx: ControllerContext[None]) -> None:
        deletions, self.sink = _sink(ctx)
        super().__init__(ctx, deletions=deletions)


class RecordedDeployment(_Recorded, DeploymentController):
    def __init__(self, ctx: ControllerContext[None]) -> None:
        deletions, self.sink = _sink(ctx)
        super().__init__(ctx, deletions=deletions)


class RecordedReplicaSet(_Recorded, ReplicaSetController):
    def __init__(self, ctx: ControllerContext[None]) -> None:
        deletions, self.sink = _sink(ctx)
        super().__init__(ctx, deletions=deletions)


class RecordedReplicationManager(_Recorded, ReplicationManager):
    def __init__(self, ctx: ControllerContext[None]) -> None:
        deletions, self.sink = _sink(ctx)
        super().__init__(ctx, deletions=deletions)


class RecordedNamespaceController(_Recorded, NamespaceController):
    def __init__(self, ctx: ControllerContext[NamespaceControllerConfiguration]) -> None:
        deletions, self.sink = _sink(ctx)
        super().__init__(ctx, deletions=deletions)


class RecordedTokensController(_Recorded, TokensController):
    def __init__(self, ctx: ControllerContext[ServiceAccountTokenControllerConfiguration]
                 ) -> None:
        deletions, self.sink = _sink(ctx)
        super().__init__(ctx, deletions=deletions)


class RecordedEndpointsController(_Recorded, EndpointsController):
    def __init__(self, ctx: ControllerContext[EndpointControllerConfiguration]) -> None:
        deletions, self.sink = _sink(ctx)
        super().__init__(ctx, deletions=deletions)
