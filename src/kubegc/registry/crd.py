"""CustomResourceDefinitions (cf. apiextensions-apiserver): an established CRD adds its
resource to the catalog; a deleted CRD first deletes every instance (the
``customresourcecleanup.apiextensions.k8s.io`` finalizer, with the ``Terminating``
condition ``CRDFinalizer`` keeps), then leaves the catalog.

The resource a CRD serves is a ``CustomResourceInfo``: a ``ResourceInfo`` that also carries
the compiled structural schemas of its versions (``CustomResourceSchemas``). Schemas are
compiled once per distinct ``spec.versions`` content (``_compiled``), so a CRD whose status
changes keeps an equal info and the catalog does not churn.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from kubegc.api import errors
from kubegc.api.clock import format_time
from kubegc.api.errors import StatusCause
from kubegc.api.meta import is_being_deleted
from kubegc.api.resources import ResourceInfo, Subresource, split_api_version
from kubegc.api.structural import Structural, compile_schema, default, prune
from kubegc.api.structural import validate as validate_schema
from kubegc.api.structural import validate_status as validate_status_schema
from kubegc.api.types import Obj
from kubegc.registry.keys import key_root
from kubegc.registry.target import Target, decode

if TYPE_CHECKING:
    from kubegc.registry.store import Store
    from kubegc.registry.watch_cache import WatchCache

log = logging.getLogger(__name__)

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
TERMINATING = "Terminating"


class CustomResourceSchemas:
    """The structural schemas of one CRD's versions (cf. the CRD handler's ``crdInfo``).

    Immutable; compares by identity, so a ``CustomResourceInfo`` holding it is a new value
    exactly when the schemas change (and ``strategy_for`` builds a new strategy)."""

    __slots__ = ("by_version",)

    def __init__(self, by_version: dict[str, Structural | None]) -> None:
        self.by_version = by_version

    def for_version(self, version: str) -> Structural | None:
        """The version's schema; None when it has none (then nothing is pruned)."""
        return self.by_version.get(version)

    def for_object(self, obj: Obj) -> Structural | None:
        """The schema of the version ``obj`` is written in (its ``apiVersion``)."""
        _, version = split_api_version(str(obj.get("apiVersion") or ""))
        return self.by_version.get(version)

    def validate(self, obj: Obj) -> list[StatusCause]:
        """Validation of a create (``customResourceStrategy.Validate``)."""
        return validate_schema(obj, self.for_object(obj))

    def validate_update(self, obj: Obj, old: Obj) -> list[StatusCause]:
        """Validation of an update, ratcheted (``customResourceStrategy.ValidateUpdate``)."""
        return validate_schema(obj, self.for_object(obj), old)

    def validate_status(self, obj: Obj, old: Obj) -> list[StatusCause]:
        """Validation of a status update (``statusStrategy.ValidateUpdate``)."""
        return validate_status_schema(obj, self.for_object(obj), old)


_NO_SCHEMAS = CustomResourceSchemas({})


@dataclass(frozen=True, slots=True)
class CustomResourceInfo(ResourceInfo):
    """The ``ResourceInfo`` of a custom resource, with its CRD's compiled schemas."""

    schemas: CustomResourceSchemas = _NO_SCHEMAS

    def __hash__(self) -> int:  # as ResourceInfo's (a dataclass would hash every field)
        return hash((self.group, self.resource))


_COMPILED_CAPACITY = 256
_compiled: OrderedDict[bytes, CustomResourceSchemas] = OrderedDict()


def _schemas(versions: list[dict[str, Any]]) -> CustomResourceSchemas:
    """Compiled schemas for ``spec.versions``, shared by every CRD with the same content
    (an LRU of ``_COMPILED_CAPACITY``: compilation happens once per CRD change, never per
    request)."""
    key = orjson.dumps([(v.get("name"), v.get("schema")) for v in versions])
    cached = _compiled.get(key)
    if cached is not None:
        _compiled.move_to_end(key)
        return cached
    by_version: dict[str, Structural | None] = {}
    for v in versions:
        raw = (v.get("schema") or {}).get("openAPIV3Schema")
        by_version[str(v["name"])] = compile_schema(raw) if isinstance(raw, dict) else None
    compiled = _compiled[key] = CustomResourceSchemas(by_version)
    if len(_compiled) > _COMPILED_CAPACITY:
        _compiled.popitem(last=False)
    return compiled


