"""The apiextensions.k8s.io group (cf. apiextensions-apiserver): the
CustomResourceDefinition storage (``crd.py``: names, schemas, status), and the storage of
the custom resources a CRD serves (``custom_resource``), built again whenever the CRD's
served names or schemas change. A deleted CRD keeps the
``customresourcecleanup.apiextensions.k8s.io`` finalizer while ``finalizer.py`` deletes
its instances.

The registry owns which CRDs exist and which custom resources it serves: the CRD storage
tells it of each write (``on_write``), and the watch cache of other servers' writes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubegc.api import errors
from kubegc.api.content import is_path_segment_name
from kubegc.api.errors import StatusCause, field_error
from kubegc.api.meta import is_being_deleted
from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource, WriteOptions
from kubegc.registry.generic.standard import StandardREST, StorageContext, stored
from kubegc.registry.generic.strategy import Strategy, clear_status, noop
from kubegc.registry.generic.target import Created, Target
from kubegc.registry.groups.apiextensions.crd import (
    CLEANUP_FINALIZER,
    CustomResourceInfo,
    decode_custom_resource,
    established_status,
    served_subresources,
)
from kubegc.registry.printers.custom import CustomColumns

#: told of every write of a CRD: (the CRD as stored, whether it was removed)
OnWrite = Callable[[Obj, bool], None]


def _crd_create(obj: Obj) -> None:
    meta = obj["metadata"]
    obj["status"] = established_status(obj, meta["creationTimestamp"])
    finalizers = meta.setdefault("finalizers", [])
    if CLEANUP_FINALIZER not in finalizers:
        finalizers.append(CLEANUP_FINALIZER)


def _required(obj: Obj, *paths: str) -> list[StatusCause]:
    causes = []
    for path in paths:
        cur: Any = obj
        for part in path.split("."):
            cur = cur.get(part) if isinstance(cur, dict) else None
        if cur in (None, "", [], {}):
            causes.append(field_error("FieldValueRequired", path, ""))
    return causes


def _validate_crd(obj: Obj) -> list[StatusCause]:
    causes = _required(obj, "spec.group", "spec.names.plural", "spec.names.kind", "spec.scope",
                       "spec.versions")
    if causes:
        return causes
    spec = obj["spec"]
    expected = f"{spec['names']['plural']}.{spec['group']}"
    name = obj["metadata"].get("name")
    if name != expected:
        causes.append(field_error(
            "FieldValueInvalid", "metadata.name", 'must be spec.names.plural+"."+spec.group', name,
        ))
    if spec["scope"] not in ("Namespaced", "Cluster"):
        causes.append(field_error("FieldValueNotSupported", "spec.scope",
                                  'supported values: "Cluster", "Namespaced"', spec["scope"]))
    storage = [v for v in spec["versions"] if isinstance(v, dict) and v.get("storage")]
    if len(storage) != 1:
        causes.append(field_error("FieldValueInvalid", "spec.versions",
                                  "must have exactly one version marked as storage version",
                                  None))
    return causes


class CRDREST(StandardREST):
    """CustomResourceDefinitions: the generic storage, each write told to the registry
    before it is answered (it serves, changes or stops serving the custom resource)."""

    def __init__(self, ctx: StorageContext, on_write: OnWrite) -> None:
        super().__init__(ctx)
        self.on_write = on_write

    def after_write(self, t: Target, obj: Obj, *, removed: bool) -> None:
        self.on_write(obj, removed)


#: the CRD strategy: established at once, with the cleanup finalizer; CRDs' metadata is
#: validated as apimachinery's alone
CRD_STRATEGY = Strategy(prepare_for_create=_crd_create, validate=_validate_crd,
                        core_object_meta=False)


def resources(ctx: StorageContext, *, on_write: OnWrite) -> list[Resource]:
    return [stored(ctx, builtin("apiextensions.k8s.io", "customresourcedefinitions"),
                   CRD_STRATEGY, status=True, storage=CRDREST(ctx, on_write),
                       table=printers.CUSTOM_RESOURCE_DEFINITION)]


class CustomResourceREST(StandardREST):
    """A CRD's custom resources (the CRD handler's per-CRD storage): no create while the
    CRD is terminating. ``crd`` reads the CRD as last written."""

    def __init__(self, ctx: StorageContext, crd: Callable[[], Obj | None]) -> None:
        super().__init__(ctx)
        self.crd = crd

    async def create(self, t: Target, obj: Obj, options: WriteOptions) -> Created | Obj:
        crd = self.crd()
        if crd is not None and is_being_deleted(crd):
            raise errors.StatusError(
                405, "MethodNotAllowed",
                "create not allowed while custom resource definition is terminating",
                group=t.info.group, kind=t.info.resource)
        return await super().create(t, obj, options)


def _decoder(info: CustomResourceInfo) -> Callable[[Obj, str], list[str]]:
    def decode(obj: Obj, version: str) -> list[str]:
        return decode_custom_resource(info, version, obj)

    return decode


def custom_resource(ctx: StorageContext, crd: Obj, info: CustomResourceInfo, *,
                    current: Callable[[], Obj | None]) -> Resource:
    """The storage of the custom resources ``crd`` serves (``info``: its names and compiled
    schemas): the custom resource strategy (generation bumps on any change outside
    metadata and status; the version's schema prunes, defaults and validates as the object
    is decoded), the status and scale subresources the CRD declares, and its printer
    columns. ``current`` reads the CRD as last written (its columns, whether it is
    terminating)."""
    status, scale = served_subresources(crd)
    schemas = info.schemas
    strategy = Strategy(
        custom=True, return_deleted_object=True, name_validator=is_path_segment_name,
        prepare_for_create=clear_status if status else noop, validate=schemas.validate,
        validate_update=schemas.validate_update, validate_status=schemas.validate_status,
        core_object_meta=False, decode=_decoder(info))
    return stored(ctx, info, strategy, status=status, scale=scale,
                  storage=CustomResourceREST(ctx, current), table=CustomColumns(current))


__all__ = ["CLEANUP_FINALIZER", "CRD_STRATEGY", "OnWrite", "custom_resource", "resources"]
