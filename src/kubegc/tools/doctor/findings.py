"""The doctor's report: findings, each with what will happen next and the safe fix, and
the root causes they share.

A ``Finding`` is one problem about one object. Deletions carry the seed's four answers:
``deletion`` (when deletionTimestamp was set), ``removers`` (which finalizers remain and
whether whoever removes each is alive, with the evidence), and ``blocking`` (for
``foregroundDeletion``: the chain of dependents with blockOwnerDeletion=true down to the
leaves that actually hold it). Each finding names its ``causes``: what holds it (a
finalizer on some object, a pod's graceful termination, a dependent the garbage collector
has not deleted, a missing owner, ...). Findings that share a cause are grouped in a
``RootCause`` with its fix, given once. Values only; rendering lives in ``tools.render``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from kubegc.api.clock import format_time
from kubegc.api.types import Obj
from kubegc.tools.finalizers import Remover
from kubegc.tools.model import ObjRef


class Severity(enum.IntEnum):
    ERROR = 0  # stuck now
    WARNING = 1  # something will be deleted or never collected
    INFO = 2

    @property
    def label(self) -> str:
        return self.name.lower()


class FindingKind(enum.StrEnum):
    STUCK_DELETION = "StuckDeletion"  # deleting for longer than --stuck-after
    STUCK_NAMESPACE = "StuckNamespace"
    DELETING = "Deleting"  # deleting for less than --stuck-after (info)
    DELETING_NAMESPACE = "DeletingNamespace"
    OWNER_ABSENT = "OwnerAbsent"
    OWNER_RECREATED = "OwnerRecreated"
    OWNER_IN_OTHER_NAMESPACE = "OwnerInOtherNamespace"
    CLUSTER_SCOPED_DEPENDENT = "ClusterScopedDependentOfNamespacedOwner"
    UNKNOWN_OWNER_KIND = "UnknownOwnerKind"
    MULTIPLE_CONTROLLERS = "MultipleControllerReferences"
    OWNERSHIP_CYCLE = "OwnershipCycle"
    INVALID_NAMESPACE_EVENT = "OwnerRefInvalidNamespaceEvent"
    DRAIN_BLOCKED = "DrainBlockedByDisruptionBudget"  # a cordoned node's pod, no disruption
    MALFORMED_OBJECT = "MalformedObject"  # a field breaks the API's schema (tools.wellformed)


#: The kinds of findings about an object being deleted.
DELETION_KINDS = frozenset({FindingKind.STUCK_DELETION, FindingKind.STUCK_NAMESPACE,
                            FindingKind.DELETING, FindingKind.DELETING_NAMESPACE})


@dataclass(frozen=True, slots=True)
class Cause:
    """What holds something, in words (``finalizer x.io/hold, removed by an unknown
    controller``, ``graceful termination: the kubelet on node n1``, ``owner absent``), and
    the object it is about when it is about one (a missing owner; None for a finalizer or
    a controller that holds many objects). Equal causes group."""

    what: str
    object: ObjRef | None = None

    def __str__(self) -> str:
        return f"{self.object}: {self.what}" if self.object is not None else self.what

    def sort_key(self) -> tuple[str, str]:
        return (self.what, str(self.object or ""))

    def to_dict(self) -> dict[str, Any]:
        return {"object": self.object.to_dict() if self.object else None, "cause": self.what}


@dataclass
class CauseDetail:
    """What is said once per cause: what happens next, the fix, whether the evidence says
    nothing will release it (``dead``: its remover is not running), the objects it sits on
    (``at``: those with the finalizer, the pods on the node, ...) and, for each, the command
    that releases it by hand (``commands``), with what doing so skips (``by_hand``)."""

    next: list[str]
    fix: list[str]
    dead: bool = False
    at: list[ObjRef] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    by_hand: str = ""
    #: when the wait ends at the latest (a grace period's end), RFC 3339; "" = not known
    ends: str = ""

    def copy(self) -> CauseDetail:
        return replace(self, next=list(self.next), fix=list(self.fix), at=list(self.at),
                       commands=list(self.commands))

    def merge(self, other: CauseDetail) -> None:
        """Another object with the same cause (thousands of pods can share one: the
        lists are kept in order, their members also in sets)."""
        self.dead = self.dead or other.dead
        if other.ends > self.ends:  # the latest end is when the whole wait ends
            self.ends, self.next, self.fix = other.ends, list(other.next), list(other.fix)
        seen: set[object] | None = self.__dict__.get("_seen")
        if seen is None:
            seen = self.__dict__["_seen"] = {*self.at, *self.commands}
        for ref in other.at:
            if ref not in seen:
                seen.add(ref)
                self.at.append(ref)
        for command in other.commands:
            if command not in seen:
                seen.add(command)
                self.commands.append(command)


def severity_of_deletion(young: bool, causes: dict[Cause, CauseDetail]) -> Severity:
    """Info while young; then an error if a cause is evidenced dead, else a warning."""
    if young:
        return Severity.INFO
    return Severity.ERROR if any(d.dead for d in causes.values()) else Severity.WARNING


@dataclass
class BlockingNode:
    """A dependent with blockOwnerDeletion=true that is still there, and why."""

    object: ObjRef
    state: str  # "Terminating for 3m (deletionTimestamp ...)" / "not being deleted"
    holds_because: str
    removers: list[Remover] = field(default_factory=list)
    dependents: list[BlockingNode] = field(default_factory=list)
    #: the object itself (not serialized; for phrasing fixes)
    source: Obj | None = field(default=None, repr=False, compare=False)
    #: a leaf: what holds it, with what to say about it once
    causes: dict[Cause, CauseDetail] = field(default_factory=dict, repr=False, compare=False)

    def leaves(self) -> list[BlockingNode]:
        if not self.dependents:
            return [self]
        return [leaf for d in self.dependents for leaf in d.leaves()]

    def to_dict(self) -> dict[str, Any]:
        return {"object": self.object.to_dict(), "state": self.state,
                "holdsBecause": self.holds_because,
                "finalizers": [r.to_dict() for r in self.removers],
                "blockingDependents": [d.to_dict() for d in self.dependents]}


@dataclass
class Deletion:
    deletion_timestamp: str
    requested: str  # when the delete was asked for (differs for graceful pods)
    deleting_for: float
    grace_seconds: int

    def to_dict(self) -> dict[str, Any]:
        return {"deletionTimestamp": self.deletion_timestamp, "requested": self.requested,
                "deletingForSeconds": int(self.deleting_for),
                "gracePeriodSeconds": self.grace_seconds}


@dataclass
class Finding:
    kind: FindingKind
    severity: Severity
    object: ObjRef
    title: str
    next: list[str]  # what will happen next
    fix: list[str]  # the safe fix, step by step
    facts: list[str] = field(default_factory=list)
    deletion: Deletion | None = None
    removers: list[Remover] = field(default_factory=list)
    blocking: list[BlockingNode] = field(default_factory=list)
    related: list[ObjRef] = field(default_factory=list)
    #: what holds it (or, for a broken reference, the owner it names), in order
    causes: dict[Cause, CauseDetail] = field(default_factory=dict)

    def sort_key(self) -> tuple[int, str, ObjRef]:
        return (self.severity.value, self.kind.value, self.object)

    @property
    def is_deletion(self) -> bool:
        return self.kind in DELETION_KINDS

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind.value, "severity": self.severity.label,
                               "object": self.object.to_dict(), "title": self.title,
                               "facts": list(self.facts), "next": list(self.next),
                               "fix": list(self.fix)}
        if self.deletion is not None:
            out["deletion"] = self.deletion.to_dict()
        if self.removers:
            out["finalizers"] = [r.to_dict() for r in self.removers]
        if self.blocking:
            out["blockingDependents"] = [b.to_dict() for b in self.blocking]
        if self.related:
            out["related"] = [r.to_dict() for r in self.related]
        out["causes"] = [c.to_dict() for c in self.causes]
        return out


@dataclass
class RootCause:
    """Findings that share a cause, and what is said about the cause once."""

    cause: Cause
    severity: Severity
    detail: CauseDetail
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self, index: dict[int, int]) -> dict[str, Any]:
        d = self.detail
        return {**self.cause.to_dict(), "title": str(self.cause),
                "severity": self.severity.label, "next": list(d.next), "fix": list(d.fix),
                "at": [o.to_dict() for o in d.at], "byHand": d.by_hand or None,
                "commands": list(d.commands),
                "holds": [f.object.to_dict() for f in self.findings],
                "findings": [index[id(f)] for f in self.findings]}


@dataclass
class DoctorReport:
    source: str
    now: datetime
    namespace: str  # "" = all namespaces
    stuck_after: float
    findings: list[Finding]
    objects_read: int
    read_errors: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    root_causes: list[RootCause] = field(default_factory=list)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity)

    @property
    def deleting(self) -> int:
        """Objects being deleted now (any age)."""
        return sum(1 for f in self.findings if f.is_deletion)

    @property
    def young(self) -> int:
        """Objects deleting for less than ``stuck_after`` seconds."""
        return sum(1 for f in self.findings
                   if f.kind in (FindingKind.DELETING, FindingKind.DELETING_NAMESPACE))

    def worst(self) -> Severity | None:
        return min((f.severity for f in self.findings), default=None)

    def to_dict(self) -> dict[str, Any]:
        index = {id(f): i for i, f in enumerate(self.findings)}
        summary: dict[str, Any] = {s.label: self.count(s) for s in Severity}
        summary.update(deleting=self.deleting, young=self.young,
                       rootCauses=len(self.root_causes))
        return {"source": self.source, "time": format_time(self.now),
                "namespace": self.namespace or None, "stuckAfterSeconds": self.stuck_after,
                "objectsRead": self.objects_read, "summary": summary,
                "rootCauses": [r.to_dict(index) for r in self.root_causes],
                "findings": [f.to_dict() for f in self.findings],
                "readErrors": dict(sorted(self.read_errors.items())), "notes": self.notes}
