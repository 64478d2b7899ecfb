"""Embedded resources (cf. ``apiserver/schema/objectmeta/validation.go``): an object marked
``x-kubernetes-embedded-resource`` needs ``apiVersion`` and ``kind``, and its ``metadata``
is validated as ObjectMeta. Called by the validation walk for each such object."""

from __future__ import annotations

import re
from typing import Any

from kubegc.api.content import is_path_segment_name
from kubegc.api.errors import StatusCause
from kubegc.registry.structural import field
from kubegc.registry.validation.objectmeta import (
    validate_annotations,
    validate_finalizers,
    validate_labels,
    validate_name,
    validate_owner_references,
)

_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
    "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def validate_embedded_resource(path: str, value: dict[str, Any]) -> list[StatusCause]:
    """``validateEmbeddedResource``; ``path`` is a field path ("" at the root)."""
    causes: list[StatusCause] = []
    for key in ("apiVersion", "kind"):
        if key not in value:
            causes.append(field.required(_child(path, key), "must not be empty"))
    for key, item in value.items():
        if key == "apiVersion":
            causes += _api_version(_child(path, key), item)
        elif key == "kind":
            causes += _kind(_child(path, key), item)
        elif key == "metadata":
            causes += _metadata(_child(path, key), item)
    return causes


def _api_version(path: str, value: Any) -> list[StatusCause]:
    if not isinstance(value, str):
        return [field.invalid(path, value, "must be a string")]
    if not value:
        return [field.invalid(path, value, "must not be empty")]
    if value.count("/") > 1:
        return [field.invalid(path, value, f"unexpected GroupVersion string: {value}")]
    return []


def _kind(path: str, value: Any) -> list[StatusCause]:
    if not isinstance(value, str):
        return [field.invalid(path, value, "must be a string")]
    if not value:
        return [field.invalid(path, value, "must not be empty")]
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS1035_LABEL.match(value.lower()):
        errs.append(DNS1035_LABEL_MSG)
    if errs:
        return [field.invalid(path, value, "may have mixed case, but should otherwise match: "
                              + ",".join(errs))]
    return []


def _metadata(path: str, meta: Any) -> list[StatusCause]:
    if not isinstance(meta, dict):
        return [field.invalid(path, meta, "must be an object")]
    name = meta.get("name") or "fakename"  # as upstream: the name may be left to the owner
    causes = validate_name(str(name), is_path_segment_name, f"{path}.name")
    causes += validate_labels(meta.get("labels"), f"{path}.labels")
    causes += validate_annotations(meta.get("annotations"), f"{path}.annotations")
    causes += validate_owner_references(meta.get("ownerReferences"), f"{path}.ownerReferences")
    causes += validate_finalizers(meta.get("finalizers"), f"{path}.finalizers")
    return causes
