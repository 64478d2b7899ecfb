"""Deployment sync steps shared by every strategy (cf. pkg/controller/deployment/sync.go):
finding or creating the new ReplicaSet and syncing revisions, scaling (proportionally for
rolling updates), cleaning up old ReplicaSets beyond ``revisionHistoryLimit``, and the
status write.

Every function takes the controller (``dc``) for its client, recorder and clock, and a
private deep copy ``d`` of the Deployment that it may mutate; after a status write ``d``
carries what the server stored. ReplicaSets are written with ``update`` (optimistic
concurrency on the cached object, as upstream); a conflict fails the sync, which is then
requeued.
"""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any, Protocol

import kubegc.controllers.deployment.conditions as dcond
import kubegc.controllers.deployment.util as du
from kubegc.api.errors import StatusError, is_already_exists, is_conflict, is_not_found
from kubegc.api.meta import (
    ObjectReference,
    controller_ref_of,
    is_being_deleted,
    name_of,
    namespace_of,
    uid_of,
)
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import SharedInformer
from kubegc.client.events import EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING
from kubegc.client.interface import DeleteOptions, PatchType
from kubegc.component.base_controller import ControllerView
from kubegc.component.deletions import Deletion, DeletionSink
from kubegc.controllers.controller_ref_manager import REPLICASETS
from kubegc.controllers.controller_utils import (
    NAMESPACE_TERMINATING_CAUSE,
    compute_hash,
    has_status_cause,
    new_controller_ref,
    omit_empty,
    status_patch,
)


class DeploymentControllerLike(ControllerView, Protocol):
    """What the sync and rollout steps use of the ``DeploymentController`` that calls
    them (a protocol: the steps are upstream's methods of that controller, split into
    modules that must not import it back)."""

    @property
    def gvr(self) -> GroupVersionResource: ...

    @property
    def rs_informer(self) -> SharedInformer: ...

    @property
    def deletions(self) -> DeletionSink: ...

    @property
    def component(self) -> str: ...

    def enqueue_rate_limited(self, obj: Obj) -> None: ...


DEPLOYMENTS_API_VERSION = "apps/v1"


async def write_status(dc: DeploymentControllerLike, d: Obj, status: dict[str, Any], *,
                       annotations_changed: bool = False) -> None:
    """Patch ``status`` (and the revision annotation) onto the stored Deployment."""
    new = omit_empty(status)
    old = dict(d.get("status") or {})
    if new == old and not annotations_changed:
        return
    patch = status_patch(d, old, new)
    if annotations_changed:
        patch.setdefault("metadata", {})["annotations"] = {
            du.REVISION_ANNOTATION: d["metadata"]["annotations"][du.REVISION_ANNOTATION]}
    stored = await dc.client.patch(dc.gvr, name_of(d), patch, namespace=namespace_of(d),
                                   patch_type=PatchType.MERGE, subresource="status")
    d["status"] = stored.get("status") or {}
    d["metadata"]["resourceVersion"] = stored["metadata"].get("resourceVersion")


async def get_all_replica_sets_and_sync_revision(
    dc: DeploymentControllerLike, d: Obj, rs_list: list[Obj], *, create_if_not_existed: bool,
) -> tuple[Obj | None, list[Obj]]:
    """(the new ReplicaSet or None, every old ReplicaSet)."""
    _, all_old = du.find_old_replica_sets(d, rs_list)
    new_rs = await get_new_replica_set(dc, d, rs_list, all_old,
                                       create_if_not_existed=create_if_not_existed)
    return new_rs, all_old


async def get_new_replica_set(dc: DeploymentControllerLike, d: Obj, rs_list: list[Obj],
                              old_rss: list[Obj], *, create_if_not_existed: bool) -> Obj | None:
    existing = du.find_new_replica_set(d, rs_list)
    new_revision = str(du.max_revision(old_rss) + 1)
    if existing is not None:
        return await _sync_existing_new_replica_set(dc, d, existing, new_revision)
    if not create_if_not_existed:
        return None
    return await _create_new_replica_set(dc, d, old_rss, new_revision)


