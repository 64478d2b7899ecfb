"""The namespace storage (cf. pkg/registry/core/namespace/storage/storage.go): its own
``Delete`` (``delete_namespace``, the namespace strategy's ``delete``), the ``finalize``
subresource (``finalize_namespace``) and ``ShouldDeleteNamespaceDuringUpdate``
(``no_spec_finalizers``, the strategy's ``delete_during_update``).

A leaf of the registry: the strategy table names these functions, and the store they run
on is handed to them (``NamespaceStore``), as is the generic delete they finish with.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from kubegc.api import errors
from kubegc.api.clock import Clock, format_time
from kubegc.api.meta import (
    FINALIZER_DELETE_DEPENDENTS,
    FINALIZER_ORPHAN_DEPENDENTS,
    GC_FINALIZERS,
    DeletionPropagation,
)
from kubegc.api.types import Obj
from kubegc.registry.admission_plugins import NAMESPACE_LIFECYCLE, Admission
from kubegc.registry.target import DELETE, Target

#: the NamespaceLifecycle admission plugin refuses to delete these (its
#: ``immortalNamespaces``)
UNDELETABLE_NAMESPACES = ("default", "kube-system", "kube-public")


class NamespaceStore(Protocol):
    """What the namespace storage uses of the generic ``Store``."""

    clock: Clock
    admission: Admission

    async def get(self, t: Target, name: str) -> Obj: ...

    async def guaranteed_update(self, t: Target, name: str,
                                update: Callable[[Obj], Awaitable[Any]], *,
                                dry_run: bool = False) -> tuple[Obj, bool]: ...


#: the generic ``Store.Delete`` (``deletion.generic_delete``)
GenericDelete = Callable[[Any, Target, str, dict[str, Any]], Awaitable[tuple[Obj, bool]]]


def no_spec_finalizers(new: Obj) -> bool:
    """``ShouldDeleteNamespaceDuringUpdate``'s own condition: no ``spec.finalizers`` left."""
    return not (new.get("spec") or {}).get("finalizers")


async def delete_namespace(
    store: NamespaceStore, t: Target, name: str, options: dict[str, Any], *,
    generic: GenericDelete,
) -> tuple[Obj, bool]:
    """The namespace storage's ``REST.Delete``: the first DELETE only marks the namespace
    Terminating (``status.phase``, the GC finalizers its options ask for); a later one
    while ``spec.finalizers`` remain changes nothing; then the ``generic`` delete."""
    if name in UNDELETABLE_NAMESPACES and store.admission.runs(NAMESPACE_LIFECYCLE):
        raise errors.forbidden(t.gr, name, "this namespace may not be deleted")
    current = await store.get(t, name)
    pre = dict(options.get("preconditions") or {})
    meta = current["metadata"]
    if pre.get("uid") is not None and pre["uid"] != meta["uid"]:
        raise errors.conflict(t.gr, name, f"Precondition failed: UID in precondition: "
                                          f"{pre['uid']}, UID in object meta: {meta['uid']}")
    if pre.get("resourceVersion") is not None and pre["resourceVersion"] != meta[
            "resourceVersion"]:
        raise errors.conflict(
            t.gr, name, f"Precondition failed: ResourceVersion in precondition: "
                        f"{pre['resourceVersion']}, ResourceVersion in object meta: "
                        f"{meta['resourceVersion']}")
    dry_run = bool(options.get("dryRun"))
    uid = meta["uid"]
    if not meta.get("deletionTimestamp"):
        async def start_terminating(existing: Obj) -> Any:
            emeta = existing["metadata"]
            if emeta["uid"] != uid:
                raise errors.conflict(t.gr, name, f"Precondition failed: UID in precondition: "
                                                  f"{uid}, UID in object meta: {emeta['uid']}")
            if not emeta.get("deletionTimestamp"):
                emeta["deletionTimestamp"] = format_time(store.clock.now())
            existing.setdefault("status", {})["phase"] = "Terminating"
            current_f = list(emeta.get("finalizers") or [])
            want = _namespace_gc_finalizers(options, current_f)
            new_f = [f for f in current_f if f not in GC_FINALIZERS] + want
            if set(new_f) != set(current_f):
                emeta["finalizers"] = new_f
            if not emeta.get("finalizers"):
                emeta.pop("finalizers", None)
            return existing

        return await store.guaranteed_update(t, name, start_terminating, dry_run=dry_run)
    if (current.get("spec") or {}).get("finalizers"):
        return current, False
    return await generic(store, t, name, options)


def _namespace_gc_finalizers(options: dict[str, Any], current: list[str]) -> list[str]:
    orphan_opt, policy = options.get("orphanDependents"), options.get("propagationPolicy")
    if orphan_opt is not None:
        orphan, foreground = bool(orphan_opt), False
    elif policy is not None:
        orphan = policy == DeletionPropagation.ORPHAN
        foreground = policy == DeletionPropagation.FOREGROUND
    else:
        orphan = FINALIZER_ORPHAN_DEPENDENTS in current
        foreground = FINALIZER_DELETE_DEPENDENTS in current
    return ([FINALIZER_ORPHAN_DEPENDENTS] if orphan else []) + (
        [FINALIZER_DELETE_DEPENDENTS] if foreground else [])


async def finalize_namespace(store: NamespaceStore, t: Target, name: str, obj: Obj, *,
                             dry_run: bool = False) -> Obj:
    """PUT /api/v1/namespaces/<name>/finalize: only ``spec.finalizers`` changes."""
    spec = obj.get("spec") or {}
    finalizers = spec.get("finalizers") or []
    rv = (obj.get("metadata") or {}).get("resourceVersion")

    async def update(existing: Obj) -> Any:
        if rv and rv != existing["metadata"]["resourceVersion"]:
            raise errors.conflict(t.gr, name, errors.OBJECT_MODIFIED)
        existing.setdefault("spec", {})["finalizers"] = list(finalizers)
        if not finalizers:
            existing["spec"].pop("finalizers", None)
        meta = existing["metadata"]
        if meta.get("deletionTimestamp") and not finalizers and not meta.get("finalizers"):
            return DELETE
        return existing

    result, _ = await store.guaranteed_update(t, name, update, dry_run=dry_run)
    return result
