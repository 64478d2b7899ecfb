"""The planner's report: what a delete would do, in order.

Built from the ``Recorder``'s changes (``build_report``): the steps (deletionTimestamp
set, finalizers added/removed, ownerReferences removed or unblocked, objects deleted),
each attributed to whoever did it and, for the garbage collector's actions, the reason
from its DeletionRecord; then the summary: deleted objects in order, the order
constraints the GC enforced (foreground: blocking dependents before their owner;
orphan: references removed before the owner goes), survivors (objects that lost a
reference but stay, and why) and what hangs (still deleting when the cluster went quiet).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kubegc.api.clock import format_time
from kubegc.api.meta import DeletionPropagation
from kubegc.tools.doctor.findings import Finding
from kubegc.tools.model import ObjRef
from kubegc.tools.plan.workloads import Reaction


class StepAction(enum.StrEnum):
    REQUESTED = "delete requested"
    DELETION_STARTED = "deletionTimestamp set"
    FINALIZER_ADDED = "finalizer added"
    FINALIZER_REMOVED = "finalizer removed"
    OWNER_REF_REMOVED = "ownerReference removed"
    OWNER_REF_UNBLOCKED = "blockOwnerDeletion set to false"
    DELETED = "deleted"
    # the other operations' own steps (``operations``, ``drain``)
    EVICTION_REQUESTED = "eviction requested"
    EVICTION_REFUSED = "eviction refused"
    DRAIN_REQUESTED = "drain requested"
    CORDONED = "cordoned"
    SKIPPED = "skipped by drain"
    TAINTED = "taint added"
    KUBELET_STOPPED = "kubelet stopped"
    NODE_UNKNOWN = "node Ready=Unknown"


@dataclass(frozen=True, slots=True)
class Step:
    seq: int
    time: float  # simulated seconds after the delete request
    action: StepAction
    object: ObjRef
    detail: str = ""
    by: str = ""  # who did it
    reason: str = ""  # the GC's reason code and message, when the GC did it
    #: when it happens at the latest on a real cluster, if later than ``time`` (a grace
    #: period the simulated kubelet did not use: ``bounds``); None: ``time`` itself
    latest: float | None = None
    #: when it happens at the earliest on a real cluster, if earlier than ``time`` (a lost
    #: node noticed within a monitor period: ``lost_node``); None: ``time`` itself
    earliest: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "time": round(self.time, 3), "action": self.action.value,
                "object": self.object.to_dict(), "detail": self.detail, "by": self.by,
                "reason": self.reason,
                "latest": round(self.latest, 3) if self.latest is not None else None,
                "earliest": round(self.earliest, 3) if self.earliest is not None else None}


@dataclass
class Outcome:
    """What an operation other than a delete came to (``plan evict|drain|taint|
    stop-kubelet``): ``result`` (evicted, refused, drained, blocked, ...), whether it
    finished (``completes``), said in one line; ``finished_at``/``finished_by``: when its
    last step came in the simulation and at the latest on a real cluster."""

    verb: str
    result: str
    completes: bool
    text: str
    error: str = ""
    finished_at: float | None = None
    finished_by: float | None = None

    def to_dict(self) -> dict[str, Any]:
        def r(v: float | None) -> float | None:
            return round(v, 3) if v is not None else None
        return {"verb": self.verb, "result": self.result, "completes": self.completes,
                "text": self.text, "error": self.error or None,
                "finishedAt": r(self.finished_at), "finishedBy": r(self.finished_by)}


@dataclass(frozen=True, slots=True)
class Constraint:
    first: ObjRef
    first_event: str  # "deleted" | "ownerReference removed"
    then: ObjRef  # deleted after ``first``'s event
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"first": self.first.to_dict(), "firstEvent": self.first_event,
                "then": self.then.to_dict(), "why": self.why}

    def __str__(self) -> str:
        return f"{self.first} {self.first_event} before {self.then} deleted ({self.why})"


@dataclass(frozen=True, slots=True)
class Survivor:
    object: ObjRef
    lost: tuple[ObjRef, ...]  # owners whose references were removed
    kept_by: tuple[ObjRef, ...]  # owners that remain (empty: orphaned)
    #: deleted owners it keeps a reference to, which the garbage collector never acts on
    #: (a cluster-scoped dependent of a namespaced owner: OwnerRefInvalidNamespace)
    dangling: tuple[ObjRef, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"object": self.object.to_dict(), "lostOwners": [o.to_dict() for o in self.lost],
                "keptBy": [o.to_dict() for o in self.kept_by],
                "danglingOwners": [o.to_dict() for o in self.dangling]}


@dataclass(frozen=True, slots=True)
class Reference:
    """An ownerReference as it was when the delete was issued (for the graph)."""

    dependent: ObjRef
    owner: ObjRef  # the object with that uid, or the reference's own coordinates if none
    block_owner_deletion: bool
    controller: bool
    owner_found: bool


@dataclass(frozen=True, slots=True)
class Holder:
    """What holds a hanging object: a blocking dependent at the end of its chain, its own
    finalizer, or (a namespace) an object inside with finalizers."""

    object: ObjRef
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"object": self.object.to_dict(), "reason": self.reason}


@dataclass(frozen=True, slots=True)
class OrderDependent:
    """An object whose outcome depends on the order the GC takes dependents in (``races``)."""

    object: ObjRef
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"object": self.object.to_dict(), "why": self.why}


@dataclass(frozen=True, slots=True)
class Hang:
    object: ObjRef
    held_by: tuple[Holder, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"object": self.object.to_dict(), "heldBy": [h.to_dict() for h in self.held_by]}


@dataclass(frozen=True, slots=True)
class KindCount:
    """How many objects of one kind each outcome has (the summary's rows)."""

    kind: str  # Kind, or Kind.group for other groups than the core one
    deleted: int = 0
    hanging: int = 0
    orphaned: int = 0  # lost every owner and stays
    kept: int = 0  # lost an owner, kept by another

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "deleted": self.deleted, "hanging": self.hanging,
                "orphaned": self.orphaned, "keptByOtherOwners": self.kept}