async def _sync_existing_new_replica_set(dc: DeploymentControllerLike, d: Obj, existing: Obj,
                                         new_revision: str) -> Obj:
    rs = copy.deepcopy(existing)
    annotations_updated = du.set_new_replica_set_annotations(d, rs, new_revision, exists=True)
    min_ready = (d.get("spec") or {}).get("minReadySeconds") or 0
    if annotations_updated or ((rs.get("spec") or {}).get("minReadySeconds") or 0) != min_ready:
        rs["spec"]["minReadySeconds"] = min_ready
        return await dc.client.update(REPLICASETS, rs, namespace=namespace_of(rs))
    rev = ((rs["metadata"].get("annotations") or {}).get(du.REVISION_ANNOTATION)) or ""
    annotations_changed = du.set_deployment_revision(d, rev)
    status = copy.deepcopy(d.get("status") or {})
    progressing = dcond.get_condition(status, dcond.DEPLOYMENT_PROGRESSING)
    if dcond.has_progress_deadline(d) and progressing is None:
        dcond.set_condition(status, dcond.new_condition(
            dcond.DEPLOYMENT_PROGRESSING, "True", dcond.FOUND_NEW_RS_REASON,
            f'Found new replica set "{name_of(rs)}"', dc.clock.now()))
    await write_status(dc, d, status, annotations_changed=annotations_changed)
    return rs


def new_replica_set_object(d: Obj, collision_count: int | None) -> Obj:
    """The ReplicaSet a Deployment's current template asks for (without replicas)."""
    template = copy.deepcopy((d.get("spec") or {}).get("template") or {})
    pod_template_hash = compute_hash(template, collision_count)
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    labels[du.DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY] = pod_template_hash
    template.setdefault("metadata", {})["labels"] = labels
    selector = copy.deepcopy((d.get("spec") or {}).get("selector") or {})
    selector.setdefault("matchLabels", {})[du.DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY] = (
        pod_template_hash)
    spec: dict[str, Any] = {"replicas": 0, "selector": selector, "template": template}
    if (d.get("spec") or {}).get("minReadySeconds"):
        spec["minReadySeconds"] = d["spec"]["minReadySeconds"]
    return {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {
            "name": f"{name_of(d)}-{pod_template_hash}", "namespace": namespace_of(d),
            "labels": dict(labels),
            "ownerReferences": [new_controller_ref(d, DEPLOYMENTS_API_VERSION, "Deployment")],
        },
        "spec": spec,
    }


async def _create_new_replica_set(dc: DeploymentControllerLike, d: Obj, old_rss: list[Obj],
                                  new_revision: str) -> Obj | None:
    collision_count = (d.get("status") or {}).get("collisionCount")
    new_rs = new_replica_set_object(d, collision_count)
    new_replicas = du.new_rs_new_replicas(d, [*old_rss, new_rs], new_rs)
    new_rs["spec"]["replicas"] = new_replicas
    du.set_new_replica_set_annotations(d, new_rs, new_revision, exists=False)
    try:
        created = await dc.client.create(REPLICASETS, new_rs, namespace=namespace_of(d))
    except Exception as err:
        if is_already_exists(err):
            return await _handle_collision(dc, d, new_rs, err)
        if has_status_cause(err, NAMESPACE_TERMINATING_CAUSE):
            raise
        msg = f'Failed to create new replica set "{name_of(new_rs)}": {err}'
        if dcond.has_progress_deadline(d):
            status = copy.deepcopy(d.get("status") or {})
            dcond.set_condition(status, dcond.new_condition(
                dcond.DEPLOYMENT_PROGRESSING, "False", dcond.FAILED_RS_CREATE_REASON, msg,
                dc.clock.now()))
            await write_status(dc, d, status)
        dc.recorder.event(d, EVENT_TYPE_WARNING, dcond.FAILED_RS_CREATE_REASON, msg)
        raise
    if new_replicas > 0:
        dc.recorder.event(d, EVENT_TYPE_NORMAL, "ScalingReplicaSet",
                          f"Scaled up replica set {name_of(created)} from 0 to {new_replicas}")
    annotations_changed = du.set_deployment_revision(d, new_revision)
    status = copy.deepcopy(d.get("status") or {})
    if dcond.has_progress_deadline(d):
        dcond.set_condition(status, dcond.new_condition(
            dcond.DEPLOYMENT_PROGRESSING, "True", dcond.NEW_REPLICA_SET_REASON,
            f'Created new replica set "{name_of(created)}"', dc.clock.now()))
    await write_status(dc, d, status, annotations_changed=annotations_changed)
    return created


