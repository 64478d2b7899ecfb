"""A DaemonSet's history and rolling update (cf. pkg/controller/daemon/update.go:
``constructHistory``, ``snapshot``, ``dedupCurHistories``, ``cleanupHistory``,
``rollingUpdate``, ``getUnavailableNumbers``).

* history: ControllerRevisions owned by the set, each holding a template patch
  (``getPatch``); the current one is the revision whose data equals the set's patch,
  ``<ds>-<hash>`` where the hash is the pods' ``controller-revision-hash`` (the
  pod-template-hash of the template and ``status.collisionCount``), numbered one above
  the newest old one. A name taken by a revision of other data bumps
  ``status.collisionCount`` and the sync is retried; duplicates of the current revision are
  folded into the newest (its pods relabelled);
* ``cleanup_history``: beyond ``spec.revisionHistoryLimit`` (default 10), the oldest old
  revisions no pod carries are deleted, each a Deletion (``RevisionHistoryLimit``);
* ``rolling_update``: with ``RollingUpdate`` (the default) and no surge, old pods are
  deleted (the manage loop creates their replacements) as long as no more than
  ``maxUnavailable`` (default 1; a percentage of the desired number, rounded up) nodes lack
  an available up-to-date pod; unavailable old pods go first. kubegc: ``maxSurge`` is
  treated as 0.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any, NamedTuple

from kubegc.api.clock import Clock
from kubegc.api.errors import is_already_exists, is_not_found
from kubegc.api.labels import LabelSelector
from kubegc.api.meta import controller_ref_of, is_being_deleted, name_of, namespace_of
from kubegc.api.pod import PODS, is_pod_available
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import Client, PatchType
from kubegc.component.deletions import Deletion, DeletionSink
from kubegc.controllers.controller_ref_manager import (
    fresh_controller_getter,
    labels_of,
    recheck_deletion_timestamp,
)
from kubegc.controllers.controller_utils import compute_hash, new_controller_ref
from kubegc.controllers.history import (
    CONTROLLER_REVISIONS,
    ControllerHistory,
    max_revision,
    raw_of,
    revision_number,
    revision_reference,
    sort_controller_revisions,
    template_patch,
)

DAEMONSETS = GroupVersionResource("apps", "v1", "daemonsets")
#: ``apps.DefaultDaemonSetUniqueLabelKey``
UNIQUE_LABEL = "controller-revision-hash"
DEFAULT_REVISION_HISTORY_LIMIT = 10


class Constructed(NamedTuple):
    current: Obj
    old: list[Obj]


class Doomed(NamedTuple):
    """A pod the controller deletes, and the rule why (``DELETION_REASONS``)."""

    pod: Obj
    reason: str
    message: str


def template_hash(ds: Obj) -> str:
    return compute_hash((ds.get("spec") or {}).get("template") or {},
                        (ds.get("status") or {}).get("collisionCount"))


def match(ds: Obj, revision: Obj) -> bool:
    """``Match``: the revision holds the set's template."""
    return raw_of(revision) == template_patch(ds)


async def controlled_histories(client: Client, history: ControllerHistory, ds: Obj,
                               selector: LabelSelector) -> list[Obj]:
    """``controlledHistories``: the set's revisions, orphans that match adopted (once the
    set is known not to be going)."""
    out = []
    for revision in history.list_controller_revisions(ds, selector):
        if controller_ref_of(revision) is None:
            await recheck_deletion_timestamp(fresh_controller_getter(
                client, DAEMONSETS, ds, "DaemonSet"))()
            revision = await history.adopt_controller_revision(
                ds, revision, api_version="apps/v1", kind="DaemonSet")
        out.append(revision)
    return out


async def construct_history(client: Client, history: ControllerHistory, ds: Obj,
                            revisions: list[Obj], pods: list[Obj]) -> Constructed:
    """``constructHistory`` over the set's ``revisions`` (claimed)."""
    current: list[Obj] = []
    old: list[Obj] = []
    for revision in revisions:
        if UNIQUE_LABEL not in labels_of(revision):
            revision = await client.patch(
                CONTROLLER_REVISIONS, name_of(revision),
                {"metadata": {"labels": {UNIQUE_LABEL: name_of(revision)}}},
                namespace=namespace_of(revision))
        (current if match(ds, revision) else old).append(revision)
    number = max_revision(old) + 1
    if not current:
        return Constructed(await snapshot(client, ds, number), old)
    cur = await dedup_current_histories(client, history, ds, current, pods)
    if revision_number(cur) < number:
        cur = await history.update_controller_revision(cur, number)
    return Constructed(cur, old)


async def snapshot(client: Client, ds: Obj, revision: int) -> Obj:
    """``snapshot``: create the current revision; on a name taken by other data, bump the
    collision count (if the one used was not stale) and fail, so the sync runs again."""
    hash_ = template_hash(ds)
    template = (ds.get("spec") or {}).get("template") or {}
    meta: dict[str, Any] = {
        "name": f"{name_of(ds)}-{hash_}", "namespace": namespace_of(ds),
        "labels": {**((template.get("metadata") or {}).get("labels") or {}),
                   UNIQUE_LABEL: hash_},
        "ownerReferences": [new_controller_ref(ds, "apps/v1", "DaemonSet")]}
    annotations = (ds.get("metadata") or {}).get("annotations")
    if annotations:
        meta["annotations"] = dict(annotations)
    body = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": meta,
            "data": json.loads(template_patch(ds)),
            "revision": revision}
    try:
        return await client.create(CONTROLLER_REVISIONS, body, namespace=namespace_of(ds))
    except Exception as err:
        if not is_already_exists(err):
            raise
        existing = await client.get(CONTROLLER_REVISIONS, meta["name"],
                                    namespace=namespace_of(ds))
        if match(ds, existing):
            return existing
        fresh = await client.get(DAEMONSETS, name_of(ds), namespace=namespace_of(ds))
        seen = (ds.get("status") or {}).get("collisionCount")
        count = (fresh.get("status") or {}).get("collisionCount")
        if count != seen:
            raise RuntimeError(f"found a stale collision count ({seen}, expected {count}) of "
                               f"DaemonSet {name_of(ds)!r} while processing; will retry "
                               "until it is updated") from err
        await client.patch(DAEMONSETS, name_of(ds), {
            "metadata": {"resourceVersion": (fresh.get("metadata") or {}).get(
                "resourceVersion")},
            "status": {"collisionCount": int(count or 0) + 1}},
            namespace=namespace_of(ds), subresource="status")
        raise


