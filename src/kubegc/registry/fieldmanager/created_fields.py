"""``created_fields``: the ``FieldsV1`` document an Update manager owns after a create,
built in one walk of the object (the same document as
``fieldpath.encode_fields(fieldpath.compare({}, obj).added - fieldpath.STRIPPED)``, which
``tests/registry/fieldmanager/test_fieldpath.py`` checks on generated objects). Every HTTP create
computes one, so it is hot: scalar fields are handled inline, and the subtree of each
top-level map is memoized in ``schema.memo``: ``metadata`` by its shape (what
``f:metadata`` depends on), the others by their JSON (objects made from one template share
them). A caller that only encodes the result (the store's create)
asks for ``fragments``: a memoized subtree then comes back as the ``orjson.Fragment`` of
its stored JSON instead of being decoded (two decodes of ~5 us per Pod create).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from kubegc.registry.fieldmanager.fieldpath import (
    STRIPPED,
    FieldPathError,
    is_zero_struct,
    item_element,
    list_mode,
)
from kubegc.registry.fieldmanager.strategic_schema import NO_META, FieldMeta, PatchSchema

_STRIPPED_METADATA = frozenset(p[1] for p in STRIPPED if len(p) == 2)
_STRIPPED_METADATA_KEYS = frozenset(element[2:] for element in _STRIPPED_METADATA)
#: metadata maps whose FieldsV1 depends on their keys only
_KEYED_ONLY = frozenset(["labels", "annotations"])


def created_fields(obj: Any, schema: PatchSchema, root: str, *,
                   fragments: bool = False) -> dict[str, Any]:
    """``FieldsV1`` of every field an Update manager owns after creating ``obj``; with
    ``fragments``, memoized subtrees are ``orjson.Fragment`` (encode the result only)."""
    out: dict[str, Any] = {}
    if not isinstance(obj, dict):
        return out
    for key in sorted(obj):  # all "f:" elements: plain string order is FieldsV1 order
        if key in ("apiVersion", "kind"):
            continue
        value = obj[key]
        if type(value) is dict and not value:
            continue  # an empty top-level map sets no field (``fieldpath.is_zero_struct``)
        meta = schema.field(root, key)
        top = key in ("metadata", "spec", "status")
        if key == "metadata":
            node = _created_metadata(value, meta, schema, fragments)
        elif type(value) is dict and value:
            node = _created_memoized(value, meta, schema, top, fragments)
        else:
            node = _created_node(value, meta, schema, top=top)
        if node is not None:
            out["f:" + key] = node
    return out


def _created_metadata(value: Any, meta: FieldMeta, schema: PatchSchema, fragments: bool) -> Any:
    """``f:metadata``: memoized by the metadata's shape (``_metadata_shape``)."""
    shape = _metadata_shape(value)
    if shape is None:
        return _walk_metadata(value, meta, schema)
    kept, key_json = shape
    return _remembered(schema, (meta.type, meta.atomic, True, key_json),
                       lambda: _walk_metadata(kept, meta, schema), fragments)


def _remembered(schema: PatchSchema, key: tuple[Any, ...], walk: Callable[[], Any],
                fragments: bool) -> Any:
    """``walk()``'s result, remembered under ``key`` in ``schema.memo``: a fresh decode of
    it, or with ``fragments`` its JSON as an ``orjson.Fragment``."""
    cached = schema.memo.get(key)
    if cached is None:
        node = walk()
        schema.memo.put(key, orjson.dumps(node))
        return node
    if fragments:
        return None if cached == b"null" else orjson.Fragment(cached)
    return orjson.loads(cached)


def _metadata_shape(value: Any) -> tuple[dict[str, Any], bytes] | None:
    """The metadata without the fields a create's managedFields leave out (name, uid, ...),
    and the JSON of what its ``f:metadata`` depends on: that, with labels and annotations
    reduced to their keys (each is a leaf of its own, whatever scalar its value), so the Pods of
    one template share an entry even when a label value differs per Pod (a StatefulSet's
    pod-name). None when a left-out field is not a scalar: the general walk decides."""
    if type(value) is not dict:
        return None
    kept: dict[str, Any] = {}
    shape: dict[str, Any] = {}
    for k, v in value.items():
        if k in _STRIPPED_METADATA_KEYS:
            if type(v) is dict or type(v) is list:
                return None
            continue
        kept[k] = v
        if k in _KEYED_ONLY and type(v) is dict and all(type(x) in _SCALARS
                                                        for x in v.values()):
            shape[k] = dict.fromkeys(v, "")  # a map still: a list value is another shape
        else:
            shape[k] = v
    try:
        return kept, orjson.dumps(shape)
    except TypeError:  # not JSON (an in-process caller's object): no memo
        return None


def _walk_metadata(value: Any, meta: FieldMeta, schema: PatchSchema) -> dict[str, Any] | None:
    node = _created_node(value, meta, schema, top=True)
    if node is None:
        return None
    for element in _STRIPPED_METADATA:  # strip the field itself, not what is below
        stripped = node.get(element)
        if stripped is not None:
            stripped.pop(".", None)
            if not stripped:
                del node[element]
    node.pop(".", None)
    return node or None


def _created_memoized(value: dict[str, Any], meta: FieldMeta, schema: PatchSchema,
                      top: bool, fragments: bool) -> Any:
    try:
        data = orjson.dumps(value)
    except TypeError:  # not JSON (an in-process caller's object): no memo
        return _created_node(value, meta, schema, top=top)
    return _remembered(schema, (meta.type, meta.atomic, top, data),  # all it depends on
                       lambda: _created_node(value, meta, schema, top=top), fragments)


def _created_node(value: Any, meta: FieldMeta, schema: PatchSchema, *,
                  top: bool = False) -> dict[str, Any] | None:
    """The subtree of one value; None when neither it nor anything below is a member."""
    if isinstance(value, dict) and value and not meta.atomic:
        children = _created_members(value, meta.type, schema)
        member = not meta.type and not top
        return _node(children, member)
    if isinstance(value, list) and list_mode(meta) != "atomic":
        mode = list_mode(meta)
        items: dict[str, Any] = {}
        for item in value:
            try:
                element = item_element(item, meta, mode)
            except FieldPathError:
                continue
            if element in items:
                continue
            if mode == "map" and isinstance(item, dict):
                items[element] = _node(_created_members(item, meta.type, schema), True)
            else:
                items[element] = {}
        if not items:
            return None
        return {k: items[k] for k in sorted(items)}  # one list: all "k:" or all "v:"
    if is_zero_struct(value, meta, False):
        return None
    return {}


def _created_members(value: dict[str, Any], type_name: str,
                     schema: PatchSchema) -> dict[str, Any]:
    fields = schema.fields(type_name)
    children: dict[str, Any] = {}
    for key in sorted(value):
        child = value[key]
        if type(child) in _SCALARS:  # most fields: a leaf, owned as itself
            children["f:" + key] = {}
            continue
        node = _created_node(child, fields.get(key, NO_META), schema)
        if node is not None:
            children["f:" + key] = node
    return children


_SCALARS = frozenset([str, int, float, bool, type(None)])


def _node(children: dict[str, Any], member: bool) -> dict[str, Any] | None:
    if not children:
        return {} if member else None
    return {".": {}, **children} if member else children


__all__ = ["created_fields"]
