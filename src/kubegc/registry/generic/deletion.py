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

import functools
from datetime import timedelta
from typing import Any

from kubegc.api import errors
from kubegc.api.clock import format_time, parse_time
from kubegc.api.meta import (
    FINALIZER_DELETE_DEPENDENTS,
    FINALIZER_ORPHAN_DEPENDENTS,
    GC_FINALIZERS,
    DeleteOptions,
    DeletionPropagation,
)
from kubegc.api.types import Obj
from kubegc.registry.generic.attributes import delete_attributes
from kubegc.registry.generic.store import Store, UpdateFn
from kubegc.registry.generic.strategy import GCPolicy, Strategy
from kubegc.registry.generic.target import DELETE, Target, decode
from kubegc.registry.validation.objectmeta import orphan_and_policy
from kubegc.storage import KeyValue


class _PendingGraceful(Exception):
    """The object is already in a graceful deletion that this request cannot shorten."""


def check_delete_options(options: DeleteOptions) -> None:
    """``ValidateDeleteOptions`` of typed options (an in-process client's, which did not
    come through the wire's parser): every value is one of its type's, but
    ``orphanDependents`` and a policy cannot be both set."""
    if options.orphan_dependents is not None and options.propagation_policy is not None:
        raise errors.invalid("DeleteOptions", "", "", [
            orphan_and_policy(str(options.propagation_policy))])


def check_preconditions(t: Target, obj: Obj, options: DeleteOptions) -> None:
    meta = obj["metadata"]
    uid, rv = options.preconditions_uid, options.preconditions_resource_version
    if uid is not None and uid != meta.get("uid"):
        raise errors.conflict(
            errors.GroupResource(t.info.group, t.info.kind), meta["name"],
            f"the UID in the precondition ({uid}) does not match the UID in record "
            f"({meta.get('uid')}). The object might have been deleted and then recreated")
    if rv is not None and rv != meta.get("resourceVersion"):
        raise errors.conflict(
            errors.GroupResource(t.info.group, t.info.kind), meta["name"],
            f"the ResourceVersion in the precondition ({rv}) does not match "
            f"the ResourceVersion in record ({meta.get('resourceVersion')}). The object might have "
            "been modified")


def should_orphan_dependents(strategy: Strategy, obj: Obj, options: DeleteOptions) -> bool:
    if strategy.default_gc_policy is GCPolicy.UNSUPPORTED:
        return False
    if options.orphan_dependents is not None:
        return options.orphan_dependents
    policy = options.propagation_policy
    if policy is not None:
        return bool(policy == DeletionPropagation.ORPHAN)
    for f in obj["metadata"].get("finalizers") or []:
        if f == FINALIZER_ORPHAN_DEPENDENTS:
            return True
        if f == FINALIZER_DELETE_DEPENDENTS:
            return False
    return strategy.default_gc_policy is GCPolicy.ORPHAN_DEPENDENTS


def should_delete_dependents(strategy: Strategy, obj: Obj, options: DeleteOptions) -> bool:
    if strategy.default_gc_policy is GCPolicy.UNSUPPORTED:
        return False
    if options.orphan_dependents is not None:
        return False
    policy = options.propagation_policy
    if policy is not None:
        return bool(policy == DeletionPropagation.FOREGROUND)
    for f in obj["metadata"].get("finalizers") or []:
        if f == FINALIZER_DELETE_DEPENDENTS:
            return True
        if f == FINALIZER_ORPHAN_DEPENDENTS:
            return False
    return False