async def _handle_collision(dc: DeploymentControllerLike, d: Obj, new_rs: Obj, err: Exception,
                            ) -> Obj:
    """The name is taken: ours with our template (a stale cache) is fine; anything else is
    a hash collision, resolved by bumping ``status.collisionCount`` (next sync, new name)."""
    rs = dc.rs_informer.indexer.get_by_key(f"{namespace_of(d)}/{name_of(new_rs)}")
    if rs is None:
        rs = await dc.client.get(REPLICASETS, name_of(new_rs), namespace=namespace_of(d))
    ref = controller_ref_of(rs)
    template = (d.get("spec") or {}).get("template") or {}
    if ref is not None and ref.get("uid") == uid_of(d) and du.equal_ignore_hash(
            template, (rs.get("spec") or {}).get("template") or {}):
        return rs
    status = copy.deepcopy(d.get("status") or {})
    status["collisionCount"] = int(status.get("collisionCount") or 0) + 1
    await write_status(dc, d, status)
    raise err


# --- scaling ------------------------------------------------------------------------------


async def scale_replica_set(dc: DeploymentControllerLike, rs: Obj, new_scale: int, d: Obj,
                            operation: str) -> tuple[bool, Obj]:
    size_needs_update = du.replicas(rs) != new_scale
    maximum = du.replicas(d) + du.max_surge(d)
    if not size_needs_update and not du.replicas_annotations_need_update(
            rs, du.replicas(d), maximum):
        return False, rs
    old_scale = du.replicas(rs)
    rs_copy = copy.deepcopy(rs)
    rs_copy["spec"]["replicas"] = new_scale
    du.set_replicas_annotations(rs_copy, du.replicas(d), maximum)
    updated = await dc.client.update(REPLICASETS, rs_copy, namespace=namespace_of(rs))
    if size_needs_update:
        dc.recorder.event(d, EVENT_TYPE_NORMAL, "ScalingReplicaSet",
                          f"Scaled {operation} replica set {name_of(updated)} from "
                          f"{old_scale} to {new_scale}")
    return size_needs_update, updated


async def scale_replica_set_and_record_event(dc: DeploymentControllerLike, rs: Obj, new_scale: int,
                                             d: Obj) -> tuple[bool, Obj]:
    if du.replicas(rs) == new_scale:
        return False, rs
    operation = "up" if du.replicas(rs) < new_scale else "down"
    return await scale_replica_set(dc, rs, new_scale, d, operation)


async def scale(dc: DeploymentControllerLike, d: Obj, new_rs: Obj | None, old_rss: list[Obj],
                ) -> None:
    """Follow a change of ``spec.replicas`` (cf. ``DeploymentController.scale``)."""
    active_or_latest = du.find_active_or_latest(new_rs, old_rss)
    if active_or_latest is not None:
        if du.replicas(active_or_latest) != du.replicas(d):
            await scale_replica_set_and_record_event(dc, active_or_latest, du.replicas(d), d)
        return
    if du.is_saturated(d, new_rs):
        for old in du.filter_active_replica_sets(old_rss):
            await scale_replica_set_and_record_event(dc, old, 0, d)
        return
    if du.is_rolling_update(d):
        await _scale_proportionally(dc, d, du.filter_active_replica_sets([*old_rss, new_rs]))


