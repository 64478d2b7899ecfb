"""The words of ``kubegc why``: its report (``WhyReport``, each piece of evidence an
``Entry``) and the conclusion it draws from them — who deleted the object, or asked for the
deletion under way, and what holds it. Pure: ``kubegc.tools.why`` gathers the evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubegc.api.deletionrecord import ACTION_EVICT
from kubegc.component.deletions import DELETION_REASONS
from kubegc.controllers.deletionrecords import GC_DELETER
from kubegc.tools.audit_log import AuditDeletion
from kubegc.tools.doctor import Finding
from kubegc.tools.model import ObjRef
from kubegc.tools.state import ObjectState

#: why a deletion without a record was a request (every deleting component records)
UNRECORDED = ("no kubegc component (the garbage collector, the namespace, workload, pod GC, "
              "taint eviction, TTL or token controller) recorded deleting it")
#: kinds that expire, which no record follows
EXPIRING = {"Event": "Events expire (kube-apiserver --event-ttl, 1 hour by default)",
            "DeletionRecord": "DeletionRecords expire (7 days by default)"}


@dataclass(frozen=True, slots=True)
class Entry:
    """One piece of evidence: a DeletionRecord or an Event."""

    time: str
    source: str  # "DeletionRecord" | "Event"
    action: str  # record action, or the event's reason
    reason: str
    message: str
    object: ObjRef
    policy: str = ""
    owners: tuple[dict[str, str], ...] = ()
    user: str = ""  # an eviction's caller
    budget: tuple[tuple[str, Any], ...] = ()  # an eviction's PodDisruptionBudget
    #: the controller that acted (records only); node, taint, toleration: why (pod GC,
    #: taint eviction)
    deleter: str = ""
    node: str = ""
    taint: str = ""
    toleration: str = ""

    @property
    def rule(self) -> str:
        """The deleter's rule in words (a deleting controller's record), the same text an
        audit log's DELETE by that controller is joined with."""
        return DELETION_REASONS.get(self.reason, "") if self.deleter else ""

    @property
    def who(self) -> str:
        """The deleter in words."""
        return _DELETERS.get(self.deleter or GC_DELETER, self.deleter)

    def to_dict(self) -> dict[str, Any]:
        out = {"time": self.time, "source": self.source, "action": self.action,
               "reason": self.reason, "message": self.message, "object": self.object.to_dict(),
               "propagationPolicy": self.policy or None, "owners": list(self.owners),
               "deleter": self.deleter or None, "node": self.node or None,
               "taint": self.taint or None, "toleration": self.toleration or None,
               "rule": self.rule or None}
        if self.action == ACTION_EVICT:
            out.update(user=self.user, budget=dict(self.budget) or None)
        return out


_DELETERS = {GC_DELETER: "the garbage collector",
             "pod-garbage-collector": "pod GC (pod-garbage-collector)",
             "taint-eviction-controller": "taint eviction (taint-eviction-controller)",
             "ttl-after-finished-controller": "ttl-after-finished-controller",
             "job-controller": "the Job controller (job-controller)",
             "cronjob-controller": "the CronJob controller (cronjob-controller)"}


@dataclass
class WhyReport:
    source: str
    query: ObjRef
    evidence: str  # "DeletionRecords" | "Events"
    state: ObjectState | None = None  # None: the object does not exist now
    entries: list[Entry] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    causes: list[WhyReport] = field(default_factory=list)
    conclusion: str = ""
    notes: list[str] = field(default_factory=list)
    #: how long it has been Terminating, in words (``state.terminating_since``)
    since: str = ""
    #: from ``--audit-log``: the deletions naming the object, and the DeleteCollections
    #: that may have included it (None: no audit log given)
    audit: tuple[list[AuditDeletion], list[AuditDeletion]] | None = None

    def to_dict(self) -> dict[str, Any]:
        audit = None if self.audit is None else {
            "deletions": [d.to_dict() for d in self.audit[0]],
            "deleteCollections": [d.to_dict() for d in self.audit[1]]}
        return {"source": self.source, "object": self.query.to_dict(), "auditLog": audit,
                "exists": self.state is not None,
                "state": self.state.to_dict() if self.state else None,
                "evidence": self.evidence, "conclusion": self.conclusion,
                "entries": [e.to_dict() for e in self.entries],
                "findings": [f.to_dict() for f in self.findings],
                "causes": [c.to_dict() for c in self.causes], "notes": self.notes}