def deletion_finalizers_for_garbage_collection(
    strategy: Strategy, obj: Obj, options: DeleteOptions,
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


def grace_period_for(t: Target, obj: Obj, asked: int | None) -> int | None:
    """``CheckGracefulDelete`` of the pod strategy for the grace period ``asked`` (None: the
    pod's own); None for non-graceful resources."""
    if not t.strategy.graceful:
        return None
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    period = asked
    if period is None:
        period = spec.get("terminationGracePeriodSeconds") or 0
    if not spec.get("nodeName") or status.get("phase") in ("Failed", "Succeeded"):
        period = 0
    return max(int(period), 0) if int(period) >= 0 else 1


def before_delete(store: Store, t: Target, obj: Obj,
                  options: DeleteOptions) -> tuple[bool, int | None]:
    """``rest.BeforeDelete`` on ``obj`` (mutated). Returns whether deletion is graceful and
    the grace period in effect (upstream writes it back into the options); raises
    ``_PendingGraceful`` when a graceful deletion is already under way."""
    check_preconditions(t, obj, options)
    meta = obj["metadata"]
    grace = options.grace_period_seconds
    if grace is not None and grace < 0:
        grace = 1
    if not t.strategy.graceful:
        return False, grace
    if meta.get("deletionTimestamp"):
        current = meta.get("deletionGracePeriodSeconds")
        if not current:
            return False, grace
        if grace is None or grace >= current:
            raise _PendingGraceful()
        started = parse_time(meta["deletionTimestamp"]) - timedelta(seconds=current)
        meta["deletionTimestamp"] = format_time(started + timedelta(seconds=grace))
        meta["deletionGracePeriodSeconds"] = grace
        return True, grace
    period = grace_period_for(t, obj, grace)
    if period is None:
        return False, grace
    meta["deletionTimestamp"] = format_time(store.clock.now() + timedelta(seconds=period))
    meta["deletionGracePeriodSeconds"] = period
    if meta.get("generation"):
        meta["generation"] = int(meta["generation"]) + 1
    return True, period


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


async def delete(store: Store, t: Target, name: str, options: DeleteOptions) -> tuple[Obj, bool]:
    """The generic ``Store.Delete`` of one object: one guaranteed update of
    ``update_for_graceful_deletion_and_finalizers``. Returns (object as left, whether it was
    removed from storage)."""
    check_delete_options(options)
    return await generic_delete(store, t, name, options)


async def generic_delete(
    store: Store, t: Target, name: str, options: DeleteOptions,
) -> tuple[Obj, bool]:
    """``delete`` once the options are checked (a resource's own Delete finishes with it)."""
    update = update_for_graceful_deletion_and_finalizers(store, t, t.strategy, options)
    copy = None if store.admission.webhooks_active() else functools.partial(editable_copy, t)
    return await store.guaranteed_update(t, name, update, dry_run=options.dry_run, copy=copy)


def editable_copy(t: Target, obj: Obj, kv: KeyValue) -> Obj:
    """A copy of the stored ``obj`` (decoded from ``kv``) for the update of a DELETE to
    edit, when no admission webhook runs on it (they could edit more): that update sets
    metadata fields only (``before_delete``, the GC finalizers, ``mark_as_deleting``), so a
    copy of the metadata will do (a decode less per DELETE: issue 27); a stored object
    served converted is decoded afresh instead."""
    return {**obj, "metadata": {**obj["metadata"]}} if t.direct else decode(kv, shared=False)


def update_for_graceful_deletion_and_finalizers(
    store: Store, t: Target, strategy: Strategy, options: DeleteOptions,
) -> UpdateFn:
    """Upstream's ``Store.updateForGracefulDeletionAndFinalizers``: the update a DELETE
    applies to the current object — ``BeforeDelete`` (preconditions, the grace period),
    then the GC finalizers the options ask for; the result keeps the object (graceful, or
    finalizers pending: ``markAsDeleting``) or is ``DELETE``."""

    async def update(current: Obj) -> Any:
        if store.admission.webhooks_active():  # deleteValidation, on the current object
            attributes = delete_attributes(t, current, options)
            await store.admission.admit_webhooks(attributes)
            await store.admission.validate_webhooks(attributes)
        try:
            graceful, grace = before_delete(store, t, current, options)
        except _PendingGraceful:
            return current
        _, finalizers = deletion_finalizers_for_garbage_collection(strategy, current, options)
        if finalizers:
            current["metadata"]["finalizers"] = finalizers
        else:
            current["metadata"].pop("finalizers", None)
        if not graceful:
            if finalizers:
                mark_as_deleting(store, current)
                return current
            return DELETE
        if finalizers or grace:
            return current
        return DELETE

    return update


__all__ = [
    "check_delete_options",
    "delete",
    "deletion_finalizers_for_garbage_collection",
    "editable_copy",
    "update_for_graceful_deletion_and_finalizers",
]