async def _scale_proportionally(dc: DeploymentControllerLike, d: Obj, all_rss: list[Obj]) -> None:
    allowed = du.replicas(d) + du.max_surge(d) if du.replicas(d) > 0 else 0
    to_add = allowed - du.replica_count(all_rss)
    operation = ""
    if to_add > 0:  # bigger first; newer first among equals
        all_rss.sort(key=du.creation_key, reverse=True)
        all_rss.sort(key=du.replicas, reverse=True)
        operation = "up"
    elif to_add < 0:  # bigger first; older first among equals
        all_rss.sort(key=du.creation_key)
        all_rss.sort(key=du.replicas, reverse=True)
        operation = "down"
    added, sizes = 0, {}
    for rs in all_rss:
        proportion = du.get_proportion(rs, d, to_add, added) if to_add else 0
        sizes[name_of(rs)] = du.replicas(rs) + proportion
        added += proportion
    for i, rs in enumerate(all_rss):
        if i == 0 and to_add != 0:
            sizes[name_of(rs)] = max(0, sizes[name_of(rs)] + to_add - added)
        await scale_replica_set(dc, rs, sizes[name_of(rs)], d, operation)


async def cleanup_deployment(dc: DeploymentControllerLike, old_rss: list[Obj], d: Obj) -> None:
    """``cleanupDeployment``: delete the oldest old ReplicaSets beyond
    ``spec.revisionHistoryLimit`` (by revision, then creation), skipping any that still has
    replicas (spec or status), whose status is behind its generation, or that is being
    deleted; each DELETE that succeeded is a Deletion (``RevisionHistoryLimit``)."""
    if not du.has_revision_history_limit(d):
        return
    alive = [rs for rs in old_rss if not is_being_deleted(rs)]
    limit = int(d["spec"]["revisionHistoryLimit"])
    diff = len(alive) - limit
    if diff <= 0:
        return
    alive.sort(key=lambda rs: (du.revision(rs) or 0, du.creation_key(rs)))
    for rs in alive[:diff]:
        if (du.status_int(rs, "replicas") != 0 or du.replicas(rs) != 0
                or du.generation(rs) > du.observed_generation(rs.get("status") or {})):
            continue
        # only the ReplicaSet judged empty, as it was judged (a stale view: 404 or 409)
        options = DeleteOptions(preconditions_uid=uid_of(rs) or None,
                                preconditions_resource_version=rs["metadata"].get(
                                    "resourceVersion") or None)
        try:
            await dc.client.delete(REPLICASETS, name_of(rs), namespace=namespace_of(rs),
                                   options=options)
        except StatusError as err:
            if not (is_not_found(err) or is_conflict(err)):
                raise
            continue
        dc.deletions.record_deletion(Deletion(
            dc.clock.now(), dc.component,
            ObjectReference("apps/v1", "ReplicaSet", name_of(rs), uid_of(rs),
                            namespace_of(rs)), "RevisionHistoryLimit",
            f"ReplicaSet {name_of(rs)} (revision {du.revision(rs)}) was beyond "
            f"revisionHistoryLimit {limit} of Deployment {name_of(d)}: {len(alive)} old "
            "ReplicaSets, the oldest with no replicas deleted first"))


# --- status -------------------------------------------------------------------------------