def _deleted_by(report: WhyReport, deletes: list[Entry], namespace_deleting: bool) -> str:
    """Who asked for the deletion under way."""
    evicted = _evicted(report)
    if evicted:
        return evicted
    mine = [e for e in deletes if e.object.uid == report.query.uid]
    if mine:
        return (f"deleted by {mine[-1].who} ({mine[-1].reason}): {mine[-1].message}"
                + _rule_of(mine[-1]))
    if namespace_deleting:
        return (f"its namespace {report.query.namespace} is being deleted: the namespace "
                "controller deletes everything in it")
    if report.evidence == "DeletionRecords":
        return ("deleted by a request of a user or of a client outside kubegc: "
                + UNRECORDED)
    return "deleted by a request or by the garbage collector (this cluster keeps no records)"


def _rule_of(entry: Entry) -> str:
    """" — <the deleter's rule>", as ``audit_log.describe`` joins it to a DELETE."""
    return f" — {entry.rule}" if entry.rule else ""


def _evicted(report: WhyReport) -> str:
    """"evicted by USER ..." when an eviction (pods/eviction) deleted this incarnation."""
    evictions = [e for e in report.entries if e.source == "DeletionRecord"
                 and e.action == ACTION_EVICT
                 and e.object.uid == (report.query.uid or e.object.uid)]
    if not evictions:
        return ""
    last = evictions[-1]
    return (f"evicted by {last.user or 'an unknown user'} through the Eviction API "
            f"(pods/eviction, at {last.time}, {last.reason}): {last.message}")


def _held_by(report: WhyReport) -> str:
    """What keeps it, from the doctor's answer: its finalizers, and an unavailable
    APIService when that is what keeps them (a namespace's ``kubernetes`` finalizer)."""
    state = report.state
    if state is None:
        return ""
    held = ("; it waits for its finalizers: " + ", ".join(state.finalizers)
            if state.finalizers else "")
    for finding in report.findings:
        if finding.object.uid != report.query.uid:
            continue
        for cause, detail in finding.causes.items():
            if cause.object is not None and cause.object.kind == "APIService":
                held += f"; {cause.what} — fix: " + "; ".join(detail.fix)
            elif detail.ends:  # a grace period: what ends the wait, and when
                held += "; " + "; ".join(detail.fix)
            elif detail.at and finding.object not in detail.at:  # held by another: chained
                on = ", ".join(str(o) for o in detail.at[:3]) + (
                    f" and {len(detail.at) - 3} more" if len(detail.at) > 3 else "")
                held += f"; held by {cause.what} on {on} — fix: " + "; ".join(detail.fix)
    return held


def conclude(report: WhyReport, namespace_deleting: bool = False) -> str:
    q = report.query
    deletes = [e for e in report.entries if e.source == "DeletionRecord" and e.action == "delete"]
    if report.state is not None and report.state.terminating:
        return (f"{q.short} exists and is being deleted ({report.since}): "
                + _deleted_by(report, deletes, namespace_deleting)
                + _held_by(report))
    if report.state is not None:
        gone_before = [e for e in deletes if e.object.uid != q.uid]
        going = [f for f in report.findings if f.object.uid == q.uid]
        return f"{q.short} exists and is not being deleted" + (
            f"; {going[0].next[0]}" if going and going[0].next else "") + (
            f"; an earlier {q.kind} of that name was deleted by {gone_before[-1].who} "
            f"({gone_before[-1].reason})" if gone_before else "")
    evicted = _evicted(report)
    if evicted:
        return f"{q.short} was {evicted}"
    if deletes:
        last = deletes[-1]  # the DELETE's time: finalizers or a grace period may follow it
        return (f"{q.short} was deleted by {last.who} (DELETE sent at {last.time}, "
                f"{last.reason}): {last.message}" + _rule_of(last))
    others = [e for e in report.entries if e.source == "DeletionRecord"]
    if others:
        last = others[-1]
        return (f"{q.short} was deleted by a request of a user or of a client outside "
                f"kubegc, not by a kubegc component; the garbage collector's last action on "
                f"it: {last.action} at {last.time} "
                f"({last.reason}): {last.message}")
    if report.evidence == "DeletionRecords" and q.kind in EXPIRING:
        return (f"{q.short} is gone: {EXPIRING[q.kind]} and kubegc records no expiry, so it "
                "expired or was deleted by a request")
    if report.evidence == "DeletionRecords":
        return (f"{q.short} is gone and no kubegc component recorded deleting it: it was "
                "deleted by a request of a user or of a client outside kubegc (kubectl "
                "delete, an operator) — or more than the record TTL ago, or never existed")
    if report.entries:
        return f"{q.short} is gone; the events below are all that is left"
    return f"{q.short} is gone and no event about it is left"
