"""The disruption vocabulary the eviction subresource and the disruption controller share:
the PodDisruptionBudget's ``DisruptionAllowed`` condition (cf. k8s.io/component-helpers
``apps/poddisruptionbudget``: ``UpdateDisruptionAllowedCondition``,
``ConditionsAreUpToDate``), the pod's ``DisruptionTarget`` condition and its reasons
(k8s.io/api/core/v1 ``DisruptionTarget``; ``podutil.UpdatePodCondition``), which
budgets select a pod (``getPodDisruptionBudgets``), and the eviction's decision on one
budget (pkg/registry/core/pod/storage/eviction.go ``canIgnorePDB``, ``checkAndDecrement``),
which ``kubegc plan`` and the doctor ask too. Pure functions over JSON-shaped objects.
"""

from __future__ import annotations

from typing import Any

from kubegc.api import errors
from kubegc.api.labels import label_selector_from_dict
from kubegc.api.pod import pod_phase
from kubegc.api.types import Obj

PDB_DISRUPTION_ALLOWED = "DisruptionAllowed"
SUFFICIENT_PODS = "SufficientPods"
INSUFFICIENT_PODS = "InsufficientPods"
SYNC_FAILED = "SyncFailed"
#: k8s.io/api/policy/v1 ``DisruptionBudgetCause``: the cause type of a refused eviction
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"
#: ``unhealthyPodEvictionPolicy`` values
IF_HEALTHY_BUDGET = "IfHealthyBudget"
ALWAYS_ALLOW = "AlwaysAllow"

DISRUPTION_TARGET = "DisruptionTarget"
EVICTION_BY_EVICTION_API = "EvictionByEvictionAPI"
DELETION_BY_TAINT_MANAGER = "DeletionByTaintManager"
DELETION_BY_POD_GC = "DeletionByPodGC"


#: ``MaxDisruptedPodSize``: evictions approved but not yet seen by the disruption controller
MAX_DISRUPTED_POD_SIZE = 2000
MORE_THAN_ONE_PDB = ("This pod has more than one PodDisruptionBudget, which the eviction "
                     "subresource does not support.")
VIOLATES_BUDGET = "Cannot evict pod as it would violate the pod's disruption budget."
_PDB_GR = errors.GroupResource("policy", "poddisruptionbudget")


def update_pod_condition(pod: Obj, condition: dict[str, Any], now: str) -> bool:
    """``podutil.UpdatePodCondition`` on ``pod``'s status: add ``condition`` or replace the
    one of its type, keeping the old ``lastTransitionTime`` when the status did not change.
    Returns whether anything changed."""
    new = {"type": condition["type"], "status": condition["status"], "lastProbeTime": None,
           "lastTransitionTime": now}
    new.update((k, condition[k]) for k in ("reason", "message") if condition.get(k))
    conditions = pod.setdefault("status", {}).setdefault("conditions", [])
    for i, old in enumerate(conditions):
        if old.get("type") == new["type"]:
            if old.get("status") == new["status"]:
                new["lastTransitionTime"] = old.get("lastTransitionTime")
            changed = any(old.get(k) != new.get(k) for k in ("status", "reason", "message",
                                                            "lastTransitionTime"))
            conditions[i] = new
            return changed
    conditions.append(new)
    return True


def disruption_allowed_condition(status: dict[str, Any], now: str) -> None:
    """``UpdateDisruptionAllowedCondition``: ``DisruptionAllowed`` True (SufficientPods)
    when ``disruptionsAllowed`` > 0, else False (InsufficientPods); as
    ``meta.SetStatusCondition``, the transition time moves only when the status does."""
    allowed = int(status.get("disruptionsAllowed") or 0) > 0
    set_condition(status, {
        "type": PDB_DISRUPTION_ALLOWED, "status": "True" if allowed else "False",
        "reason": SUFFICIENT_PODS if allowed else INSUFFICIENT_PODS, "message": "",
        "observedGeneration": int(status.get("observedGeneration") or 0)}, now)


def set_condition(status: dict[str, Any], condition: dict[str, Any], now: str) -> None:
    """``meta.SetStatusCondition`` (metav1.Condition fields, in the Go struct's order)."""
    conditions = status.setdefault("conditions", [])
    for old in conditions:
        if old.get("type") == condition["type"]:
            since = (old.get("lastTransitionTime") if old.get("status") == condition["status"]
                     else now)
            old.clear()
            old.update(_ordered(condition, since or now))
            return
    conditions.append(_ordered(condition, now))


def _ordered(condition: dict[str, Any], since: str) -> dict[str, Any]:
    out: dict[str, Any] = {"type": condition["type"], "status": condition["status"]}
    if condition.get("observedGeneration"):
        out["observedGeneration"] = condition["observedGeneration"]
    out.update(lastTransitionTime=since, reason=condition["reason"],
               message=condition.get("message", ""))
    return out


