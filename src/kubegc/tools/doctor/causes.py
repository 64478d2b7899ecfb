"""Root causes: findings that share a cause, grouped, with the cause's fix said once.

A cause is what holds something (``findings.Cause``): the finalizer of a pod that keeps
its ReplicaSet and Deployment from finishing a foreground deletion is one cause of three
findings, and one fix. A finding with several causes (an owner waiting for two held
dependents) is listed under each, first under its most severe. Findings that name no
cause of their own (a cycle, several controller references, an event) are their own.
Groups are ordered by severity, then by how many findings they hold, then by cause.
"""

from __future__ import annotations

from kubegc.tools.doctor.findings import Cause, CauseDetail, Finding, RootCause


def root_causes(findings: list[Finding]) -> list[RootCause]:
    groups: dict[Cause, RootCause] = {}
    for finding in findings:
        if not finding.causes:
            finding.causes[Cause(finding.kind.value, finding.object)] = CauseDetail(
                list(finding.next), list(finding.fix), at=[finding.object])
        for cause, detail in finding.causes.items():
            group = groups.get(cause)
            if group is None:
                group = groups[cause] = RootCause(cause, finding.severity, detail.copy())
            else:
                group.detail.merge(detail)
            group.findings.append(finding)
            group.severity = min(group.severity, finding.severity)
    for group in groups.values():
        group.findings.sort(key=Finding.sort_key)
    return sorted(groups.values(),
                  key=lambda g: (g.severity.value, -len(g.findings), g.cause.sort_key()))
