"""What the generic Store checks of every object it writes, whatever its resource: the
fields a built-in kind does not declare (``check_fields``, the typed decoding's unknown
fields), ``ValidateObjectMeta`` and ``ValidateObjectMetaUpdate``
(apimachinery/pkg/api/validation/objectmeta.go, owner references included)."""

from __future__ import annotations

from typing import Any

from kubegc.api import errors
from kubegc.api.content import is_dns1123_label
from kubegc.api.errors import StatusCause, field_error
from kubegc.api.types import Obj
from kubegc.registry.definitions import unknown_fields
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.generic.target import Target
from kubegc.registry.validation.common import validate_kube_finalizer_name
from kubegc.registry.validation.objectmeta import (
    validate_annotations,
    validate_finalizers,
    validate_generate_name,
    validate_labels,
    validate_name,
    validate_new_finalizers_on_deleting,
    validate_owner_references,
)

_IMMUTABLE_META = ("name", "namespace", "uid")


#: fieldValidation values (``Strict`` fails on unknown fields, ``Warn`` reports them, both
#: drop them); "" skips the check (in-process clients, which write only known fields).
FIELD_VALIDATION = ("", "Ignore", "Warn", "Strict")


def check_fields(t: Target, obj: Obj, mode: str, warnings: list[str] | None) -> None:
    """Drop the fields a built-in kind does not declare, as decoding into the typed object
    does upstream; fail (Strict) or warn (Warn) about them. Custom resources are decoded
    as the CRD handler does, for every client (in-process ones too): what their version's
    schema does not specify is pruned and the schema defaults are applied."""
    if mode not in FIELD_VALIDATION:
        raise errors.bad_request(
            f'fieldValidation must be one of "Ignore", "Warn" or "Strict", got "{mode}"')
    if t.strategy.decode is not None:
        unknown = t.strategy.decode(obj, t.version)
    elif mode:
        unknown = unknown_fields(obj, t.info.group, t.version, t.info.kind, prune=True)
    else:
        return
    if not unknown:
        return
    listed = [f'unknown field "{path}"' for path in unknown]
    if mode == "Strict":
        kind, version = t.info.kind, t.version
        raise errors.bad_request(
            f'{kind} in version "{version}" cannot be handled as a {kind}: strict decoding '
            f"error: {', '.join(listed)}")
    if mode == "Warn" and warnings is not None:
        warnings.extend(listed)


def validate_object_meta(t: Target, strategy: Strategy, obj: Obj) -> list[StatusCause]:
    """``ValidateObjectMeta`` (apimachinery/pkg/api/validation/objectmeta.go), owner
    references included."""
    meta = obj["metadata"]
    causes: list[StatusCause] = []
    name = str(meta.get("name") or "")
    causes += validate_generate_name(str(meta.get("generateName") or ""),
                                     strategy.name_validator)
    causes += validate_name(name, strategy.name_validator)
    namespace = meta.get("namespace")
    if t.info.namespaced and not namespace:
        causes.append(field_error("FieldValueRequired", "metadata.namespace", ""))
    elif t.info.namespaced:
        causes += validate_name(str(namespace), is_dns1123_label, "metadata.namespace")
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        causes.append(field_error("FieldValueInvalid", "metadata.generation",
                                  "must be greater than or equal to 0", generation))
    causes += validate_owner_references(meta.get("ownerReferences"))
    causes += validate_finalizers(meta.get("finalizers"))
    if strategy.core_object_meta:
        # the core API's ValidateObjectMeta (every built-in group's) checks finalizers further
        for i, finalizer in enumerate(meta.get("finalizers") or []):
            causes += validate_kube_finalizer_name(finalizer, f"metadata.finalizers[{i}]")
    causes += validate_labels(meta.get("labels"), "metadata.labels")
    causes += validate_annotations(meta.get("annotations"))
    return causes


def validate_object_meta_update(old_meta: dict[str, Any], new_meta: dict[str, Any]) -> list[
    StatusCause
]:
    """Immutable metadata; no new finalizers once deleting."""
    causes: list[StatusCause] = []
    for key in _IMMUTABLE_META:
        if (old_meta.get(key) or "") != (new_meta.get(key) or ""):
            causes.append(field_error("FieldValueInvalid", f"metadata.{key}",
                                      "field is immutable", new_meta.get(key) or ""))
    if old_meta.get("deletionTimestamp"):
        causes += validate_new_finalizers_on_deleting(
            old_meta.get("finalizers") or [], new_meta.get("finalizers") or [])
    return causes
