"""``kubegc doctor``: stuck deletions, stuck namespaces, broken ownerReferences, drains
stuck on a PodDisruptionBudget, and objects that break the API's schema (``malformed``).

``diagnose(inv, options)`` runs every check over an ``Inventory`` (read from kubegc, a
real cluster or a dump) and returns a ``DoctorReport`` whose findings are sorted by
severity, kind and object, and grouped by the root causes they share (``causes``). Every
finding says what will happen next and the safe fix; a fix never suggests removing a
finalizer without saying what clean-up that skips.

``permissions.explain_permissions`` answers the other question the doctor is asked
(``kubegc doctor KIND/NAME --as USER``): may that user set the object's ownerReferences
under OwnerReferencesPermissionEnforcement, by the plugin's own rule
(``kubegc.authz.ownerreferences``) on the cluster's SubjectAccessReview answers; ``access``
says, on evidence, whether the cluster enforces it.
"""

from __future__ import annotations

from kubegc.tools.doctor.causes import root_causes
from kubegc.tools.doctor.context import DEFAULT_STUCK_AFTER, Context, DoctorOptions
from kubegc.tools.doctor.disruption import disruption_findings
from kubegc.tools.doctor.findings import (
    BlockingNode,
    Cause,
    Deletion,
    DoctorReport,
    Finding,
    FindingKind,
    RootCause,
    Severity,
)
from kubegc.tools.doctor.malformed import malformed_findings
from kubegc.tools.doctor.namespaces import namespace_findings
from kubegc.tools.doctor.ownerrefs import ownerref_findings
from kubegc.tools.doctor.stuck import stuck_finding, stuck_findings
from kubegc.tools.inventory import Inventory
from kubegc.tools.ownership import OwnerGraph

__all__ = [
    "DEFAULT_STUCK_AFTER",
    "BlockingNode",
    "Cause",
    "Context",
    "Deletion",
    "DoctorOptions",
    "DoctorReport",
    "Finding",
    "FindingKind",
    "RootCause",
    "Severity",
    "diagnose",
    "stuck_finding",
]


def diagnose(inv: Inventory, options: DoctorOptions | None = None) -> DoctorReport:
    ctx = Context(inv, OwnerGraph(inv), options or DoctorOptions())
    findings = [*stuck_findings(ctx), *namespace_findings(ctx), *ownerref_findings(ctx),
                *disruption_findings(ctx), *malformed_findings(inv)]
    if inv.namespace:  # that namespace's objects, and the namespace itself
        findings = [f for f in findings if f.object.namespace == inv.namespace or (
            f.kind in (FindingKind.STUCK_NAMESPACE, FindingKind.DELETING_NAMESPACE)
            and f.object.name == inv.namespace)]
    findings.sort(key=Finding.sort_key)
    causes = root_causes(findings)
    notes = list(inv.notes)
    if inv.dump:
        notes.append("read from a dump: an owner counts as absent only if the dump holds "
                     "objects of its kind")
    return DoctorReport(source=inv.source, now=inv.now, namespace=inv.namespace,
                        stuck_after=ctx.options.stuck_after, findings=findings,
                        objects_read=len(inv.objects), read_errors=dict(inv.errors),
                        notes=notes, root_causes=causes)