async def dedup_current_histories(client: Client, history: ControllerHistory, ds: Obj,
                                  current: list[Obj], pods: list[Obj]) -> Obj:
    """``dedupCurHistories``: keep the newest revision of the set's template, relabel the
    pods of the others with its hash, and delete the others (kubegc: as duplicates, not
    recorded as a rule's deletion — they hold the same template)."""
    keep = max(current, key=revision_number)
    hash_ = labels_of(keep).get(UNIQUE_LABEL)
    for revision in current:
        if name_of(revision) == name_of(keep):
            continue
        for pod in pods:
            if labels_of(pod).get(UNIQUE_LABEL) != hash_:
                await client.patch(PODS, name_of(pod),
                                   {"metadata": {"labels": {UNIQUE_LABEL: hash_}}},
                                   namespace=namespace_of(pod), patch_type=PatchType.STRATEGIC)
        try:
            await history.delete_controller_revision(revision)
        except Exception as err:
            if not is_not_found(err):
                raise
    return keep


def revision_history_limit(ds: Obj) -> int:
    value = (ds.get("spec") or {}).get("revisionHistoryLimit")
    return DEFAULT_REVISION_HISTORY_LIMIT if value is None else int(value)


async def cleanup_history(history: ControllerHistory, deletions: DeletionSink, ds: Obj,
                          old: list[Obj], pods: Iterable[Obj], *, deleter: str,
                          clock: Clock) -> None:
    """``cleanupHistory``: delete the oldest old revisions no pod uses beyond the limit."""
    limit = revision_history_limit(ds)
    to_kill = len(old) - limit
    if to_kill <= 0:
        return
    live = {labels_of(p).get(UNIQUE_LABEL) for p in pods} - {None, ""}
    for revision in sort_controller_revisions(old):
        if to_kill <= 0:
            break
        if labels_of(revision).get(UNIQUE_LABEL) in live:
            continue
        try:
            await history.delete_controller_revision(revision)
        except Exception as err:
            if not is_not_found(err):
                raise
        else:
            deletions.record_deletion(Deletion(
                clock.now(), deleter, revision_reference(revision), "RevisionHistoryLimit",
                f"ControllerRevision {name_of(revision)} (revision "
                f"{revision_number(revision)}) was beyond revisionHistoryLimit {limit} of "
                f"DaemonSet {name_of(ds)}: {len(old)} old revisions, the oldest no pod used "
                "deleted first"))
        to_kill -= 1


def max_unavailable(ds: Obj, desired: int) -> int:
    """``updatedDesiredNodeCounts``' maxUnavailable: an int or a percentage of the desired
    number rounded up; 1 when it would be 0 (maxSurge is taken as 0)."""
    strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
    value = (strategy.get("rollingUpdate") or {}).get("maxUnavailable", 1)
    if isinstance(value, str) and value.endswith("%"):
        try:
            count = math.ceil(int(value[:-1]) * desired / 100)
        except ValueError:
            count = 1
    else:
        try:
            count = int(value)
        except (TypeError, ValueError):
            count = 1
    return count or 1


def rolling_update(ds: Obj, by_node: dict[str, list[Obj]], desired: int, hash_: str, *,
                   clock: Clock) -> list[Doomed]:
    """``rollingUpdate`` (no surge): the old pods to delete now. ``by_node``: the set's
    pods on each node that should run it."""
    min_ready = int((ds.get("spec") or {}).get("minReadySeconds") or 0)
    now = clock.now()
    limit = max_unavailable(ds, desired)
    unavailable = 0
    replace: list[Obj] = []
    candidates: list[Obj] = []
    for node in sorted(by_node):
        live = [p for p in by_node[node] if not is_being_deleted(p)]
        new = [p for p in live if labels_of(p).get(UNIQUE_LABEL) == hash_]
        old = [p for p in live if labels_of(p).get(UNIQUE_LABEL) != hash_]
        if len(new) > 1 or len(old) > 1 or bool(new) == bool(old):
            unavailable += 1  # the manage loop creates or deletes here
        elif new:
            unavailable += not is_pod_available(new[0], min_ready, now)
        elif not is_pod_available(old[0], min_ready, now):
            replace.append(old[0])
        elif unavailable < limit:
            candidates.append(old[0])
    room = min(max(limit - unavailable, 0), len(candidates))
    return [Doomed(p, "RollingUpdate",
                   f"pod {name_of(p)} on node {p['spec'].get('nodeName')} had revision "
                   f"{labels_of(p).get(UNIQUE_LABEL)}, not {hash_} of DaemonSet {name_of(ds)} "
                   f"(RollingUpdate, maxUnavailable {limit})")
            for p in [*replace, *candidates[:room]]]
