"""What keeps the scenarios' in-process kubegc from settling, for the message of a scenario
that waited too long (``plan_reality.quiet``): the controllers not idle and the garbage
collector's queue (a retry waiting for ever shows there). It reads the in-process kubegc's
internals from the test's thread: for a message only."""

from __future__ import annotations

from typing import Any

from kubegc.testing import Cluster


def _gc(cluster: Cluster) -> Any:
    manager = cluster.cluster.controller_manager
    if manager is None:
        return None
    ctl: Any = next((c for c in manager.controllers if c.name == "garbagecollector"), None)
    return ctl


def unsettled(cluster: Cluster) -> str:
    """What keeps kubegc from settling (the controllers not idle, the GC's queue)."""
    manager = cluster.cluster.controller_manager
    if manager is None:
        return ""
    names = [c.name for c in manager.controllers if not c.is_idle()]
    ctl = _gc(cluster)
    detail = ""
    if ctl is not None:
        queue = ctl.gc.attempt_to_delete
        detail = (f"; the GC's queue: {len(queue)} ready, {queue.processing_count()} in "
                  f"flight, waiting {[str(getattr(n, 'identity', n)) for n in queue._waiting]}")
    return f"; kubegc not settled, controllers not idle: {names}{detail}"
