"""The garbage collector's decisions, pure: no I/O, no graph, no clock.

The live GC looks an item's owners up against the API (classify.py) and asks this module
what to do with the item; the tools (``kubegc.tools.ownership``) look the same owners up in
an inventory and ask the same questions, and the planner runs the GC itself. So whatever
explains the GC uses the GC's own rules, written once, here.

The rules are upstream's, from pkg/controller/garbagecollector/garbagecollector.go:

* ``ReferenceClassification`` — ``classifyReferences`` over ``isDangling``'s outcomes: an
  owner that is absent (404, another uid under that name, or remembered absent) is
  *dangling*; one that exists and is being deleted with ``foregroundDeletion`` is
  *waitingForDependentsDeletion*; any other existing owner is *solid*. The first owner
  that cannot be looked up (a kind the RESTMapper cannot map, a failed GET, a
  cluster-scoped item naming a namespaced owner kind) stops the classification: upstream
  returns that error, and the item is decided no further.
* ``before_lookup`` / ``after_lookup`` — ``attemptToDeleteItem``: an item already being
  deleted, and not deleting its own dependents, is left to its deletion; one deleting its
  dependents goes to ``processDeletingDependentsItem``; one without owner references is
  left alone; then: a solid owner keeps it (its dangling and waiting references are
  patched away); a waiting owner and dependents of its own make it deleted in the
  foreground (after unblocking its own owner references if a dependent also deletes its
  dependents: a possible cycle); otherwise it is deleted with the policy its own GC
  finalizer asks for, else in the background.
* ``blocking_dependents`` (graph.py, re-exported) — which dependents keep an owner's
  ``foregroundDeletion``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubegc.api.meta import (
    FINALIZER_DELETE_DEPENDENTS,
    FINALIZER_ORPHAN_DEPENDENTS,
    DeletionPropagation,
)
from kubegc.controllers.garbagecollector import records as rec
from kubegc.controllers.garbagecollector.graph import OwnerRef, blocking_dependents


class LookupOutcome(enum.StrEnum):
    """What looking up one owner reference found (cf. ``isDangling``'s results)."""

    ABSENT = "absent"  # dangling: 404, another uid under that name, or remembered absent
    FOUND = "found"  # an object with the referenced uid
    UNMAPPABLE = "unmappable"  # the RESTMapper cannot map apiVersion/kind: retried
    INVALID_SCOPE = "invalid-scope"  # a cluster-scoped item names a namespaced kind
    FAILED = "failed"  # the lookup itself failed (a GET error, an owner not read)

    @property
    def stops(self) -> bool:
        """Whether this outcome ends the classification (upstream returns an error)."""
        return self not in (LookupOutcome.ABSENT, LookupOutcome.FOUND)


@dataclass(frozen=True, slots=True)
class OwnerLookup:
    """One owner reference looked up.

    ``detail`` says how it was concluded, in the DeletionRecord vocabulary (``NotFound``,
    ``UIDMismatch``, ``NoSuchUID``, ``ObservedDeleted``, ``OtherNamespace``; ``Exists``,
    ``Foreground``). ``error`` is the failure of a FAILED lookup, for the caller to report.
    """

    outcome: LookupOutcome
    detail: str = ""
    deleting_dependents: bool = False  # FOUND: being deleted with foregroundDeletion
    error: BaseException | None = None

    @classmethod
    def absent(cls, detail: str) -> OwnerLookup:
        found = _ABSENT.get(detail)  # a value, made once per detail (not per cascade item)
        if found is None:
            found = cls(LookupOutcome.ABSENT, detail)
            if len(_ABSENT) < _ABSENT_KEPT:
                _ABSENT[detail] = found
        return found

    @classmethod
    def found(cls, owner: Mapping[str, Any]) -> OwnerLookup:
        """The owner exists (with the referenced uid); ``owner`` is its object."""
        return _FOREGROUND if is_deleting_dependents(owner) else _EXISTS

    @classmethod
    def failed(cls, outcome: LookupOutcome, error: BaseException | None = None,
               detail: str = "") -> OwnerLookup:
        if not outcome.stops:
            raise ValueError(f"{outcome} is not a failed lookup")
        return cls(outcome, detail, error=error)


_ABSENT: dict[str, OwnerLookup] = {}
_ABSENT_KEPT = 16  # the details ``classify`` concludes are a handful
_EXISTS = OwnerLookup(LookupOutcome.FOUND, rec.DETAIL_EXISTS)
_FOREGROUND = OwnerLookup(LookupOutcome.FOUND, rec.DETAIL_FOREGROUND, deleting_dependents=True)


@dataclass(frozen=True, slots=True)
class Classified:
    """An item's owner references split three ways (cf. ``classifyReferences``), with
    how each owner was concluded (for records). ``stopped`` is the lookup that ended the
    classification early, if one did; the split is then incomplete and decides nothing."""

    solid: tuple[OwnerRef, ...]
    dangling: tuple[OwnerRef, ...]
    waiting_for_dependents_deletion: tuple[OwnerRef, ...]
    owners: tuple[rec.OwnerClassification, ...] = ()
    stopped: OwnerLookup | None = None
    stopped_at: OwnerRef | None = None


class ReferenceClassification:
    """Builds a ``Classified`` one looked-up reference at a time, in reference order.

    ``add`` returns False once a lookup stops the classification; the caller then looks
    up no further owner (upstream's loop returns at the first error)."""

    __slots__ = ("_dangling", "_owners", "_solid", "_stopped", "_stopped_at", "_waiting")

    def __init__(self) -> None:
        self._solid: list[OwnerRef] = []
        self._dangling: list[OwnerRef] = []
        self._waiting: list[OwnerRef] = []
        self._owners: list[rec.OwnerClassification] = []
        self._stopped: OwnerLookup | None = None
        self._stopped_at: OwnerRef | None = None

    def add(self, ref: OwnerRef, lookup: OwnerLookup) -> bool:
        if self._stopped is not None:
            raise ValueError("the classification already stopped")
        if lookup.outcome.stops:
            self._stopped, self._stopped_at = lookup, ref
            return False
        if lookup.outcome is LookupOutcome.ABSENT:
            self._dangling.append(ref)
            kind = rec.Classification.DANGLING
        elif lookup.deleting_dependents:
            self._waiting.append(ref)
            kind = rec.Classification.WAITING_FOR_DEPENDENTS_DELETION
        else:
            self._solid.append(ref)
            kind = rec.Classification.SOLID
        self._owners.append(rec.OwnerClassification(
            ref.api_version, ref.kind, ref.name, ref.uid, kind, lookup.detail))
        return True

    def result(self) -> Classified:
        return Classified(tuple(self._solid), tuple(self._dangling), tuple(self._waiting),
                          tuple(self._owners), self._stopped, self._stopped_at)


def classify_references(lookups: Iterable[tuple[OwnerRef, OwnerLookup]]) -> Classified:
    """``ReferenceClassification`` over lookups already made (the tools' form)."""
    builder = ReferenceClassification()
    for ref, lookup in lookups:
        if not builder.add(ref, lookup):
            break
    return builder.result()


class Action(enum.StrEnum):
    """What ``attemptToDeleteItem`` does with an item."""

    NONE = "none"  # no owner reference, or solid owners and nothing to patch away
    WAIT_FOR_DELETION = "wait-for-deletion"  # being deleted (not in the foreground)
    PROCESS_DELETING_DEPENDENTS = "process-deleting-dependents"  # deleting its dependents
    REMOVE_REFERENCES = "remove-references"  # a solid owner remains: patch the rest away
    DELETE = "delete"  # every owner dangling or waiting
    RETRY = "retry"  # an owner could not be looked up (kind unmappable, lookup failed)
    NEVER = "never"  # a cluster-scoped item names a namespaced owner: not retried


@dataclass(frozen=True, slots=True)
class ItemState:
    """What the decision reads of the item: its graph node (being deleted, deleting its
    dependents, its dependents) and the finalizers of its latest copy."""

    being_deleted: bool
    deleting_dependents: bool
    finalizers: tuple[str, ...] = ()
    dependents: int = 0
    #: some dependent is itself deleting its dependents (a possible ownership cycle)
    dependent_deleting_dependents: bool = False


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    classified: Classified | None = None
    policy: DeletionPropagation | None = None  # DELETE: the propagation policy sent
    #: DELETE: first set blockOwnerDeletion=false on the item's own owner references
    #: (``unblockOwnerReferences``: a dependent also waits, maybe a cycle)
    unblock_owner_references: bool = False

    @property
    def remove_uids(self) -> tuple[str, ...]:
        """REMOVE_REFERENCES: the uids of the references patched away (dangling and
        waiting ones: a waiting owner would otherwise wait for this item forever)."""
        c = self.classified
        if self.action is not Action.REMOVE_REFERENCES or c is None:
            return ()
        return tuple(r.uid for r in (*c.dangling, *c.waiting_for_dependents_deletion))


def is_deleting_dependents(obj: Mapping[str, Any]) -> bool:
    """Being deleted with ``foregroundDeletion``: an owner its dependents wait for."""
    meta = obj.get("metadata") or {}
    return bool(meta.get("deletionTimestamp")) and FINALIZER_DELETE_DEPENDENTS in (
        meta.get("finalizers") or ())


def own_policy(finalizers: Iterable[str]) -> DeletionPropagation:
    """The policy an item with no solid or waiting owner is deleted with: the one its own
    GC finalizer asks for (``foregroundDeletion`` over ``orphan``), else Background."""
    present = set(finalizers)
    if FINALIZER_DELETE_DEPENDENTS in present:
        return DeletionPropagation.FOREGROUND
    if FINALIZER_ORPHAN_DEPENDENTS in present:
        return DeletionPropagation.ORPHAN
    return DeletionPropagation.BACKGROUND


def waits_for_deletion(item: ItemState) -> bool:
    """Being deleted, and not waiting for its dependents: the GC leaves it to the deletion
    under way (upstream checks this first, before even reading the item)."""
    return item.being_deleted and not item.deleting_dependents


def before_lookup(item: ItemState, *, has_references: bool) -> Decision | None:
    """The decisions ``attemptToDeleteItem`` takes before looking any owner up; None when
    the owners must be classified (then ``after_lookup``)."""
    if waits_for_deletion(item):
        return Decision(Action.WAIT_FOR_DELETION)
    if item.deleting_dependents:
        return Decision(Action.PROCESS_DELETING_DEPENDENTS)
    if not has_references:
        return Decision(Action.NONE)
    return None


def after_lookup(item: ItemState, classified: Classified) -> Decision:
    """``attemptToDeleteItem``'s switch over the classified owners."""
    stopped = classified.stopped
    if stopped is not None:
        action = Action.NEVER if stopped.outcome is LookupOutcome.INVALID_SCOPE else Action.RETRY
        return Decision(action, classified)
    if classified.solid:
        if not classified.dangling and not classified.waiting_for_dependents_deletion:
            return Decision(Action.NONE, classified)
        return Decision(Action.REMOVE_REFERENCES, classified)
    if classified.waiting_for_dependents_deletion and item.dependents:
        return Decision(Action.DELETE, classified, DeletionPropagation.FOREGROUND,
                        unblock_owner_references=item.dependent_deleting_dependents)
    return Decision(Action.DELETE, classified, own_policy(item.finalizers))


def decide(item: ItemState, lookups: Sequence[tuple[OwnerRef, OwnerLookup]]) -> Decision:
    """The whole decision over lookups already made (the tools' form)."""
    early = before_lookup(item, has_references=bool(lookups))
    if early is not None:
        return early
    return after_lookup(item, classify_references(lookups))


__all__ = [
    "Action",
    "Classified",
    "Decision",
    "ItemState",
    "LookupOutcome",
    "OwnerLookup",
    "ReferenceClassification",
    "after_lookup",
    "before_lookup",
    "blocking_dependents",
    "classify_references",
    "decide",
    "is_deleting_dependents",
    "own_policy",
    "waits_for_deletion",
]
