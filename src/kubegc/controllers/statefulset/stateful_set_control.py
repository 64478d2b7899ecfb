"""A StatefulSet's revisions (cf. stateful_set_control.go ``getStatefulSetRevisions``,
``truncateHistory``; stateful_set.go ``adoptOrphanRevisions``; stateful_set_utils.go
``newRevision``, ``getPatch``).

* the update revision is a ControllerRevision of the set's template: the newest
  revision when it holds that template, an older one holding it re-numbered to the next
  number (a rollback), else a new one (``<set>-<hash>``, numbered one above the newest,
  with the set's annotations, so ``kubectl rollout history`` shows their change-cause);
* pods below a RollingUpdate's partition are created from the current revision's
  template (``newVersionedStatefulSetPod``);
* the current revision is the one ``status.currentRevision`` names, else the update one;
* history beyond ``spec.revisionHistoryLimit`` (default 10) is deleted, oldest first:
  every revision but the current, the update one and those a pod carries in its
  ``controller-revision-hash`` label counts; each DELETE is a Deletion
  (``RevisionHistoryLimit``).
"""

from __future__ import annotations

from typing import NamedTuple

from kubegc.api.clock import Clock
from kubegc.api.errors import is_not_found
from kubegc.api.meta import name_of
from kubegc.api.types import Obj
from kubegc.component.deletions import Deletion, DeletionSink
from kubegc.controllers.controller_ref_manager import labels_of
from kubegc.controllers.history import (
    ControllerHistory,
    apply_revision,
    equal_revision,
    find_equal_revisions,
    max_revision,
    new_controller_revision,
    revision_number,
    revision_reference,
    sort_controller_revisions,
    template_patch,
)

REVISION_LABEL = "controller-revision-hash"
#: apps/v1's default of ``spec.revisionHistoryLimit``
DEFAULT_REVISION_HISTORY_LIMIT = 10


class Revisions(NamedTuple):
    current: Obj
    update: Obj
    collision_count: int


def new_revision(sts: Obj, revision: int, collision_count: int) -> Obj:
    """``newRevision``: the set's template patch as revision number ``revision``."""
    template = (sts.get("spec") or {}).get("template") or {}
    cr = new_controller_revision(
        sts, api_version="apps/v1", kind="StatefulSet",
        template_labels=dict((template.get("metadata") or {}).get("labels") or {}),
        raw=template_patch(sts), revision=revision, collision_count=collision_count)
    annotations = (sts.get("metadata") or {}).get("annotations") or {}
    if annotations:
        cr["metadata"]["annotations"] = dict(annotations)
    return cr


def revision_history_limit(sts: Obj) -> int:
    value = (sts.get("spec") or {}).get("revisionHistoryLimit")
    return DEFAULT_REVISION_HISTORY_LIMIT if value is None else int(value)


async def get_stateful_set_revisions(history: ControllerHistory, sts: Obj,
                                     revisions: list[Obj]) -> Revisions:
    """``getStatefulSetRevisions`` over ``revisions`` (sorted by number)."""
    collision_count = int((sts.get("status") or {}).get("collisionCount") or 0)
    update = new_revision(sts, max_revision(revisions) + 1, collision_count)
    equal = find_equal_revisions(revisions, update)
    if equal and equal_revision(revisions[-1], equal[-1]):
        update = revisions[-1]  # the template has not changed
    elif equal:  # an older template again: roll back by re-numbering its revision
        update = await history.update_controller_revision(equal[-1],
                                                          revision_number(update))
    else:
        created = await history.create_controller_revision(sts, update, collision_count)
        update, collision_count = created.revision, created.collision_count
    wanted = (sts.get("status") or {}).get("currentRevision")
    current = next((r for r in revisions if name_of(r) == wanted), update)
    return Revisions(current, update, collision_count)


def versioned_set(sts: Obj, ordinal: int, revs: Revisions) -> tuple[Obj, str]:
    """``newVersionedStatefulSetPod``'s choice: below a RollingUpdate's partition the
    current revision's template, else the update revision's (the set's own)."""
    spec = sts.get("spec") or {}
    strategy = spec.get("updateStrategy") or {}
    start = int((spec.get("ordinals") or {}).get("start") or 0)
    rolling = strategy.get("rollingUpdate")
    below = (ordinal < start + int((sts.get("status") or {}).get("currentReplicas") or 0)
             if rolling is None else
             ordinal < start + int(rolling.get("partition") or 0))
    if strategy.get("type", "RollingUpdate") == "RollingUpdate" and below and name_of(
            revs.current) != name_of(revs.update) and revs.current.get("data"):
        return apply_revision(sts, revs.current), name_of(revs.current)
    return sts, name_of(revs.update)


async def truncate_history(history: ControllerHistory, deletions: DeletionSink, sts: Obj,
                           pods: list[Obj], revisions: list[Obj], live_revisions: Revisions,
                           *, deleter: str, clock: Clock) -> None:
    """``truncateHistory``: delete the oldest revisions no one uses beyond the limit."""
    live = {name_of(live_revisions.current), name_of(live_revisions.update)}
    live.update(labels_of(p).get(REVISION_LABEL) or "" for p in pods)
    old = [r for r in sort_controller_revisions(revisions) if name_of(r) not in live]
    limit = revision_history_limit(sts)
    if len(old) <= limit:
        return
    for revision in old[:len(old) - limit]:
        try:
            await history.delete_controller_revision(revision)
        except Exception as err:
            if is_not_found(err):
                continue
            raise
        deletions.record_deletion(Deletion(
            clock.now(), deleter, revision_reference(revision),
            "RevisionHistoryLimit",
            f"ControllerRevision {name_of(revision)} (revision {revision_number(revision)}) "
            f"was beyond revisionHistoryLimit {limit} of StatefulSet {name_of(sts)}: "
            f"{len(old)} old revisions no pod used, the oldest deleted first"))
