"""Decision records: every write the GC issues, with its reason ("why was this deleted").

The GC calls ``DecisionSink.record`` once for each successful API call it makes on its
own initiative: a deletion, a patch that removes dangling/waiting owner references, an
orphaning patch, a cycle-unblocking patch, a GC finalizer removal. Failed calls are not
recorded (they are retried and recorded when they succeed). Records are values; a sink
must not block (``record`` is synchronous and runs on the GC's event loop) and owns
durability: the durable store (kept 7 days by default) lives on the server side and is
provided by the composition root; ``InMemoryDecisionSink`` is for tests and tools.
"""

from __future__ import annotations

import enum
import logging
from abc import abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from kubegc.api.meta import ObjectReference

log = logging.getLogger(__name__)


class RecordAction(enum.StrEnum):
    DELETE = "delete"
    ORPHAN_PATCH = "orphan-patch"
    UNBLOCK_PATCH = "unblock-patch"
    REMOVE_DANGLING_REFS = "remove-dangling-refs"
    REMOVE_FINALIZER = "remove-finalizer"


class DecisionReason(enum.StrEnum):
    """Machine-readable reason codes (CamelCase, like Kubernetes event reasons)."""

    OWNER_ABSENT = "OwnerAbsent"  # every owner verified absent: 404
    OWNER_RECREATED = "OwnerRecreated"  # an owner seen before: its name now has another uid
    OWNER_IN_OTHER_NAMESPACE = "OwnerInOtherNamespace"  # uid belongs to another namespace
    OWNER_WAITING_FOREGROUND = "OwnerWaitingForeground"  # owner deleting in foreground
    SOLID_OWNER_REMAINS = "SolidOwnerRemains"  # refs removed, object kept
    CYCLE_UNBLOCKING = "CycleUnblocking"  # blockOwnerDeletion set to false
    OWNER_ORPHANING = "OwnerDeletedWithOrphanPolicy"  # owner's ref removed from dependent
    NO_BLOCKING_DEPENDENTS = "NoBlockingDependents"  # foregroundDeletion removed
    DEPENDENTS_ORPHANED = "DependentsOrphaned"  # orphan finalizer removed


class Classification(enum.StrEnum):
    SOLID = "solid"
    DANGLING = "dangling"
    WAITING_FOR_DEPENDENTS_DELETION = "waitingForDependentsDeletion"
    ORPHANED = "orphaned"  # the owner whose reference an orphan-patch removes


@dataclass(frozen=True, slots=True)
class OwnerClassification:
    """One owner reference of the acted-on object and what the GC concluded about it.

    ``detail`` says how: ``NotFound``; ``UIDMismatch`` (the name is held by another uid and
    no object with the referenced uid was ever seen); ``Recreated`` (the name is held by
    another uid and the referenced uid was seen: the owner was deleted and recreated);
    ``ObservedDeleted`` (possibly remembered in the absent-owner cache); ``OtherNamespace``;
    ``Exists``; ``Foreground``.
    """

    api_version: str
    kind: str
    name: str
    uid: str
    classification: Classification
    detail: str = ""


@dataclass(frozen=True, slots=True)
class DeletionRecord:
    """One GC decision that changed the cluster."""

    time: datetime
    action: RecordAction
    object: ObjectReference
    reason: DecisionReason
    message: str
    propagation_policy: str | None = None
    owners: tuple[OwnerClassification, ...] = field(default_factory=tuple)


class DecisionSink(Protocol):
    """Where the GC sends its ``DeletionRecord``s. Must be quick and must not raise."""

    @abstractmethod
    def record(self, rec: DeletionRecord) -> None:
        ...


class InMemoryDecisionSink(DecisionSink):
    """Keeps records in a list, oldest first (tests, tools, short-lived clusters)."""

    def __init__(self) -> None:
        self.records: list[DeletionRecord] = []

    def record(self, rec: DeletionRecord) -> None:
        self.records.append(rec)

    def __iter__(self) -> Iterator[DeletionRecord]:
        return iter(list(self.records))

    def __len__(self) -> int:
        return len(self.records)

    def for_uid(self, uid: str) -> list[DeletionRecord]:
        """Records about the object with ``uid``, oldest first."""
        return [r for r in self.records if r.object.uid == uid]


class NullDecisionSink(DecisionSink):
    """Discards records (the default when no sink is configured)."""

    def record(self, rec: DeletionRecord) -> None:
        return None


def describe_owner(owner: OwnerClassification) -> str:
    text = f"{owner.kind}/{owner.name} (uid {owner.uid})"
    return f"{text}: {owner.detail}" if owner.detail else text


