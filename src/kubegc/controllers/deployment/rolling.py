"""Deployment rollouts (cf. pkg/controller/deployment/rolling.go, recreate.go, progress.go).

RollingUpdate: scale the new ReplicaSet up as far as ``maxSurge`` allows, then scale old
ReplicaSets down as far as ``maxUnavailable`` allows (unhealthy old replicas first); one
of the two per sync, and the informer events of the ReplicaSets drive the next step.
Recreate: scale every old ReplicaSet to zero, wait until none of their pods runs, then
create/scale up the new one. Both finish with ``sync_rollout_status``: the status of
``calculate_status`` plus the Progressing condition (``NewReplicaSetAvailable`` "ReplicaSet
"x" has successfully progressed.", ``ReplicaSetUpdated`` "ReplicaSet "x" is progressing.",
``ProgressDeadlineExceeded``), and a delayed requeue to notice a stuck rollout.
"""

from __future__ import annotations

import copy
from typing import Any

import kubegc.controllers.deployment.conditions as dcond
import kubegc.controllers.deployment.util as du
from kubegc.api.clock import parse_time
from kubegc.api.meta import name_of, uid_of
from kubegc.api.types import Obj
from kubegc.controllers.deployment.sync import (
    DeploymentControllerLike,
    calculate_status,
    cleanup_deployment,
    get_all_replica_sets_and_sync_revision,
    scale_replica_set_and_record_event,
    write_status,
)


async def rollout_rolling(dc: DeploymentControllerLike, d: Obj, rs_list: list[Obj]) -> float | None:
    new_rs, old_rss = await get_all_replica_sets_and_sync_revision(
        dc, d, rs_list, create_if_not_existed=True)
    if new_rs is None:
        return None
    all_rss: list[Obj | None] = [*old_rss, new_rs]
    if await reconcile_new_replica_set(dc, all_rss, new_rs, d):
        return await sync_rollout_status(dc, all_rss, new_rs, d)
    active_old = du.filter_active_replica_sets(old_rss)
    if await reconcile_old_replica_sets(dc, all_rss, active_old, new_rs, d):
        return await sync_rollout_status(dc, all_rss, new_rs, d)
    if dcond.deployment_complete(d, d.get("status") or {}):
        await cleanup_deployment(dc, old_rss, d)
    return await sync_rollout_status(dc, all_rss, new_rs, d)


async def reconcile_new_replica_set(dc: DeploymentControllerLike, all_rss: list[Obj | None],
                                    new_rs: Obj, d: Obj) -> bool:
    if du.replicas(new_rs) == du.replicas(d):
        return False
    if du.replicas(new_rs) > du.replicas(d):
        scaled, _ = await scale_replica_set_and_record_event(dc, new_rs, du.replicas(d), d)
        return scaled
    count = du.new_rs_new_replicas(d, all_rss, new_rs)
    scaled, _ = await scale_replica_set_and_record_event(dc, new_rs, count, d)
    return scaled


async def reconcile_old_replica_sets(dc: DeploymentControllerLike, all_rss: list[Obj | None],
                                     old_rss: list[Obj], new_rs: Obj, d: Obj) -> bool:
    if du.replica_count(old_rss) == 0:
        return False
    min_available = du.replicas(d) - du.max_unavailable(d)
    new_unavailable = du.replicas(new_rs) - du.status_int(new_rs, "availableReplicas")
    max_scaled_down = du.replica_count(all_rss) - min_available - new_unavailable
    if max_scaled_down <= 0:
        return False
    old_rss, cleaned = await cleanup_unhealthy_replicas(dc, old_rss, d, max_scaled_down)
    scaled_down = await scale_down_old_replica_sets_for_rolling_update(
        dc, [*old_rss, new_rs], old_rss, d)
    return cleaned + scaled_down > 0


async def cleanup_unhealthy_replicas(dc: DeploymentControllerLike, old_rss: list[Obj], d: Obj,
                                     max_cleanup: int) -> tuple[list[Obj], int]:
    """Scale down old ReplicaSets by their unavailable replicas first: removing them does
    not lower availability (the ReplicaSet deletes not-ready pods first)."""
    old_rss = sorted(old_rss, key=du.creation_key)
    total = 0
    for i, rs in enumerate(old_rss):
        if total >= max_cleanup:
            break
        available = du.status_int(rs, "availableReplicas")
        if du.replicas(rs) == 0 or du.replicas(rs) == available:
            continue
        count = min(max_cleanup - total, du.replicas(rs) - available)
        _, old_rss[i] = await scale_replica_set_and_record_event(
            dc, rs, du.replicas(rs) - count, d)
        total += count
    return old_rss, total


async def scale_down_old_replica_sets_for_rolling_update(
    dc: DeploymentControllerLike, all_rss: list[Obj | None], old_rss: list[Obj], d: Obj,
) -> int:
    min_available = du.replicas(d) - du.max_unavailable(d)
    available = du.available_replica_count(all_rss)
    if available <= min_available:
        return 0
    total, budget = 0, available - min_available
    for rs in sorted(old_rss, key=du.creation_key):
        if total >= budget:
            break
        if du.replicas(rs) == 0:
            continue
        count = min(du.replicas(rs), budget - total)
        await scale_replica_set_and_record_event(dc, rs, du.replicas(rs) - count, d)
        total += count
    return total


# --- Recreate -------------------------------------------------------------------------------


