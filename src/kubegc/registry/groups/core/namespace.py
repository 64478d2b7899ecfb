"""The namespace storage (cf. pkg/registry/core/namespace/storage/storage.go): its own
``Delete`` (``NamespaceREST.delete``), the ``finalize`` subresource (``FinalizeREST``),
``ShouldDeleteNamespaceDuringUpdate`` (``no_spec_finalizers``) and the namespace strategy.

After each of its writes the storage tells the NamespaceLifecycle admission plugin what
it wrote (``Admission.lifecycle.observe``), so that content is admitted in a namespace
created a moment ago and refused in one being deleted.
"""

from __future__ import annotations

from typing import Any

from kubegc.api import errors
from kubegc.api.clock import format_time
from kubegc.api.content import is_dns1123_label
from kubegc.api.meta import (
    FINALIZER_DELETE_DEPENDENTS,
    FINALIZER_KUBERNETES,
    FINALIZER_ORPHAN_DEPENDENTS,
    GC_FINALIZERS,
    DeleteOptions,
    DeletionPropagation,
)
from kubegc.api.types import Obj
from kubegc.registry.admission import Admission
from kubegc.registry.generic.deletion import check_delete_options, generic_delete
from kubegc.registry.generic.rest import (
    Creater,
    EncodedGetter,
    EncodedLister,
    GracefulDeleter,
    Patcher,
    Updater,
    Watcher,
    WriteOptions,
)
from kubegc.registry.generic.standard import StorageContext, StoredResource
from kubegc.registry.generic.store import Store
from kubegc.registry.generic.strategy import GCPolicy, Strategy
from kubegc.registry.generic.target import DELETE, Target


def no_spec_finalizers(new: Obj) -> bool:
    """``ShouldDeleteNamespaceDuringUpdate``'s own condition: no ``spec.finalizers`` left."""
    return not (new.get("spec") or {}).get("finalizers")


async def delete_namespace(store: Store, t: Target, name: str,
                           options: DeleteOptions) -> tuple[Obj, bool]:
    """The namespace storage's ``REST.Delete``: the first DELETE only marks the namespace
    Terminating (``status.phase``, the GC finalizers its options ask for); a later one
    while ``spec.finalizers`` remain changes nothing; then the generic delete."""
    current = await store.get(t, name)
    meta = current["metadata"]
    pre_uid, pre_rv = options.preconditions_uid, options.preconditions_resource_version
    if pre_uid is not None and pre_uid != meta["uid"]:
        raise errors.conflict(t.gr, name, f"Precondition failed: UID in precondition: "
                                          f"{pre_uid}, UID in object meta: {meta['uid']}")
    if pre_rv is not None and pre_rv != meta["resourceVersion"]:
        raise errors.conflict(
            t.gr, name, f"Precondition failed: ResourceVersion in precondition: "
                        f"{pre_rv}, ResourceVersion in object meta: "
                        f"{meta['resourceVersion']}")
    dry_run = options.dry_run
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
    return await generic_delete(store, t, name, options)


def _namespace_gc_finalizers(options: DeleteOptions, current: list[str]) -> list[str]:
    orphan_opt, policy = options.orphan_dependents, options.propagation_policy
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


async def finalize_namespace(store: Store, t: Target, name: str, obj: Obj, *,
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


def _namespace_create(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    finalizers = spec.get("finalizers")
    if not finalizers:
        spec["finalizers"] = [FINALIZER_KUBERNETES]
    obj["status"] = {"phase": "Active"}
    labels = obj["metadata"].setdefault("labels", {})
    labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]


def strategy(**more: Any) -> Strategy:
    """The namespace strategy (``more``: its validation and defaulting)."""
    return Strategy(
        default_gc_policy=GCPolicy.DELETE_DEPENDENTS, tracks_generation=False,
        name_validator=is_dns1123_label, prepare_for_create=_namespace_create,
        status_fields=("status", "spec"), return_deleted_object=True,
        delete_during_update=no_spec_finalizers, **more)


class NamespaceREST(StoredResource, EncodedGetter, EncodedLister, Watcher, Creater, Updater,
                    Patcher, GracefulDeleter):
    """Namespaces: no ``deletecollection``; their own Delete; every write told to the
    NamespaceLifecycle plugin."""

    def __init__(self, ctx: StorageContext, admission: Admission) -> None:
        super().__init__(ctx)
        self.admission = admission

    def after_write(self, t: Target, obj: Obj, *, removed: bool) -> None:
        self.admission.lifecycle.observe(obj, removed=removed)

    async def delete(self, t: Target, name: str,
                     options: DeleteOptions) -> tuple[Obj, bool]:
        check_delete_options(options)
        self.admission.validate_namespace_delete(t, name)
        result, removed = await delete_namespace(self.store, t, name, options)
        if not options.dry_run:
            self.after_write(t, result, removed=removed)
        return result, removed


class FinalizeREST(Updater):
    """``PUT /api/v1/namespaces/<name>/finalize``: only ``spec.finalizers`` changes."""

    def __init__(self, ctx: StorageContext, admission: Admission) -> None:
        self.store = ctx.store
        self.admission = admission

    async def update(self, t: Target, name: str, obj: Obj,
                     options: WriteOptions) -> tuple[Obj, bool]:
        result = await finalize_namespace(self.store, t, name, obj, dry_run=options.dry_run)
        if not options.dry_run:
            self.admission.lifecycle.observe(result)
        return result, False
