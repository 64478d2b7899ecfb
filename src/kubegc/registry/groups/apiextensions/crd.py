"""CustomResourceDefinitions (cf. apiextensions-apiserver): an established CRD adds its
resource to the catalog; a deleted CRD first deletes every instance (the
``customresourcecleanup.apiextensions.k8s.io`` finalizer, run by ``finalizer``), then
leaves the catalog.

The resource a CRD serves is a ``CustomResourceInfo``: a ``ResourceInfo`` that also carries
the compiled structural schemas of its versions (``CustomResourceSchemas``). Schemas are
compiled once per distinct ``spec.versions`` content (``_compiled``), so a CRD whose status
changes keeps an equal info and the catalog does not churn.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson

from kubegc.api.errors import StatusCause
from kubegc.api.resources import ResourceInfo, split_api_version
from kubegc.api.types import Obj
from kubegc.registry.structural import Structural, compile_schema, default, prune
from kubegc.registry.structural import validate as validate_schema
from kubegc.registry.structural import validate_status as validate_status_schema

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


class CustomResourceSchemas:
    """The structural schemas of one CRD's versions (cf. the CRD handler's ``crdInfo``).

    Immutable; compares by identity, so a ``CustomResourceInfo`` holding it is a new value
    exactly when the schemas change (and the registry builds a new storage)."""

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
    return CustomResourceInfo(
        group=str(spec.get("group") or ""),
        versions=tuple(ordered),
        resource=str(names["plural"]),
        kind=str(names["kind"]),
        namespaced=spec.get("scope") == "Namespaced",
        singular=str(names.get("singular") or str(names["kind"]).lower()),
        short_names=tuple(names.get("shortNames") or ()),
        categories=tuple(names.get("categories") or ()),
        custom=True,
        list_kind=str(names.get("listKind") or f"{names['kind']}List"),
        schemas=_schemas(versions),
    )


def served_subresources(crd: Obj) -> tuple[bool, bool]:
    """Whether the custom resources of ``crd`` have a ``status`` and a ``scale``
    subresource (as its first served version declares)."""
    versions = [v for v in (crd.get("spec") or {}).get("versions") or []
                if isinstance(v, dict) and v.get("served", True)]
    first = (versions[0].get("subresources") or {}) if versions else {}
    return "status" in first, "scale" in first


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
