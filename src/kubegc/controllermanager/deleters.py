"""The deleting controllers besides the garbage collector, each with the sink that writes
its deletions as DeletionRecords (kubegc's own: upstream's answer to "who deleted it" is
the audit log). A deleting controller takes ``deletions=`` (a
``kubegc.component.deletions.DeletionSink``); ``recorded(Controller)`` is the class the
manager runs instead (``descriptors``): it hands the controller the durable sink and starts
and stops it with it (``stop`` writes every queued record) — or, in the planner's
simulation, the manager's in-memory sink (``ControllerContext.deletions``)."""

from __future__ import annotations

from typing import Any, TypeVar

from kubegc.component.context import ControllerContext
from kubegc.component.deletions import DeletionSink
from kubegc.controllers.deletionrecords import DeletionRecordSink


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
    queue: Any

    def is_working(self) -> bool:
        """A worker has a key in hand or keys are ready: the controller is using the loop
        (not while a key only waits for a retry or a requeue's delay)."""
        return len(self.queue) > 0 or self.queue.processing_count() > 0

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


T = TypeVar("T", bound=type)


def recorded(base: T, *, hold_back: bool = False) -> T:
    """``base`` (a controller class taking ``deletions=``) as the manager runs it: a
    subclass, ``Recorded<Name>``, that builds its sink and starts and stops it with it.
    ``hold_back``: its records wait while it works (``is_working``), as the garbage
    collector's do, for a controller whose one sync may delete many objects (the
    namespace controller: writing a 100k-object namespace's records while it still
    deletes the rest took the loop from the deletion they explain; issue 27). They wait
    ``MAX_DEFER`` seconds at most, and no more than ``MAX_PENDING`` of them."""

    def __init__(self: Any, ctx: ControllerContext[Any]) -> None:
        deletions, self.sink = _sink(ctx)
        base.__init__(self, ctx, deletions=deletions)  # type: ignore[misc]
        if hold_back and self.sink is not None:
            self.sink.busy = self.is_working

    name = f"Recorded{base.__name__}"
    return type(name, (_Recorded, base), {  # type: ignore[return-value]
        "__init__": __init__, "__module__": __name__, "__qualname__": name,
        "__doc__": base.__doc__})