def deletion_reason(owners: tuple[OwnerClassification, ...]) -> tuple[DecisionReason, str]:
    """Reason code and message for deleting an object whose owners are all dangling or
    waiting (at least one owner given)."""
    waiting = [o for o in owners
               if o.classification is Classification.WAITING_FOR_DEPENDENTS_DELETION]
    listed = "; ".join(describe_owner(o) for o in owners)
    if waiting:
        return (DecisionReason.OWNER_WAITING_FOREGROUND,
                f"owner is being deleted in the foreground, no other owner remains: {listed}")
    details = {o.detail for o in owners}
    if DETAIL_OTHER_NAMESPACE in details:
        return (DecisionReason.OWNER_IN_OTHER_NAMESPACE,
                f"owner does not exist in the dependent's namespace: {listed}")
    if DETAIL_RECREATED in details:
        return (DecisionReason.OWNER_RECREATED,
                f"owner name exists with a different uid (owner was recreated): {listed}")
    if DETAIL_UID_MISMATCH in details:
        return (DecisionReason.OWNER_ABSENT,
                "all owners are absent (no object with the referenced uid; its name belongs to "
                f"another object): {listed}")
    return DecisionReason.OWNER_ABSENT, f"all owners are absent: {listed}"


#: ``OwnerClassification.detail`` values.
DETAIL_NOT_FOUND = "NotFound"
DETAIL_UID_MISMATCH = "UIDMismatch"
DETAIL_RECREATED = "Recreated"
DETAIL_OBSERVED_DELETED = "ObservedDeleted"
DETAIL_OTHER_NAMESPACE = "OtherNamespace"
DETAIL_EXISTS = "Exists"
DETAIL_FOREGROUND = "Foreground"


class DecisionRecorder:
    """Builds ``DeletionRecord``s for the GC's actions and hands them to a sink.

    A failing sink is logged and ignored: recording must never stop collection.
    """

    def __init__(self, sink: DecisionSink, *, now: Callable[[], datetime]) -> None:
        self.sink = sink
        self._now = now

    def deleted(self, obj: ObjectReference, policy: str,
                owners: tuple[OwnerClassification, ...]) -> None:
        reason, message = deletion_reason(owners)
        self._record(RecordAction.DELETE, obj, reason, message, policy=policy, owners=owners)

    def dangling_refs_removed(self, obj: ObjectReference,
                              owners: tuple[OwnerClassification, ...]) -> None:
        solid = ", ".join(f"{o.kind}/{o.name}" for o in owners
                          if o.classification is Classification.SOLID)
        self._record(RecordAction.REMOVE_DANGLING_REFS, obj, DecisionReason.SOLID_OWNER_REMAINS,
                     f"removed dangling and waiting owner references; solid owner remains: {solid}",
                     owners=owners)

    def unblocked(self, obj: ObjectReference, dependent: ObjectReference,
                  owners: tuple[OwnerClassification, ...]) -> None:
        self._record(RecordAction.UNBLOCK_PATCH, obj, DecisionReason.CYCLE_UNBLOCKING,
                     f"dependent {dependent} is also deleting its dependents (possible cycle); "
                     "owner references set to blockOwnerDeletion=false", owners=owners)

    def orphaned(self, obj: ObjectReference, owner: ObjectReference) -> None:
        orphaned = OwnerClassification(owner.api_version, owner.kind, owner.name, owner.uid,
                                       Classification.ORPHANED)
        self._record(RecordAction.ORPHAN_PATCH, obj, DecisionReason.OWNER_ORPHANING,
                     f"owner {owner} is being deleted with propagation policy Orphan; its "
                     "owner reference was removed", owners=(orphaned,))

    def finalizer_removed(self, obj: ObjectReference, finalizer: str,
                          reason: DecisionReason) -> None:
        why = ("no dependent with blockOwnerDeletion=true is left"
               if reason is DecisionReason.NO_BLOCKING_DEPENDENTS else "dependents orphaned")
        self._record(RecordAction.REMOVE_FINALIZER, obj, reason,
                     f"removed finalizer {finalizer}: {why}")

    def _record(
        self, action: RecordAction, obj: ObjectReference, reason: DecisionReason, message: str,
        *, policy: str | None = None, owners: tuple[OwnerClassification, ...] = (),
    ) -> None:
        record = DeletionRecord(self._now(), action, obj, reason, message, policy, owners)
        try:
            self.sink.record(record)
        except Exception:
            log.exception("decision sink failed to record %s of %s", action, obj)
