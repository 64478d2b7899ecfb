"""RFC 7386 JSON merge patch (``application/merge-patch+json``).

Objects merge key by key, ``null`` deletes a key, anything else (arrays included) replaces.
Follows ``evanphx/json-patch`` ``MergePatch``, which kube-apiserver uses: ``null`` values
nested inside a value that is *added* (or that replaces a non-object) are dropped, while a
non-object value replacing an object is taken as is.

Decoding (``decode_merge_patch``), as the patch handler reports it: a body that is not JSON
or not an object → 400 ``error decoding patch: <Go json error>``; a ``null`` body → 400
``Invalid JSON Patch``.
"""

from __future__ import annotations

from typing import Any

from kubegc.api.errors import bad_request
from kubegc.api.types import Obj, clone
from kubegc.registry.fieldmanager._decode import DecodeError, loads_json, type_error


def decode_merge_patch(body: bytes | str) -> Obj:
    try:
        value = loads_json(body)
    except DecodeError as e:
        raise bad_request(f"error decoding patch: {e}") from None
    if value is None:
        raise bad_request("Invalid JSON Patch")
    if not isinstance(value, dict):
        raise bad_request(
            f"error decoding patch: {type_error(value, 'map[string]interface {}')}")
    return value


def apply_merge_patch(original: Obj, patch: Obj) -> Obj:
    """``original`` with ``patch`` merged in; neither argument is modified."""
    doc = clone(original)
    _merge_docs(doc, clone(patch))
    return doc


def _merge_docs(doc: dict[str, Any], patch: dict[str, Any]) -> None:
    for key, value in patch.items():
        if value is None:
            doc.pop(key, None)
        elif doc.get(key) is None:
            doc[key] = _prune_nulls(value)
        else:
            doc[key] = _merge_value(doc[key], value)


def _merge_value(current: Any, patch: Any) -> Any:
    if not isinstance(current, dict):
        return _prune_nulls(patch)
    if not isinstance(patch, dict):
        return patch
    _merge_docs(current, patch)
    return current


def _prune_nulls(value: Any) -> Any:
    """Drop null members of objects, recursively (null array items stay)."""
    if isinstance(value, dict):
        return {k: _prune_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_prune_nulls(v) for v in value]
    return value