def selects(pdb: Obj, pod: Obj, *, empty_matches_all: bool = False) -> bool:
    """Whether ``pdb``'s selector matches ``pod``. An invalid or nil selector matches
    nothing; an empty one matches nothing for the eviction subresource
    (``getPodDisruptionBudgets``: "it should match nothing, not everything") and every pod
    of the namespace for the disruption controller (``empty_matches_all``: the policy/v1
    lister's ``GetPodPodDisruptionBudgets``)."""
    if (pod.get("metadata") or {}).get("namespace") != (pdb.get("metadata") or {}).get(
            "namespace"):
        return False
    selector = (pdb.get("spec") or {}).get("selector")
    if not isinstance(selector, dict):
        return False
    try:
        parsed = label_selector_from_dict(selector)
    except errors.StatusError:
        return False
    if parsed.empty and not empty_matches_all:
        return False
    return parsed.matches((pod.get("metadata") or {}).get("labels") or {})


def can_ignore_pdb(pod: Obj) -> bool:
    """``canIgnorePDB``: terminal, Pending or already deleting pods."""
    return (pod_phase(pod) in ("Succeeded", "Failed", "Pending")
            or bool(pod["metadata"].get("deletionTimestamp")))


def should_enforce_resource_version(pod: Obj) -> bool:
    """``shouldEnforceResourceVersion``: not for terminal or deleting pods."""
    return not (pod_phase(pod) in ("Succeeded", "Failed")
                or bool(pod["metadata"].get("deletionTimestamp")))


def too_many_requests_processing(pdb_name: str) -> errors.StatusError:
    """``createTooManyRequestsError``: the budget is not yet processed (retry after 10 s)."""
    cause = errors.StatusCause(DISRUPTION_BUDGET_CAUSE, f"The disruption budget {pdb_name} is "
                               "still being processed by the server.")
    return errors.StatusError(429, "TooManyRequests", VIOLATES_BUDGET, retry_after_seconds=10,
                              causes=[cause])


def check_and_decrement(pdb: Obj, pod_name: str, now: str, *, dry_run: bool) -> None:
    """``checkAndDecrement`` on ``pdb`` (mutated): raises the refusal, or takes one
    disruption and (unless ``dry_run``) records ``pod_name`` in ``disruptedPods``."""
    meta, status = pdb["metadata"], pdb.setdefault("status", {})
    name = str(meta.get("name") or "")
    if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
        raise too_many_requests_processing(name)
    allowed = int(status.get("disruptionsAllowed") or 0)
    if allowed < 0:
        raise errors.forbidden(_PDB_GR, name, "pdb disruptions allowed is negative")
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_POD_SIZE:
        raise errors.forbidden(_PDB_GR, name, "DisruptedPods map too big - too many evictions "
                                              "not confirmed by PDB controller")
    if allowed == 0:
        cause = errors.StatusCause(
            DISRUPTION_BUDGET_CAUSE,
            f"The disruption budget {name} needs {int(status.get('desiredHealthy') or 0)} "
            f"healthy pods and has {int(status.get('currentHealthy') or 0)} currently")
        raise errors.StatusError(429, "TooManyRequests", VIOLATES_BUDGET, causes=[cause])
    status["disruptionsAllowed"] = allowed - 1
    if allowed - 1 == 0:
        disruption_allowed_condition(status, now)
    if not dry_run:
        status.setdefault("disruptedPods", {})[pod_name] = now


def unhealthy_evictable(pdb: Obj) -> bool:
    """An unready pod's eviction skips the decrement: always under ``AlwaysAllow``, and
    under ``IfHealthyBudget`` (the default) while the budget has its healthy pods."""
    if (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") == ALWAYS_ALLOW:
        return True
    status = pdb.get("status") or {}
    desired = int(status.get("desiredHealthy") or 0)
    return int(status.get("currentHealthy") or 0) >= desired > 0


__all__ = [
    "ALWAYS_ALLOW",
    "DELETION_BY_POD_GC",
    "DELETION_BY_TAINT_MANAGER",
    "DISRUPTION_BUDGET_CAUSE",
    "DISRUPTION_TARGET",
    "EVICTION_BY_EVICTION_API",
    "IF_HEALTHY_BUDGET",
    "INSUFFICIENT_PODS",
    "MAX_DISRUPTED_POD_SIZE",
    "MORE_THAN_ONE_PDB",
    "PDB_DISRUPTION_ALLOWED",
    "SUFFICIENT_PODS",
    "SYNC_FAILED",
    "VIOLATES_BUDGET",
    "can_ignore_pdb",
    "check_and_decrement",
    "disruption_allowed_condition",
    "selects",
    "set_condition",
    "should_enforce_resource_version",
    "too_many_requests_processing",
    "unhealthy_evictable",
    "update_pod_condition",
]
