"""The cluster's clock as its objects show it (``read_inventory``'s
``follow_cluster_clock``).

A cluster stamps objects with its own clock, which may be ahead of this machine's
(``kubegc serve --time-scale``, or plain skew). ``cluster_time`` is the latest time the
cluster wrote into the objects read; ``judging_time`` the time ages are then judged on,
with a note when it is the cluster's.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from kubegc.api.clock import format_time, parse_time_or_none
from kubegc.api.types import Obj
from kubegc.tools.model import human_duration

#: Seconds the cluster's clock may be ahead of ours before ages are judged on its time.
CLOCK_SKEW_TOLERANCE = 5.0


def _mapping(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def cluster_time(objects: Iterable[Obj]) -> datetime | None:
    """The latest time the cluster wrote into its objects: creation times, the times of
    managedFields entries and Leases' renew times (leaders renew every few seconds)."""
    stamps = Stamps()
    for obj in objects:
        stamps.add_object(obj)
    return stamps.latest()


class Stamps:
    """``cluster_time`` an object at a time, for a caller that walks the objects anyway
    (``Inventory``'s walk over a dump's objects).

    Ownership: one per read of many objects."""

    __slots__ = ("distinct", "others")

    def __init__(self) -> None:
        self.distinct: set[str] = set()  # objects share their creation second: parsed once
        self.others: list[object] = []

    def add(self, obj: Obj, meta: dict[str, Any]) -> None:
        """The times ``obj`` (whose metadata is ``meta``, a map) says the cluster wrote."""
        stamp = meta.get("creationTimestamp")
        if type(stamp) is str:
            self.distinct.add(stamp)
        elif stamp:
            self.others.append(stamp)
        if "managedFields" in meta or obj.get("kind") == "Lease":
            self.others.extend(_other_stamps(obj, meta))

    def add_object(self, obj: object) -> None:
        """``add`` of anything: an object with a metadata map."""
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        if meta and isinstance(meta, dict):
            self.add(obj, meta)  # type: ignore[arg-type]

    def latest(self) -> datetime | None:
        latest: datetime | None = None
        for stamp in (*self.distinct, *self.others):
            t = parse_time_or_none(stamp)
            if t is not None and (latest is None or t > latest):
                latest = t
        return latest


def _other_stamps(obj: Obj, meta: dict[str, Any]) -> list[object]:
    """The times of ``obj``'s managedFields entries and, for a Lease, its renew times."""
    managed = meta.get("managedFields")
    stamps = [m.get("time") for m in managed if isinstance(m, dict)] if isinstance(
        managed, list) else []
    if obj.get("kind") == "Lease":
        spec = _mapping(obj.get("spec"))
        stamps += [spec.get("renewTime"), spec.get("acquireTime")]
    return [stamp for stamp in stamps if stamp]


def judging_time(cluster: datetime | None, now: datetime) -> tuple[datetime, list[str]]:
    if cluster is None or (cluster - now).total_seconds() <= CLOCK_SKEW_TOLERANCE:
        return now, []
    lead = human_duration((cluster - now).total_seconds())
    return cluster, [f"the cluster's clock is {lead} ahead of this machine's (the latest time "
                     f"it wrote is {format_time(cluster)}; a kubegc run with --time-scale?): "
                     "ages are judged on the cluster's time"]