def calculate_status(all_rss: list[Obj | None], new_rs: Obj | None, d: Obj, now: datetime,
                     ) -> dict[str, Any]:
    available = du.available_replica_count(all_rss)
    unavailable = max(0, du.replica_count(all_rss) - available)
    old = d.get("status") or {}
    status: dict[str, Any] = {
        "observedGeneration": du.generation(d),
        "replicas": du.actual_replica_count(all_rss),
        "updatedReplicas": du.actual_replica_count([new_rs]),
        "readyReplicas": du.ready_replica_count(all_rss),
        "availableReplicas": available,
        "unavailableReplicas": unavailable,
        "conditions": [dict(c) for c in old.get("conditions") or []],
    }
    if old.get("collisionCount") is not None:
        status["collisionCount"] = old["collisionCount"]
    if available >= du.replicas(d) - du.max_unavailable(d):
        cond = dcond.new_condition(dcond.DEPLOYMENT_AVAILABLE, "True",
                                   dcond.MINIMUM_REPLICAS_AVAILABLE,
                                   "Deployment has minimum availability.", now)
    else:
        cond = dcond.new_condition(dcond.DEPLOYMENT_AVAILABLE, "False",
                                   dcond.MINIMUM_REPLICAS_UNAVAILABLE,
                                   "Deployment does not have minimum availability.", now)
    dcond.set_condition(status, cond)
    return status


async def sync_deployment_status(dc: DeploymentControllerLike, all_rss: list[Obj | None],
                                 new_rs: Obj | None, d: Obj) -> None:
    await write_status(dc, d, calculate_status(all_rss, new_rs, d, dc.clock.now()))


async def sync_status_only(dc: DeploymentControllerLike, d: Obj, rs_list: list[Obj]) -> None:
    new_rs, old_rss = await get_all_replica_sets_and_sync_revision(
        dc, d, rs_list, create_if_not_existed=False)
    await sync_deployment_status(dc, [*old_rss, new_rs], new_rs, d)


async def sync(dc: DeploymentControllerLike, d: Obj, rs_list: list[Obj]) -> None:
    """Scaling events and paused deployments (cf. ``DeploymentController.sync``)."""
    new_rs, old_rss = await get_all_replica_sets_and_sync_revision(
        dc, d, rs_list, create_if_not_existed=False)
    await scale(dc, d, new_rs, old_rss)
    if (d.get("spec") or {}).get("paused"):
        await cleanup_deployment(dc, old_rss, d)
    await sync_deployment_status(dc, [*old_rss, new_rs], new_rs, d)


async def is_scaling_event(dc: DeploymentControllerLike, d: Obj, rs_list: list[Obj]) -> bool:
    new_rs, old_rss = await get_all_replica_sets_and_sync_revision(
        dc, d, rs_list, create_if_not_existed=False)
    for rs in du.filter_active_replica_sets([*old_rss, new_rs]):
        desired = du.desired_replicas_annotation(rs)
        if desired is not None and desired != du.replicas(d):
            return True
    return False


async def check_paused_conditions(dc: DeploymentControllerLike, d: Obj) -> None:
    if not dcond.has_progress_deadline(d):
        return
    status = copy.deepcopy(d.get("status") or {})
    cond = dcond.get_condition(status, dcond.DEPLOYMENT_PROGRESSING)
    if cond is not None and cond.get("reason") == dcond.TIMED_OUT_REASON:
        return
    paused_cond_exists = cond is not None and cond.get("reason") == dcond.PAUSED_DEPLOY_REASON
    paused = bool((d.get("spec") or {}).get("paused"))
    if paused and not paused_cond_exists:
        dcond.set_condition(status, dcond.new_condition(
            dcond.DEPLOYMENT_PROGRESSING, "Unknown", dcond.PAUSED_DEPLOY_REASON,
            "Deployment is paused", dc.clock.now()))
    elif not paused and paused_cond_exists:
        dcond.set_condition(status, dcond.new_condition(
            dcond.DEPLOYMENT_PROGRESSING, "Unknown", dcond.RESUMED_DEPLOY_REASON,
            "Deployment is resumed", dc.clock.now()))
    else:
        return
    await write_status(dc, d, status)
