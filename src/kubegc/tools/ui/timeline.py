"""The timeline of one object's deletion, for the page: requested, finalizers removed,
dependents gone, gone.

Evidence, each step saying where it comes from (``source``):
* ``metadata``: the object's own ``deletionTimestamp`` (for a graceful pod, the request is
  that minus ``deletionGracePeriodSeconds``: ``state.deletion_timing``), as it is now or,
  once it is gone, as the page last saw it;
* ``DeletionRecord``: what ``kubegc why`` reads (``why.explain``'s entries: the garbage
  collector's ``remove-finalizer`` of ``foregroundDeletion`` once no blocking dependent is
  left, as upstream's ``processDeletingDependentsItem``; its ``delete`` of the object; an
  eviction) and ``why.dependent_deletions``: the garbage collector's DELETEs of the
  dependents that named this object as their owner (``attemptToDeleteItem``);
* ``watch``: what the page's informers saw — a finalizer leaving a Terminating object (a
  controller or a user removed it: no record names who) and the object leaving the
  cluster — at the time the page saw it (``Observations``).
No rule of ``why`` is repeated here: the steps are its entries, in time order.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kubegc.api.clock import format_time
from kubegc.api.meta import FINALIZER_DELETE_DEPENDENTS as FOREGROUND
from kubegc.api.meta import GC_FINALIZERS, finalizers_of
from kubegc.api.types import Obj
from kubegc.tools.state import deletion_timing
from kubegc.tools.why_report import Entry, WhyReport

#: Objects whose deletion the page remembers (the oldest are forgotten first).
REMEMBERED = 2000

#: step kinds, in the order they happen at the same second
REQUESTED = "requested"
DEPENDENT_DELETED = "dependent deleted"
FINALIZER_REMOVED = "finalizer removed"
DEPENDENTS_GONE = "dependents gone"
DELETED = "deleted"
GONE = "gone"
_RANK = {REQUESTED: 0, DEPENDENT_DELETED: 1, DEPENDENTS_GONE: 2, FINALIZER_REMOVED: 3,
         DELETED: 4, GONE: 5}
#: the reason of the garbage collector's removal of foregroundDeletion
#: (``processDeletingDependentsItem``: no blocking dependent is left)
NO_BLOCKING_DEPENDENTS = "NoBlockingDependents"


@dataclass
class Seen:
    """What the page's informers saw of one object being deleted."""

    last: Obj
    finalizers_removed: list[tuple[str, str]]  # (finalizer, time seen)
    gone: str = ""  # time seen gone
    foreground: bool = False  # seen with foregroundDeletion


class Observations:
    """Finalizers seen leaving Terminating objects, and objects seen leaving the cluster
    (any object: a dependent deleted at once never was Terminating), kept for the last
    ``REMEMBERED`` objects (``LiveObjects`` feeds it)."""

    def __init__(self, limit: int = REMEMBERED) -> None:
        self._seen: OrderedDict[str, Seen] = OrderedDict()
        self._limit = limit

    def changed(self, oid: str, old: Obj | None, new: Obj | None, now: datetime) -> None:
        """``new`` None: the object was deleted."""
        obj = new if new is not None else old
        if obj is None or (new is not None
                           and not (obj.get("metadata") or {}).get("deletionTimestamp")):
            if new is not None and oid in self._seen:
                self._seen.pop(oid)  # another incarnation, not being deleted
            return
        seen = self._seen.get(oid)
        if seen is None:
            seen = self._seen[oid] = Seen(obj, [])
            while len(self._seen) > self._limit:
                self._seen.popitem(last=False)
        if old is not None and (old.get("metadata") or {}).get("deletionTimestamp"):
            kept = set(finalizers_of(new)) if new is not None else set()
            seen.finalizers_removed.extend((f, format_time(now)) for f in finalizers_of(old)
                                           if f not in kept)
        seen.last = obj
        seen.foreground = seen.foreground or FOREGROUND in finalizers_of(obj)
        if new is None:
            seen.gone = format_time(now)

    def get(self, oid: str) -> Seen | None:
        return self._seen.get(oid)


@dataclass(frozen=True)
class Step:
    time: str
    what: str  # one of the step kinds above
    text: str
    source: str  # "metadata" | "DeletionRecord" | "watch"
    #: 1: after the object's own steps, whatever the times say (the garbage collector
    #: deletes a gone owner's dependents only once it saw it gone: what the page saw may
    #: come a moment after, on another informer)
    phase: int = 0

    def key(self) -> tuple[int, str, int]:
        return self.phase, self.time, _RANK[self.what]

    def to_dict(self) -> dict[str, Any]:
        return {"time": self.time, "step": self.what, "text": self.text, "source": self.source}


