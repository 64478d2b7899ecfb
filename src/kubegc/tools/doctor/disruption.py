"""Drains stuck on a PodDisruptionBudget: ``DrainBlockedByDisruptionBudget`` for each pod
on a cordoned node (``spec.unschedulable``: what ``kubectl drain`` does first) that the
eviction subresource would refuse now. The decision is the eviction's own
(``kubegc.api.disruption``: ``canIgnorePDB``, ``checkAndDecrement``), asked on the
budget as read; the finding names the budget and how many healthy pods it needs and has.
"""

from __future__ import annotations

import copy

from kubegc.api.disruption import (
    MORE_THAN_ONE_PDB,
    can_ignore_pdb,
    check_and_decrement,
    selects,
    unhealthy_evictable,
)
from kubegc.api.errors import StatusError
from kubegc.api.meta import name_of, namespace_of
from kubegc.api.pod import is_pod_ready
from kubegc.api.types import Obj
from kubegc.tools.doctor.context import Context
from kubegc.tools.doctor.findings import Cause, CauseDetail, Finding, FindingKind, Severity
from kubegc.tools.model import ObjRef


def refusal(pod: Obj, budgets: list[Obj]) -> StatusError | None:
    """What ``pods/eviction`` would answer for ``pod`` given the namespace's ``budgets``
    (None: it would evict)."""
    if can_ignore_pdb(pod):
        return None
    matching = [b for b in budgets if selects(b, pod)]
    if len(matching) > 1:
        return StatusError(500, "", MORE_THAN_ONE_PDB)
    if not matching or (not is_pod_ready(pod) and unhealthy_evictable(matching[0])):
        return None
    try:
        check_and_decrement(copy.deepcopy(matching[0]), name_of(pod), "", dry_run=True)
    except StatusError as e:
        return e
    return None


def disruption_findings(ctx: Context) -> list[Finding]:
    cordoned = {name_of(n) for n in ctx.inv.of_kind("", "Node")
                if (n.get("spec") or {}).get("unschedulable")}
    if not cordoned:
        return []
    budgets: dict[str, list[Obj]] = {}
    for pdb in ctx.inv.of_kind("policy", "PodDisruptionBudget"):
        budgets.setdefault(namespace_of(pdb), []).append(pdb)
    out = []
    for pod in ctx.inv.of_kind("", "Pod"):
        node = (pod.get("spec") or {}).get("nodeName")
        if node not in cordoned or namespace_of(pod) not in budgets:
            continue
        refused = refusal(pod, budgets[namespace_of(pod)])
        if refused is not None:
            matching = [b for b in budgets[namespace_of(pod)] if selects(b, pod)]
            out.append(_finding(pod, str(node), matching, refused))
    return out


def _finding(pod: Obj, node: str, budgets: list[Obj], refused: StatusError) -> Finding:
    ref = ObjRef.of(pod)
    reasons = [c.message for c in refused.details.causes] or [refused.message]
    facts = [f"node {node} is cordoned (a drain in progress); evicting the pod answers "
             f"{refused.code}: {refused.message} {' '.join(reasons)}"]
    for b in budgets:
        s = b.get("status") or {}
        spec = b.get("spec") or {}
        rule = ", ".join(f"{k} {spec[k]}" for k in ("minAvailable", "maxUnavailable")
                         if spec.get(k) is not None)
        facts.append(f"PodDisruptionBudget {name_of(b)} ({rule}): needs "
                     f"{int(s.get('desiredHealthy') or 0)} healthy pods and has "
                     f"{int(s.get('currentHealthy') or 0)} of {int(s.get('expectedPods') or 0)} "
                     f"expected; disruptionsAllowed {int(s.get('disruptionsAllowed') or 0)}")
    budget = budgets[0] if budgets else None
    cause = Cause(f"disruption budget {name_of(budget)} allows no disruption" if budget
                  else refused.message, ObjRef.of(budget) if budget else None)
    next_steps = ["kubectl drain retries the eviction every 5 s until its --timeout, then "
                  "fails; nothing is deleted while the budget has no disruption to give"]
    fix = ["let the budget's pods become healthy elsewhere (uncordon or add a node so their "
           "replacements schedule, or scale their controller up)",
           f"or relax the budget (kubectl edit pdb {name_of(budget)} -n {namespace_of(pod)}: "
           "a lower minAvailable or a higher maxUnavailable)" if budget else
           "or keep one PodDisruptionBudget per pod",
           "for unready pods: unhealthyPodEvictionPolicy: AlwaysAllow lets them be evicted"]
    return Finding(FindingKind.DRAIN_BLOCKED, Severity.WARNING, ref,
                   f"pod {ref.name} on cordoned node {node} cannot be evicted: "
                   + (f"disruption budget {name_of(budget)} allows no disruption" if budget
                      else refused.message),
                   next=next_steps, fix=fix, facts=facts,
                   related=[ObjRef.of(b) for b in budgets],
                   causes={cause: CauseDetail(next_steps, fix)})
