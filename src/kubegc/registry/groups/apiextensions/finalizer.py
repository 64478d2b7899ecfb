"""The CRD finalizer (cf. apiextensions-apiserver pkg/controller/finalizer/crd_finalizer.go):
a deleted CRD keeps the ``customresourcecleanup.apiextensions.k8s.io`` finalizer while its
instances are deleted, reporting progress in its ``Terminating`` condition; the write that
drops the finalizer removes the CRD. ``Registry`` runs it for every CRD being deleted,
with the storage of the custom resources it serves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubegc.api import errors
from kubegc.api.clock import format_time
from kubegc.api.meta import DeleteOptions, is_being_deleted
from kubegc.api.types import Obj
from kubegc.registry.generic.deletion import delete
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.store import Store
from kubegc.registry.generic.target import Target, decode
from kubegc.registry.generic.watch_cache import WatchCache
from kubegc.registry.groups.apiextensions.crd import CLEANUP_FINALIZER, set_condition

TERMINATING = "Terminating"


def terminating(status: str, reason: str, message: str) -> dict[str, str]:
    return {"type": TERMINATING, "status": status, "reason": reason, "message": message}


IN_PROGRESS = terminating("True", "InstanceDeletionInProgress",
                          "CustomResource deletion is in progress")
COMPLETED = terminating("False", "InstanceDeletionCompleted", "removed all instances")


def _failed(err: Exception) -> dict[str, str]:
    return terminating("True", "InstanceDeletionFailed", f"could not issue all deletes: {err}")


async def finalize(store: Store, cache: WatchCache, crd_t: Target, name: str, *,
                   custom: Resource | None, stopping: Callable[[], bool]) -> tuple[Obj, bool]:
    """``CRDFinalizer.sync`` for a CRD being deleted: ``Terminating`` =
    InstanceDeletionInProgress, delete every instance and wait until they are gone, then
    drop the cleanup finalizer with ``Terminating`` = InstanceDeletionCompleted in the same
    write (which removes the CRD when no other finalizer is left). A failure to delete sets
    InstanceDeletionFailed and is raised. Returns ``guaranteed_update``'s (object, removed).

    Raises NotFound when the CRD is gone; returns early (the CRD as it is) once
    ``stopping()`` is true."""
    crd, _ = await _update_status(store, crd_t, name, IN_PROGRESS)
    try:
        if custom is not None:
            await _delete_instances(store, cache, custom, stopping=stopping)
    except errors.StatusError as e:
        if not errors.is_not_found(e):
            await _update_status(store, crd_t, name, _failed(e))
        raise
    if stopping():
        return crd, False
    return await _update_status(store, crd_t, name, COMPLETED, drop_finalizer=True)


async def _update_status(store: Store, crd_t: Target, name: str, condition: dict[str, str],
                         *, drop_finalizer: bool = False) -> tuple[Obj, bool]:
    async def update(current: Obj) -> Any:
        new = {**current, "status": dict(current.get("status") or {})}
        set_condition(new, condition, format_time(store.clock.now()))
        if drop_finalizer:
            # the status subresource keeps the stored metadata: drop the finalizer there,
            # so that this one write both finalizes and (with no finalizer left) removes
            meta = current["metadata"]
            meta["finalizers"] = [f for f in meta.get("finalizers") or []
                                  if f != CLEANUP_FINALIZER]
        return await store.prepare_update(crd_t, crd_t.strategy, current, new,
                                          subresource="status",
                                          check_resource_version=False)

    return await store.guaranteed_update(crd_t, name, update)


async def _delete_instances(store: Store, cache: WatchCache, custom: Resource, *,
                            stopping: Callable[[], bool]) -> None:
    """Delete every instance (each as a DELETE with default options would) and wait, on
    the watch cache, until none is left."""
    every = Target(custom.info, custom.strategy, custom.info.storage_version)
    prefix = every.key_root()
    while not stopping():
        watcher = cache.subscribe(prefix, cache.revision)
        try:
            listed = await store.kv.range(prefix, prefix=True)
            if not listed.kvs:
                return
            for kv in listed.kvs:
                obj = decode(kv)
                if is_being_deleted(obj):
                    continue
                item_t = every.in_namespace(str(obj["metadata"].get("namespace", "")))
                try:
                    await delete(store, item_t, obj["metadata"]["name"], DeleteOptions())
                except errors.StatusError as e:
                    if not errors.is_not_found(e):
                        raise
            await watcher.next_batch(timeout=5.0)
        finally:
            watcher.close()