def resource_info_for(crd: Obj) -> CustomResourceInfo | None:
    """The ``ResourceInfo`` a CRD serves (None if it serves no version)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("served",
                                                                                         True)]
    if not versions or not names.get("plural") or not names.get("kind"):
        return None
    storage = [v["name"] for v in versions if v.get("storage")]
    ordered = storage + [v["name"] for v in versions if v["name"] not in storage]
    subresources: list[Subresource] = []
    first = versions[0].get("subresources") or {}
    if "status" in first:
        subresources.append(Subresource("status"))
    if "scale" in first:
        subresources.append(Subresource("scale", kind="Scale", group="autoscaling", version="v1"))
    return CustomResourceInfo(
        group=str(spec.get("group") or ""),
        versions=tuple(ordered),
        resource=str(names["plural"]),
        kind=str(names["kind"]),
        namespaced=spec.get("scope") == "Namespaced",
        singular=str(names.get("singular") or str(names["kind"]).lower()),
        short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        subresources=tuple(subresources),
        custom=True,
        list_kind=str(names.get("listKind") or f"{names['kind']}List"),
        schemas=_schemas(versions),
    )


def decode_custom_resource(info: ResourceInfo, version: str, obj: Obj) -> list[str]:
    """What decoding a custom resource does upstream: prune what the version's schema does
    not specify, then apply its defaults. Returns the pruned unknown field paths."""
    schema = info.schemas.for_version(version) if isinstance(info, CustomResourceInfo) else None
    if schema is None:
        return []
    unknown = prune(obj, schema)
    default(obj, schema)
    return unknown


def established_status(crd: Obj, now: str) -> dict[str, Any]:
    status = dict(crd.get("status") or {})
    spec = crd.get("spec") or {}
    status["acceptedNames"] = spec.get("names") or {}
    stored = [v.get("name") for v in spec.get("versions") or [] if v.get("storage")]
    status["storedVersions"] = sorted(set(status.get("storedVersions") or []) | set(stored))
    status["conditions"] = [
        {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
         "message": "no conflicts found", "lastTransitionTime": now},
        {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
         "message": "the initial names have been accepted", "lastTransitionTime": now},
    ]
    return status


def printer_columns(crd: Obj, version: str) -> list[dict[str, Any]]:
    for v in (crd.get("spec") or {}).get("versions") or []:
        if v.get("name") == version:
            return list(v.get("additionalPrinterColumns") or [])
    return []


def schema_for(crd: Obj, version: str) -> dict[str, Any] | None:
    for v in (crd.get("spec") or {}).get("versions") or []:
        if v.get("name") == version:
            schema = (v.get("schema") or {}).get("openAPIV3Schema")
            return dict(schema) if isinstance(schema, dict) else None
    return None


# -- deletion (cf. pkg/controller/finalizer/crd_finalizer.go) ---------------------------------


def set_condition(crd: Obj, condition: dict[str, str], now: str) -> None:
    """``SetCRDCondition``: replace the condition of the same type, keeping its
    ``lastTransitionTime`` unless its status changes."""
    status = crd.setdefault("status", {})
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    for i, existing in enumerate(conditions):
        if existing.get("type") == condition["type"]:
            since = existing.get("lastTransitionTime") if existing.get(
                "status") == condition["status"] else now
            conditions[i] = {**condition, "lastTransitionTime": since or now}
            break
    else:
        conditions.append({**condition, "lastTransitionTime": now})
    status["conditions"] = conditions


def terminating(status: str, reason: str, message: str) -> dict[str, str]:
    return {"type": TERMINATING, "status": status, "reason": reason, "message": message}


IN_PROGRESS = terminating("True", "InstanceDeletionInProgress",
                          "CustomResource deletion is in progress")
COMPLETED = terminating("False", "InstanceDeletionCompleted", "removed all instances")


def _failed(err: Exception) -> dict[str, str]:
    return terminating("True", "InstanceDeletionFailed", f"could not issue all deletes: {err}")


async def finalize(store: Store, cache: WatchCache, crd_t: Target, name: str, *,
                   stopping: Callable[[], bool]) -> tuple[Obj, bool]:
    """``CRDFinalizer.sync`` for a CRD being deleted: ``Terminating`` =
    InstanceDeletionInProgress, delete every instance and wait until they are gone, then
    drop the cleanup finalizer with ``Terminating`` = InstanceDeletionCompleted in the same
    write (which removes the CRD when no other finalizer is left). A failure to delete sets
    InstanceDeletionFailed and is raised. Returns ``guaranteed_update``'s (object, removed).

    Raises NotFound when the CRD is gone; returns early (the CRD as it is) once
    ``stopping()`` is true."""
    crd, _ = await _update_status(store, crd_t, name, IN_PROGRESS)
    info = resource_info_for(crd)
    try:
        if info is not None:
            await _delete_instances(store, cache, info, stopping=stopping)
    except errors.StatusError as e:
        if not errors.is_not_found(e):
            await _update_status(store, crd_t, name, _failed(e))
        raise
    if stopping():
        return crd, False
    return await _update_status(store, crd_t, name, COMPLETED, drop_finalizer=True)


async def _update_status(store: Store, crd_t: Target, name: str, condition: dict[str, str],
                         *, drop_finalizer: bool = False) -> tuple[Obj, bool]:
    from kubegc.registry.strategy import strategy_for  # strategy imports this module

    async def update(current: Obj) -> Any:
        new = {**current, "status": dict(current.get("status") or {})}
        set_condition(new, condition, format_time(store.clock.now()))
        if drop_finalizer:
            # the status subresource keeps the stored metadata: drop the finalizer there,
            # so that this one write both finalizes and (with no finalizer left) removes
            meta = current["metadata"]
            meta["finalizers"] = [f for f in meta.get("finalizers") or []
                                  if f != CLEANUP_FINALIZER]
        return store.prepare_update(crd_t, strategy_for(crd_t.info), current, new,
                                    subresource="status", check_resource_version=False)

    return await store.guaranteed_update(crd_t, name, update)


async def _delete_instances(store: Store, cache: WatchCache, info: ResourceInfo, *,
                            stopping: Callable[[], bool]) -> None:
    """Delete every instance (each as a DELETE with default options would) and wait, on
    the watch cache, until none is left."""
    from kubegc.registry.deletion import delete  # deletion -> store -> strategy -> here

    prefix = key_root(info)
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
                item_t = Target(info, info.storage_version, obj["metadata"].get("namespace", ""))
                try:
                    await delete(store, item_t, obj["metadata"]["name"], {})
                except errors.StatusError as e:
                    if not errors.is_not_found(e):
                        raise
            await watcher.next_batch(timeout=5.0)
        finally:
            watcher.close()