def _entry_step(entry: Entry) -> Step | None:
    if entry.source != "DeletionRecord":
        return None
    if entry.action == "remove-finalizer" and entry.reason == NO_BLOCKING_DEPENDENTS:
        return Step(entry.time, DEPENDENTS_GONE, f"no blocking dependent left: {entry.who} "
                    f"removed foregroundDeletion ({entry.reason})", entry.source)
    if entry.action == "remove-finalizer":
        return Step(entry.time, FINALIZER_REMOVED,
                    f"{entry.who} removed a finalizer ({entry.reason}): {entry.message}",
                    entry.source)
    if entry.action in ("delete", "evict"):
        by = (entry.user or "a user") if entry.action == "evict" else entry.who
        return Step(entry.time, DELETED, f"DELETE sent by {by} ({entry.reason}): "
                    f"{entry.message}", entry.source)
    return None


def _requested(last: Obj, now: datetime) -> list[Step]:
    timing = deletion_timing(last, now)
    if timing is None:
        return []
    grace = (f" (grace period {timing.grace_seconds}s, ends at {timing.deletion_timestamp})"
             if timing.grace_seconds else "")
    return [Step(format_time(timing.requested), REQUESTED,
                 f"deletion requested: deletionTimestamp set{grace}; finalizers then: "
                 f"{', '.join(finalizers_of(last)) or 'none'}", "metadata")]


def _seen_steps(seen: Seen, recorded: bool) -> list[Step]:
    """What the page saw; a GC finalizer's removal only when no record says it."""
    steps = [Step(when, FINALIZER_REMOVED, f"finalizer {finalizer} removed (seen by the "
                  "page; no record says by whom)", "watch")
             for finalizer, when in seen.finalizers_removed
             if not (recorded and finalizer in GC_FINALIZERS)]
    if seen.gone:
        steps.append(Step(seen.gone, GONE, "gone from the cluster (seen by the page)", "watch"))
    return steps


def _dependent_steps(uid: str, dependents: list[Entry], observed: Observations,
                     foreground: bool) -> list[Step]:
    """The garbage collector's DELETEs of the dependents; for a gone owner's (background),
    when the page saw the last of them go. ``foreground``: the owner was seen with
    foregroundDeletion (its dependents went while it waited)."""
    if not dependents:
        return []
    foreground = foreground or any(
        o.get("uid") == uid and o.get("classification") == "waitingForDependentsDeletion"
        for e in dependents for o in e.owners)
    phase = 0 if foreground else 1
    steps = [Step(e.time, DEPENDENT_DELETED, f"dependent {e.object.short} deleted by "
                  f"{e.who} ({e.reason})", e.source, phase) for e in dependents]
    gone = [seen.gone for e in dependents
            if (seen := observed.get(e.object.uid)) is not None and seen.gone]
    if not foreground and len(gone) == len(dependents):
        names = ", ".join(e.object.short for e in dependents)
        steps.append(Step(max(gone), DEPENDENTS_GONE, f"dependents gone: {names} (seen by "
                          "the page)", "watch", phase))
    return steps


def timeline(obj: Obj | None, why: WhyReport, dependents: list[Entry],
             observed: Observations, oid: str, now: datetime) -> list[dict[str, Any]]:
    """The steps of the deletion of ``obj`` (None: gone, as the page last saw it), oldest
    first; none for an object not being deleted and never seen deleting."""
    seen = observed.get(oid)
    last = obj if obj is not None else (seen.last if seen is not None else None)
    steps = _requested(last, now) if last is not None else []
    mine = [e for e in why.entries if not why.query.uid or e.object.uid == why.query.uid]
    steps.extend(s for e in mine if (s := _entry_step(e)) is not None)
    if seen is not None:
        steps.extend(_seen_steps(seen, any(e.action == "remove-finalizer" for e in mine)))
    foreground = (last is not None and FOREGROUND in finalizers_of(last)) or (
        seen is not None and seen.foreground) or any(s.what == DEPENDENTS_GONE for s in steps)
    steps.extend(_dependent_steps(why.query.uid, dependents, observed, foreground))
    steps.sort(key=Step.key)
    return [s.to_dict() for s in steps]
