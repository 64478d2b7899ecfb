"""What an update takes from the stored object and what removes it (cf. the generic
Store's ``BeforeUpdate`` / ``rest.BeforeUpdate``, the status strategies'
``PrepareForUpdate`` and ``ShouldDeleteDuringUpdate``): pure functions of the old and new
objects, used by ``Store.prepare_update``."""

from __future__ import annotations

from typing import Any

from kubegc.api.clock import normalize_time
from kubegc.api.types import Obj, clone
from kubegc.registry.generic.strategy import Strategy


def status_update(old: Obj, new: Obj) -> Obj:
    """A status subresource write: the stored object with the new status (and the labels,
    annotations, resourceVersion and uid the request carried)."""
    out = clone(old)
    if "status" in new:
        out["status"] = new["status"]
    else:
        out.pop("status", None)
    out_meta, new_meta = out["metadata"], new["metadata"]
    for key in ("labels", "annotations", "resourceVersion", "uid"):
        if key in new_meta:
            out_meta[key] = new_meta[key]
    return out

def carry_over_meta(old_meta: dict[str, Any], new_meta: dict[str, Any]) -> None:
    """Fields an update may not change are taken from the stored object (BeforeUpdate)."""
    new_meta.setdefault("uid", old_meta.get("uid"))
    for key in ("creationTimestamp", "deletionTimestamp", "generation"):
        if key in old_meta:
            new_meta[key] = old_meta[key]
        else:
            new_meta.pop(key, None)
    if "deletionGracePeriodSeconds" in old_meta:
        new_meta["deletionGracePeriodSeconds"] = old_meta["deletionGracePeriodSeconds"]
    for key in ("finalizers", "ownerReferences", "labels", "annotations", "managedFields"):
        if key in new_meta and new_meta[key] in (None, [], {}):
            del new_meta[key]
    if "creationTimestamp" in new_meta and isinstance(new_meta["creationTimestamp"], str):
        new_meta["creationTimestamp"] = normalize_time(new_meta["creationTimestamp"])


def should_delete_during_update(strategy: Strategy, old: Obj, new: Obj) -> bool:
    """``ShouldDeleteDuringUpdate``: an update that leaves a deleting object with no
    finalizers and a zero/unset grace period removes it — if the resource's own condition
    (``Strategy.delete_during_update``; namespaces: no spec finalizers) agrees."""
    old_meta, new_meta = old["metadata"], new["metadata"]
    if new_meta.get("finalizers") or not old_meta.get("deletionTimestamp"):
        return False
    if old_meta.get("deletionGracePeriodSeconds") not in (None, 0):
        return False
    return strategy.delete_during_update(new)
