"""The four PATCH content types of kube-apiserver, as pure functions over JSON-shaped dicts.

* ``application/json-patch+json`` -- RFC 6902 (``json_patch``);
* ``application/merge-patch+json`` -- RFC 7386 (``merge_patch``);
* ``application/strategic-merge-patch+json`` -- Kubernetes strategic merge patch for built-in
  kinds (``strategic``, metadata in ``strategic_schema``); custom resources get 415;
* ``application/apply-patch+yaml`` -- server-side apply with ``metadata.managedFields``
  (``apply``; ``record_update`` keeps managedFields for ordinary writes).

``apply_patch`` decodes a request body and dispatches on the content type; every failure is
a ``StatusError`` worded as upstream's patch handler words it (400 for bodies that do not
decode, 415 for unsupported types, 422/500/409 for patches that do not apply).
Nothing here does I/O or keeps state; inputs are never modified.
May import: ``kubegc.api``, ``kubegc.registry.definitions`` (and PyYAML).
"""

from __future__ import annotations

from kubegc.api.errors import StatusError, bad_request, field_error, invalid
from kubegc.api.errors import unsupported_media_type as _unsupported
from kubegc.api.types import Obj
from kubegc.registry.fieldmanager._decode import DecodeError, loads_json, loads_yaml, type_error
from kubegc.registry.fieldmanager.apply import apply as server_side_apply
from kubegc.registry.fieldmanager.apply import record_update
from kubegc.registry.fieldmanager.json_patch import apply_json_patch, decode_json_patch
from kubegc.registry.fieldmanager.merge_patch import apply_merge_patch, decode_merge_patch
from kubegc.registry.fieldmanager.strategic import strategic_merge_patch
from kubegc.registry.fieldmanager.strategic_schema import has_strategic_schema

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

_MAP_TYPE = "map[string]interface {}"


def supported_patch_types(group: str, kind: str) -> list[str]:
    """Content types a PATCH of this kind accepts, in upstream's order."""
    if has_strategic_schema(group, kind):
        return [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH]
    return [JSON_PATCH, MERGE_PATCH, APPLY_PATCH]


def unsupported_patch_type(group: str, kind: str) -> StatusError:
    """415 UnsupportedMediaType, listing the accepted types like ``negotiation`` does."""
    return _unsupported("the body of the request was in an unknown format - accepted media "
                        "types include: " + ", ".join(supported_patch_types(group, kind)))


def apply_patch(
    patch_type: str, original: Obj | None, patch_body: bytes | str, *, group: str, kind: str,
    manager: str = "", force: bool = False, now: str = "", subresource: str = "",
    api_version: str = "",
) -> Obj:
    """Decode ``patch_body`` as ``patch_type`` and apply it to ``original``.

    ``original`` may be None only for apply (the object is created). ``manager``, ``force``,
    ``now``, ``subresource`` and ``api_version`` (the request's, checked against the apply
    configuration's when given) are used by apply only.
    """
    content_type = patch_type.split(";", 1)[0].strip()
    if content_type not in supported_patch_types(group, kind):
        raise unsupported_patch_type(group, kind)
    if content_type == APPLY_PATCH:
        return _apply(original, patch_body, manager=manager, force=force, now=now,
                      subresource=subresource, api_version=api_version)
    if original is None:
        raise ValueError(f"{content_type} needs an existing object")
    if content_type == JSON_PATCH:
        return apply_json_patch(original, decode_json_patch(patch_body))
    if content_type == MERGE_PATCH:
        return apply_merge_patch(original, decode_merge_patch(patch_body))
    return strategic_merge_patch(original, decode_strategic_patch(patch_body),
                                 group=group, kind=kind)


def decode_strategic_patch(body: bytes | str) -> Obj:
    """The patch map; 400 with Go's json error text when the body is not a JSON object."""
    try:
        value = loads_json(body)
        if value is not None and not isinstance(value, dict):
            raise type_error(value, _MAP_TYPE)
    except DecodeError as e:
        raise bad_request(str(e)) from None
    return value or {}


def decode_apply_configuration(body: bytes | str) -> Obj:
    """The apply configuration of a YAML or JSON body; 400 ``error decoding YAML: ...``."""
    try:
        value = loads_yaml(body)
        if value is not None and not isinstance(value, dict):
            inner = type_error(value, _MAP_TYPE)
            raise DecodeError(f"error unmarshaling JSON: while decoding JSON: {inner}")
    except DecodeError as e:
        raise bad_request(f"error decoding YAML: {e}") from None
    return value or {}


def _apply(original: Obj | None, body: bytes | str, *, manager: str, force: bool, now: str,
           subresource: str, api_version: str) -> Obj:
    if not manager:
        raise invalid("PatchOptions", "meta.k8s.io", "", [field_error(
            "FieldValueRequired", "fieldManager", "is required for apply patch")])
    config = decode_apply_configuration(body)
    if api_version and config.get("apiVersion") != api_version:
        raise bad_request("Incorrect version specified in apply patch. Specified patch "
                          f"version: {config.get('apiVersion') or ''}, expected: {api_version}")
    return server_side_apply(original, config, manager=manager, force=force, now=now,
                             subresource=subresource)


__all__ = [
    "APPLY_PATCH",
    "JSON_PATCH",
    "MERGE_PATCH",
    "STRATEGIC_MERGE_PATCH",
    "apply_json_patch",
    "apply_merge_patch",
    "apply_patch",
    "decode_apply_configuration",
    "decode_json_patch",
    "decode_merge_patch",
    "decode_strategic_patch",
    "has_strategic_schema",
    "record_update",
    "server_side_apply",
    "strategic_merge_patch",
    "supported_patch_types",
    "unsupported_patch_type",
]
