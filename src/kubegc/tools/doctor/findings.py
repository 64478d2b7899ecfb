"""The doctor's report: findings, each with what will happen next and the safe fix.

A ``Finding`` is one problem about one object. Stuck deletions carry the seed's four
answers: ``deletion`` (when deletionTimestamp was set), ``removers`` (which finalizers
remain and whether whoever removes each is alive, with the evidence), and ``blocking``
(for ``foregroundDeletion``: the chain of dependents with blockOwnerDeletion=true down to
the leaves that actually hold it). Values only; rendering lives in ``tools.render``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
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
    STUCK_DELETION = "StuckDeletion"
    STUCK_NAMESPACE = "StuckNamespace"
    OWNER_ABSENT = "OwnerAbsent"
    OWNER_RECREATED = "OwnerRecreated"
    OWNER_IN_OTHER_NAMESPACE = "OwnerInOtherNamespace"
    CLUSTER_SCOPED_DEPENDENT = "ClusterScopedDependentOfNamespacedOwner"
    UNKNOWN_OWNER_KIND = "UnknownOwnerKind"
    MULTIPLE_CONTROLLERS = "MultipleControllerReferences"
    OWNERSHIP_CYCLE = "OwnershipCycle"
    INVALID_NAMESPACE_EVENT = "OwnerRefInvalidNamespaceEvent"


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

    def sort_key(self) -> tuple[int, str, ObjRef]:
        return (self.severity.value, self.kind.value, self.object)

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
        return out


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

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "time": format_time(self.now),
                "namespace": self.namespace or None, "stuckAfterSeconds": self.stuck_after,
                "objectsRead": self.objects_read,
                "summary": {s.label: self.count(s) for s in Severity},
                "findings": [f.to_dict() for f in self.findings],
                "readErrors": dict(sorted(self.read_errors.items())), "notes": self.notes}
