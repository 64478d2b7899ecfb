"""Deployment conditions and the progress predicates (cf. pkg/controller/deployment/util:
``NewDeploymentCondition``, ``SetDeploymentCondition``, ``DeploymentComplete``,
``DeploymentProgressing``, ``DeploymentTimedOut``). Pure functions over status dicts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubegc.api.clock import format_time, parse_time
from kubegc.api.types import Obj
from kubegc.controllers.deployment.util import generation, observed_generation, replicas

_MAX_INT32 = 2**31 - 1

# Condition types and reasons (upstream's spelling).
DEPLOYMENT_AVAILABLE = "Available"
DEPLOYMENT_PROGRESSING = "Progressing"
DEPLOYMENT_REPLICA_FAILURE = "ReplicaFailure"
NEW_REPLICA_SET_REASON = "NewReplicaSetCreated"
FOUND_NEW_RS_REASON = "FoundNewReplicaSet"
NEW_RS_AVAILABLE_REASON = "NewReplicaSetAvailable"
TIMED_OUT_REASON = "ProgressDeadlineExceeded"
PAUSED_DEPLOY_REASON = "DeploymentPaused"
RESUMED_DEPLOY_REASON = "DeploymentResumed"
REPLICA_SET_UPDATED_REASON = "ReplicaSetUpdated"
FAILED_RS_CREATE_REASON = "ReplicaSetCreateError"
MINIMUM_REPLICAS_AVAILABLE = "MinimumReplicasAvailable"
MINIMUM_REPLICAS_UNAVAILABLE = "MinimumReplicasUnavailable"


def get_condition(status: dict[str, Any], cond_type: str) -> dict[str, Any] | None:
    for cond in status.get("conditions") or []:
        if cond.get("type") == cond_type:
            return dict(cond)
    return None


def new_condition(cond_type: str, status: str, reason: str, message: str, now: datetime,
                  ) -> dict[str, Any]:
    stamp = format_time(now)
    return {"type": cond_type, "status": status, "lastUpdateTime": stamp,
            "lastTransitionTime": stamp, "reason": reason, "message": message}


def set_condition(status: dict[str, Any], condition: dict[str, Any]) -> None:
    """``SetDeploymentCondition``: no-op if status and reason are unchanged; keeps the
    transition time when only the reason changes."""
    current = get_condition(status, condition["type"])
    if current is not None and current.get("status") == condition["status"] and (
            current.get("reason") == condition["reason"]):
        return
    if current is not None and current.get("status") == condition["status"]:
        condition = {**condition, "lastTransitionTime": current.get("lastTransitionTime")}
    remove_condition(status, condition["type"])
    status.setdefault("conditions", []).append(condition)


def remove_condition(status: dict[str, Any], cond_type: str) -> None:
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != cond_type]
    status["conditions"] = conditions


def has_progress_deadline(d: Obj) -> bool:
    deadline = (d.get("spec") or {}).get("progressDeadlineSeconds")
    return deadline is not None and int(deadline) != _MAX_INT32


def deployment_complete(d: Obj, status: dict[str, Any]) -> bool:
    want = replicas(d)
    return (int(status.get("updatedReplicas") or 0) == want
            and int(status.get("replicas") or 0) == want
            and int(status.get("availableReplicas") or 0) == want
            and observed_generation(status) >= generation(d))


def deployment_progressing(d: Obj, status: dict[str, Any]) -> bool:
    old = d.get("status") or {}

    def count(s: dict[str, Any], key: str) -> int:
        return int(s.get(key) or 0)

    old_old = count(old, "replicas") - count(old, "updatedReplicas")
    new_old = count(status, "replicas") - count(status, "updatedReplicas")
    return (count(status, "updatedReplicas") > count(old, "updatedReplicas")
            or new_old < old_old
            or count(status, "readyReplicas") > count(old, "readyReplicas")
            or count(status, "availableReplicas") > count(old, "availableReplicas"))


def deployment_timed_out(d: Obj, status: dict[str, Any], now: datetime) -> bool:
    if not has_progress_deadline(d):
        return False
    cond = get_condition(status, DEPLOYMENT_PROGRESSING)
    if cond is None or cond.get("reason") == NEW_RS_AVAILABLE_REASON:
        return False
    if cond.get("reason") == TIMED_OUT_REASON:
        return True
    since = parse_time(str(cond.get("lastUpdateTime")))
    return (now - since).total_seconds() > int((d.get("spec") or {})["progressDeadlineSeconds"])
