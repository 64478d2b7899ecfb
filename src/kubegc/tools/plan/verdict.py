"""The plan's verdict: what goes, what stays, what hangs and on whom; and the summary of
outcomes by kind.

``verdict_of(report)`` reads the rest of a ``PlanReport`` (deleted, survivors, hanging,
error) and says it in one line first. Who holds a hanging object comes from the
doctor's finding about it (``holders``): the dependents at the end of its blocking chain
(each with why it stays), its own finalizers but the garbage collector's (with their
remover and whether it is alive), or — a namespace — the objects inside that keep
finalizers, or — a CRD — its instances that keep finalizers (``doctor.chains``). Those are
the objects a fix must act on; the graph marks them.
"""

from __future__ import annotations

from collections import Counter

from kubegc.api.meta import FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN_DEPENDENTS
from kubegc.api.volumes import PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER
from kubegc.tools.doctor import Finding, FindingKind
from kubegc.tools.doctor.chains import CRD_CLEANUP
from kubegc.tools.finalizers import UNKNOWN_REMOVER, Alive, Remover
from kubegc.tools.model import ObjRef, human_duration
from kubegc.tools.plan.bounds import latest_end
from kubegc.tools.plan.report import Hang, Holder, KindCount, PlanReport, Verdict

_GC_FINALIZERS = (FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN_DEPENDENTS)


def kind_label(ref: ObjRef) -> str:
    return f"{ref.kind}.{ref.group}" if ref.group else ref.kind


def holders(finding: Finding) -> list[Holder]:
    """What holds the object of a hanging ``finding`` (see the module docstring)."""
    out = [Holder(leaf.object, leaf.holds_because)
           for node in finding.blocking for leaf in node.leaves()]
    instances = finding.object.kind == "CustomResourceDefinition" and bool(finding.related)
    for r in finding.removers:
        if r.finalizer in _GC_FINALIZERS or (finding.kind in _NAMESPACE_KINDS
                                             and r.finalizer == "kubernetes"):
            continue
        if instances and r.finalizer == CRD_CLEANUP:  # held by its instances' finalizers
            out.extend(Holder(ref, "an instance of the CRD that keeps finalizers (the API "
                                   "server waits until its instances are gone)")
                       for ref in finding.related)
            continue
        out.append(Holder(finding.object, _held_by_finalizer(r)))
    if finding.kind in _NAMESPACE_KINDS:
        out.extend(Holder(ref, "an object inside that keeps finalizers")
                   for ref in finding.related)
    if not out:
        out.append(Holder(finding.object, finding.next[0] if finding.next else "unknown"))
    return list(dict.fromkeys(out))  # one line per holder and reason


_NAMESPACE_KINDS = (FindingKind.STUCK_NAMESPACE, FindingKind.DELETING_NAMESPACE)


def _held_by_finalizer(r: Remover) -> str:
    what = "graceful termination" if r.finalizer.startswith("(") else \
        f"its finalizer {r.finalizer}"
    if not r.evidence and r.who == UNKNOWN_REMOVER:
        return f"{what}: nothing names who removes it"
    alive = {Alive.YES: "alive", Alive.NO: "not running"}.get(r.alive, "not known to run")
    if r.finalizer in (PVC_PROTECTION_FINALIZER, PV_PROTECTION_FINALIZER):
        # its rule names what it waits for (the pods using the claim, the bound claim)
        return f"{what}: {r.who} ({alive}) removes it {r.removes_when}"
    return f"{what}: {r.who} ({alive})"


def _by_kind(report: PlanReport) -> list[KindCount]:
    counts: dict[str, Counter[str]] = {}
    for ref in report.deleted:
        counts.setdefault(kind_label(ref), Counter())["deleted"] += 1
    for finding in report.hanging:
        counts.setdefault(kind_label(finding.object), Counter())["hanging"] += 1
    for s in report.survivors:
        counts.setdefault(kind_label(s.object), Counter())["kept" if s.kept_by else
                                                           "orphaned"] += 1
    return [KindCount(kind, c["deleted"], c["hanging"], c["orphaned"], c["kept"])
            for kind, c in sorted(counts.items())]


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}{'' if n == 1 else 's'}"


def _goes(report: PlanReport, target_gone: bool) -> str:
    n = len(report.deleted)
    if n == 1:
        return f"{report.deleted[0]} goes"
    if target_gone:
        return f"{n:,} objects go ({report.target} and {_count(n - 1, 'dependent')})"
    return "nothing goes" if n == 0 else f"{_count(n, 'object')} {'goes' if n == 1 else 'go'}"


def _stays(report: PlanReport) -> str:
    n = len(report.survivors)
    if not n:
        return ""
    orphaned = sum(1 for s in report.survivors if not s.kept_by and not s.dangling)
    dangling = sum(1 for s in report.survivors if s.dangling and not s.kept_by)
    kept = n - orphaned - dangling
    parts = [f"{orphaned:,} orphaned" if orphaned else "",
             f"{kept:,} kept by another owner" if kept else "",
             f"{dangling:,} keeping a reference to a deleted owner that the garbage collector "
             "never acts on: a cluster-scoped dependent of a namespaced owner, "
             "OwnerRefInvalidNamespace" if dangling else ""]
    verb = "loses an owner and stays" if n == 1 else "lose an owner and stay"
    return f"; {_count(n, 'object')} {verb} ({', '.join(p for p in parts if p)})"


def _uncertain(report: PlanReport) -> str:
    n = len(report.order_dependent)
    if not n:
        return ""
    names = ", ".join(str(o.object) for o in report.order_dependent[:3]) + (
        f" and {n - 3:,} more" if n > 3 else "")
    return (f"; but the outcome of {names} depends on the order the garbage collector takes "
            "dependents in (see the notes)")


def _bound(report: PlanReport) -> str:
    """When the last step comes at the latest, where grace periods make it a range."""
    last = latest_end(report.steps)
    if last is None:
        return ""
    when = f"t+{last:.1f}s" if last < 60 else f"t+{human_duration(last)}"
    return (f"; by {when} at the latest (pods' grace periods: preStop hooks and their "
            "containers' exit take an unknown time up to them)")


def verdict_of(report: PlanReport) -> Verdict:
    hangs = [Hang(f.object, tuple(holders(f))) for f in report.hanging]
    by_kind = _by_kind(report)
    target_gone = any(r.uid == report.target.uid for r in report.deleted)
    outcome = _goes(report, target_gone) + _stays(report) + _bound(report) + _uncertain(report)
    if report.operation is not None:  # plan evict|drain|taint|stop-kubelet: its outcome first
        op = report.operation
        rest = f"; {outcome}" if report.deleted or report.survivors else ""
        return Verdict(op.completes and not hangs, op.text + rest, hangs, by_kind)
    if report.error:
        return Verdict(False, f"the delete is refused: {report.error}", hangs, by_kind)
    if hangs:
        roots = sorted({h.object for hang in hangs for h in hang.held_by})
        held = ", ".join(str(r) for r in roots[:3]) + (
            f" and {len(roots) - 3:,} more" if len(roots) > 3 else "")
        verb = "stays" if len(hangs) == 1 else "stay"
        return Verdict(False, f"the delete does not complete: {_count(len(hangs), 'object')} "
                       f"{verb} Terminating, held by {held}; {outcome}", hangs, by_kind)
    if not target_gone:
        return Verdict(False, f"{report.target} is not deleted; {outcome}", hangs, by_kind)
    if report.order_dependent:
        return Verdict(False, f"the delete completes in the order simulated: {outcome}", hangs,
                       by_kind)
    return Verdict(True, f"the delete completes: {outcome}", hangs, by_kind)