async def rollout_recreate(dc: DeploymentControllerLike, d: Obj, rs_list: list[Obj],
                           pod_map: dict[str, list[Obj]]) -> float | None:
    new_rs, old_rss = await get_all_replica_sets_and_sync_revision(
        dc, d, rs_list, create_if_not_existed=False)
    all_rss: list[Obj | None] = [*old_rss, new_rs]
    scaled_down = False
    for rs in du.filter_active_replica_sets(old_rss):
        scaled, _ = await scale_replica_set_and_record_event(dc, rs, 0, d)
        scaled_down = scaled_down or scaled
    if scaled_down or old_pods_running(new_rs, old_rss, pod_map):
        return await sync_rollout_status(dc, all_rss, new_rs, d)
    if new_rs is None:
        new_rs, old_rss = await get_all_replica_sets_and_sync_revision(
            dc, d, rs_list, create_if_not_existed=True)
        all_rss = [*old_rss, new_rs]
    if new_rs is not None:
        await scale_replica_set_and_record_event(dc, new_rs, du.replicas(d), d)
    if dcond.deployment_complete(d, d.get("status") or {}):
        await cleanup_deployment(dc, old_rss, d)
    return await sync_rollout_status(dc, all_rss, new_rs, d)


def old_pods_running(new_rs: Obj | None, old_rss: list[Obj], pod_map: dict[str, list[Obj]],
                     ) -> bool:
    if du.actual_replica_count(old_rss) > 0:
        return True
    for rs_uid, pods in pod_map.items():
        if new_rs is not None and rs_uid == uid_of(new_rs):
            continue
        for pod in pods:
            if ((pod.get("status") or {}).get("phase")) not in ("Failed", "Succeeded"):
                return True
    return False


# --- progress ----------------------------------------------------------------------------------


def _replica_failure(all_rss: list[Obj | None], new_rs: Obj | None) -> dict[str, Any] | None:
    ordered = [new_rs, *[rs for rs in all_rss if rs is not new_rs]]
    for rs in ordered:
        if rs is None:
            continue
        cond = dcond.get_condition(rs.get("status") or {}, "ReplicaFailure")
        if cond is not None:
            return {"type": dcond.DEPLOYMENT_REPLICA_FAILURE, "status": cond.get("status"),
                    "lastUpdateTime": cond.get("lastTransitionTime"),
                    "lastTransitionTime": cond.get("lastTransitionTime"),
                    "reason": cond.get("reason"), "message": cond.get("message")}
    return None


def _progress(dc: DeploymentControllerLike, d: Obj, status: dict[str, Any], new_rs: Obj | None,
              ) -> None:
    current = dcond.get_condition(d.get("status") or {}, dcond.DEPLOYMENT_PROGRESSING)
    complete = (status.get("replicas") == status.get("updatedReplicas") and current is not None
                and current.get("reason") == dcond.NEW_RS_AVAILABLE_REASON)
    if not dcond.has_progress_deadline(d) or complete:
        return
    now = dc.clock.now()
    subject = f'ReplicaSet "{name_of(new_rs)}"' if new_rs is not None else (
        f'Deployment "{name_of(d)}"')
    if dcond.deployment_complete(d, status):
        dcond.set_condition(status, dcond.new_condition(
            dcond.DEPLOYMENT_PROGRESSING, "True", dcond.NEW_RS_AVAILABLE_REASON,
            f"{subject} has successfully progressed.", now))
    elif dcond.deployment_progressing(d, status):
        cond = dcond.new_condition(dcond.DEPLOYMENT_PROGRESSING, "True",
                                   dcond.REPLICA_SET_UPDATED_REASON,
                                   f"{subject} is progressing.", now)
        if current is not None:
            if current.get("status") == "True":
                cond["lastTransitionTime"] = current.get("lastTransitionTime")
            dcond.remove_condition(status, dcond.DEPLOYMENT_PROGRESSING)
        dcond.set_condition(status, cond)
    elif dcond.deployment_timed_out(d, status, now):
        dcond.set_condition(status, dcond.new_condition(
            dcond.DEPLOYMENT_PROGRESSING, "False", dcond.TIMED_OUT_REASON,
            f"{subject} has timed out progressing.", now))


async def sync_rollout_status(dc: DeploymentControllerLike, all_rss: list[Obj | None],
                              new_rs: Obj | None, d: Obj) -> float | None:
    """Write the rollout status; the seconds after which to check a stuck rollout."""
    status = calculate_status(all_rss, new_rs, d, dc.clock.now())
    if not dcond.has_progress_deadline(d):
        dcond.remove_condition(status, dcond.DEPLOYMENT_PROGRESSING)
    _progress(dc, d, status, new_rs)
    failure = _replica_failure(all_rss, new_rs)
    if failure is not None:
        dcond.set_condition(status, failure)
    else:
        dcond.remove_condition(status, dcond.DEPLOYMENT_REPLICA_FAILURE)
    before = copy.deepcopy(d.get("status") or {})
    await write_status(dc, d, status)
    if (d.get("status") or {}) == before:
        return requeue_stuck_deployment(dc, d, status)
    return None


def requeue_stuck_deployment(dc: DeploymentControllerLike, d: Obj, status: dict[str, Any],
                             ) -> float | None:
    current = dcond.get_condition(d.get("status") or {}, dcond.DEPLOYMENT_PROGRESSING)
    if not dcond.has_progress_deadline(d) or current is None:
        return None
    if dcond.deployment_complete(d, status) or current.get("reason") == dcond.TIMED_OUT_REASON:
        return None
    deadline = int(d["spec"]["progressDeadlineSeconds"])
    since = parse_time(str(current.get("lastUpdateTime")))
    after = deadline - (dc.clock.now() - since).total_seconds()
    if after < 1:
        dc.enqueue_rate_limited(d)
        return None
    return after + 1
