"""DELETE with Kubernetes semantics (cf. generic ``Store.Delete``, ``rest.BeforeDelete``,
``updateForGracefulDeletionAndFinalizers`` and ``deletionFinalizersForGarbageCollection``;
a resource with a Delete of its own, the namespaces', overrides its storage's ``delete``
and finishes with ``generic_delete``).

The decision tables are upstream's store_test.go (``TestStoreDeleteWithOrphanDependents``,
``TestStoreDeletionPropagation``, ``TestGracefulStoreHandleFinalizers``,
``TestNonGracefulStoreHandleFinalizers``) and each strategy's
``DefaultGarbageCollectionPolicy``:
* GC finalizers: ``orphanDependents`` > ``propagationPolicy`` > an existing GC finalizer >
  the resource's default policy; ``Unsupported`` resources (events) never get them.
* Graceful resources (pods) get ``deletionTimestamp = now + grace`` and
  ``deletionGracePeriodSeconds``; a repeated DELETE may only shorten the grace period.
* Anything else with pending finalizers gets ``deletionTimestamp = now``, grace 0 and a
  generation bump, and stays readable; with none it is removed at once.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from kubegc.api import errors
from kubegc.api.clock import format_time, parse_time
from kubegc.api.meta import (
    FINALIZER_DELETE_DEPENDENTS,
    FINALIZER_ORPHAN_DEPENDENTS,
    GC_FINALIZERS,
    DeletionPropagation,
)
from kubegc.api.types import Obj
from kubegc.registry.generic.store import Store, UpdateFn
from kubegc.registry.generic.strategy import GCPolicy, Strategy
from kubegc.registry.generic.target import DELETE, Target
from kubegc.registry.validation.objectmeta import validate_delete_options


class _PendingGraceful(Exception):
    """The object is already in a graceful deletion that this request cannot shorten."""


def check_delete_options(options: dict[str, Any]) -> None:
    causes = validate_delete_options(options)
    if causes:
        raise errors.invalid("DeleteOptions", "", "", causes)


def check_preconditions(t: Target, obj: Obj, options: dict[str, Any]) -> None:
    pre = options.get("preconditions") or {}
    meta = obj["metadata"]
    kind = t.info.kind
    gr = errors.GroupResource(t.info.group, kind)
    if pre.get("uid") is not None and pre["uid"] != meta.get("uid"):
        raise errors.conflict(
            gr, meta["name"],
            f"the UID in the precondition ({pre['uid']}) does not match the UID in record "
            f"({meta.get('uid')}). The object might have been deleted and then recreated")
    if pre.get("resourceVersion") is not None and pre["resourceVersion"] != meta.get(
            "resourceVersion"):
        raise errors.conflict(
            gr, meta["name"],
            f"the ResourceVersion in the precondition ({pre['resourceVersion']}) does not match "
            f"the ResourceVersion in record ({meta.get('resourceVersion')}). The object might have "
            "been modified")


def should_orphan_dependents(strategy: Strategy, obj: Obj, options: dict[str, Any]) -> bool:
    if strategy.default_gc_policy is GCPolicy.UNSUPPORTED:
        return False
    if options.get("orphanDependents") is not None:
        return bool(options["orphanDependents"])
    policy = options.get("propagationPolicy")
    if policy is not None:
        return bool(policy == DeletionPropagation.ORPHAN)
    for f in obj["metadata"].get("finalizers") or []:
        if f == FINALIZER_ORPHAN_DEPENDENTS:
            return True
        if f == FINALIZER_DELETE_DEPENDENTS:
            return False
    return strategy.default_gc_policy is GCPolicy.ORPHAN_DEPENDENTS


def should_delete_dependents(strategy: Strategy, obj: Obj, options: dict[str, Any]) -> bool:
    if strategy.default_gc_policy is GCPolicy.UNSUPPORTED:
        return False
    if options.get("orphanDependents") is not None:
        return False
    policy = options.get("propagationPolicy")
    if policy is not None:
        return bool(policy == DeletionPropagation.FOREGROUND)
    for f in obj["metadata"].get("finalizers") or []:
        if f == FINALIZER_DELETE_DEPENDENTS:
            return True
        if f == FINALIZER_ORPHAN_DEPENDENTS:
            return False
    return False


def deletion_finalizers_for_garbage_collection(
    strategy: Strategy, obj: Obj, options: dict[str, Any],
) -> tuple[bool, list[str]]:
    """(whether the finalizer set changes, the new finalizer list); GC finalizers are
    appended at the end; an unchanged set keeps its order."""
    current = list(obj["metadata"].get("finalizers") or [])
    new = [f for f in current if f not in GC_FINALIZERS]
    if should_orphan_dependents(strategy, obj, options):
        new.append(FINALIZER_ORPHAN_DEPENDENTS)
    if should_delete_dependents(strategy, obj, options):
        new.append(FINALIZER_DELETE_DEPENDENTS)
    if set(new) == set(current):
        return False, current
    return True, new


def grace_period_for(t: Target, obj: Obj, options: dict[str, Any]) -> int | None:
    """``CheckGracefulDelete`` of the pod strategy; None for non-graceful resources."""
    strategy = t.strategy
    if not strategy.graceful:
        return None
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    period = options.get("gracePeriodSeconds")
    if period is None:
        period = spec.get("terminationGracePeriodSeconds") or 0
    if not spec.get("nodeName") or status.get("phase") in ("Failed", "Succeeded"):
        period = 0
    return max(int(period), 0) if int(period) >= 0 else 1


def before_delete(store: Store, t: Target, obj: Obj, options: dict[str, Any]) -> bool:
    """``rest.BeforeDelete`` on ``obj`` (mutated). Returns whether deletion is graceful;
    raises ``_PendingGraceful`` when a graceful deletion is already under way."""
    check_preconditions(t, obj, options)
    meta = obj["metadata"]
    grace = options.get("gracePeriodSeconds")
    if grace is not None and grace < 0:
        options["gracePeriodSeconds"] = grace = 1
    if not t.strategy.graceful:
        return False
    if meta.get("deletionTimestamp"):
        current = meta.get("deletionGracePeriodSeconds")
        if not current:
            return False
        if grace is None or grace >= current:
            raise _PendingGraceful()
        started = parse_time(meta["deletionTimestamp"]) - timedelta(seconds=current)
        meta["deletionTimestamp"] = format_time(started + timedelta(seconds=grace))
        meta["deletionGracePeriodSeconds"] = grace
        return True
    period = grace_period_for(t, obj, options)
    if period is None:
        return False
    options["gracePeriodSeconds"] = period
    meta["deletionTimestamp"] = format_time(store.clock.now() + timedelta(seconds=period))
    meta["deletionGracePeriodSeconds"] = period
    if meta.get("generation"):
        meta["generation"] = int(meta["generation"]) + 1
    return True


def mark_as_deleting(store: Store, obj: Obj) -> None:
    """``markAsDeleting``: non-graceful objects with finalizers pending."""
    meta = obj["metadata"]
    now = store.clock.now()
    if not meta.get("deletionTimestamp") and meta.get("generation"):
        meta["generation"] = int(meta["generation"]) + 1
    existing = meta.get("deletionTimestamp")
    if not existing or parse_time(existing) > now:
        meta["deletionTimestamp"] = format_time(now)
    meta["deletionGracePeriodSeconds"] = 0


async def delete(store: Store, t: Target, name: str, options: dict[str, Any]) -> tuple[Obj, bool]:
    """The generic ``Store.Delete`` of one object: one guaranteed update of
    ``update_for_graceful_deletion_and_finalizers``. Returns (object as left, whether it was
    removed from storage)."""
    check_delete_options(options)
    return await generic_delete(store, t, name, options)


async def generic_delete(
    store: Store, t: Target, name: str, options: dict[str, Any],
) -> tuple[Obj, bool]:
    """``delete`` once the options are checked (a resource's own Delete finishes with it)."""
    update = update_for_graceful_deletion_and_finalizers(store, t, t.strategy, options)
    return await store.guaranteed_update(t, name, update, dry_run=bool(options.get("dryRun")))


def update_for_graceful_deletion_and_finalizers(
    store: Store, t: Target, strategy: Strategy, options: dict[str, Any],
) -> UpdateFn:
    """Upstream's ``Store.updateForGracefulDeletionAndFinalizers``: the update a DELETE
    applies to the current object — ``BeforeDelete`` (preconditions, the grace period),
    then the GC finalizers the options ask for; the result keeps the object (graceful, or
    finalizers pending: ``markAsDeleting``) or is ``DELETE``."""

    async def update(current: Obj) -> Any:
        opts = dict(options)  # before_delete sets gracePeriodSeconds; nested values: read only
        try:
            graceful = before_delete(store, t, current, opts)
        except _PendingGraceful:
            return current
        _, finalizers = deletion_finalizers_for_garbage_collection(strategy, current, opts)
        if finalizers:
            current["metadata"]["finalizers"] = finalizers
        else:
            current["metadata"].pop("finalizers", None)
        if not graceful:
            if finalizers:
                mark_as_deleting(store, current)
                return current
            return DELETE
        if finalizers or opts.get("gracePeriodSeconds"):
            return current
        return DELETE

    return update


__all__ = [
    "check_delete_options",
    "delete",
    "deletion_finalizers_for_garbage_collection",
    "update_for_graceful_deletion_and_finalizers",
]