@dataclass
class Verdict:
    """What goes, what stays, what hangs and on whom — the first thing the plan says."""

    completes: bool  # the target is deleted and nothing is left deleting
    text: str
    hangs: list[Hang] = field(default_factory=list)
    by_kind: list[KindCount] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"completes": self.completes, "text": self.text,
                "hangs": [h.to_dict() for h in self.hangs]}


@dataclass
class PlanReport:
    source: str
    target: ObjRef
    propagation: DeletionPropagation | None  # None: the server's default
    controllers: list[str]
    steps: list[Step] = field(default_factory=list)
    #: what the garbage collector does anyway, before the delete (broken references ...)
    pending: list[Step] = field(default_factory=list)
    deleted: list[ObjRef] = field(default_factory=list)
    constraints: list[Constraint] = field(default_factory=list)
    survivors: list[Survivor] = field(default_factory=list)
    hanging: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: list[ObjRef] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    simulated_seconds: float = 0.0
    error: str = ""  # the delete itself was refused
    #: when the source was read: the plan's delete is taken to be issued then
    time: datetime | None = None
    #: when what hangs is judged: the end of the simulation on the plan's time line (None
    #: for a dump: its reading is its present, and a hang has no end to date)
    judged_at: datetime | None = None
    #: the same in seconds after the reading
    judged_after: float = 0.0
    objects_read: int = 0
    objects_simulated: int = 0  # the objects the delete can touch (``scope``)
    verdict: Verdict | None = None  # set last, from the rest (``verdict.verdict_of``)
    #: outcomes another order of the garbage collector's work could change (``races``)
    order_dependent: list[OrderDependent] = field(default_factory=list)
    #: workloads that stay and lose objects their controllers manage: what those
    #: controllers do about it is not simulated (``workloads``)
    reactions: list[Reaction] = field(default_factory=list)
    #: the ownerReferences of the simulated objects at the delete (drawn by ``-o dot``;
    #: not in the JSON, whose readers have the objects)
    references: list[Reference] = field(default_factory=list)
    #: the operation planned when it is not a delete (``plan evict|drain|taint|stop-kubelet``)
    operation: Outcome | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source, "target": self.target.to_dict(),
            "propagationPolicy": self.propagation or None, "controllers": self.controllers,
            "error": self.error or None,
            "steps": [s.to_dict() for s in self.steps],
            "pendingBeforeDelete": [s.to_dict() for s in self.pending],
            "deleted": [d.to_dict() for d in self.deleted],
            "orderConstraints": [c.to_dict() for c in self.constraints],
            "survivors": [s.to_dict() for s in self.survivors],
            "hanging": [h.to_dict() for h in self.hanging],
            "warnings": self.warnings, "skipped": [s.to_dict() for s in self.skipped],
            "notes": self.notes, "simulatedSeconds": round(self.simulated_seconds, 3),
            "time": _time(self.time), "hangingJudgedAt": _time(self.judged_at),
            "hangingJudgedAfterSeconds": round(self.judged_after, 3),
            "objectsRead": self.objects_read, "objectsSimulated": self.objects_simulated,
            "verdict": self.verdict.to_dict() if self.verdict is not None else None,
            "orderDependent": [o.to_dict() for o in self.order_dependent],
            "workloadReactions": [r.to_dict() for r in self.reactions],
            "summary": [k.to_dict() for k in self.verdict.by_kind] if self.verdict else [],
            "verb": self.operation.verb if self.operation is not None else "delete",
            "operation": self.operation.to_dict() if self.operation is not None else None,
        }


def _time(value: datetime | None) -> str | None:
    return format_time(value) if value is not None else None
