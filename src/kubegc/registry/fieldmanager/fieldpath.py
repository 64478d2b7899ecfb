"""Field sets of server-side apply: paths, the ``FieldsV1`` encoding, walks over objects.

A path is a tuple of structured-merge-diff path elements in their ``FieldsV1`` spelling:
``f:<field>`` (map key), ``k:{"name":"nginx"}`` (item of an associative list, by its key
fields, compact JSON with sorted keys), ``v:"value"`` (item of a set), ``i:<n>`` (index).
A ``FieldsV1`` document is the set as a tree (``fieldsv1``: encoding, decoding, editing).

How lists and maps are treated comes from the patch metadata (``strategic_schema``), as
upstream derives SSA schemas from it: ``merge`` lists with a merge key are associative
(keys: ``list_keys`` or the merge key, with ``key_defaults``), ``merge`` lists of scalars are
sets, every other list is atomic; ``atomic`` maps are single fields.

* ``applied_set`` -- the fields an apply configuration sets (upstream ``ToFieldSet``):
  scalars, nulls, empty maps, atomic values, and list items together with their fields.
* ``compare`` -- added/modified/removed fields between two objects (upstream ``Compare``);
  a newly added map counts as a field itself (the ``.`` entries of Update managers) unless
  it is ``metadata``/``spec``/``status`` or its type is in the table: those are Go structs,
  which upstream never sees appear.
* ``locate`` -- where a path points in an object (``Slot``), matching keys with defaults.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import orjson

from kubegc.registry.fieldmanager._errors import go_json
from kubegc.registry.fieldmanager._values import canonical
from kubegc.registry.fieldmanager.fieldsv1 import (
    Path,
    decode_fields,
    edited_fields,
    element_order,
    encode_fields,
    has_members,
    is_member,
)
from kubegc.registry.fieldmanager.strategic_schema import MERGE, NO_META, FieldMeta, PatchSchema

#: Fields nobody owns (upstream's strip set in fieldmanager/internal/stripmeta.go).
STRIPPED: frozenset[Path] = frozenset(
    [("f:apiVersion",), ("f:kind",), ("f:metadata",)]
    + [("f:metadata", f"f:{name}") for name in (
        "name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName",
        "generation", "managedFields", "resourceVersion")]
)


def is_zero_struct(value: Any, meta: FieldMeta, top: bool) -> bool:
    """An empty object where the schema has a struct (every top-level map, and fields of
    a known struct type): Go decodes it to the zero struct, which typed objects omit
    (``omitempty``), so it sets no field (``spec: {}``, ``status: {}``, or the empty
    messages of a protobuf body)."""
    return (type(value) is dict and not value and not meta.atomic
            and (top or bool(meta.type)))


class FieldPathError(ValueError):
    """An object that has no field set (an associative list item without its key)."""


def list_mode(meta: FieldMeta) -> str:
    """"map" (associative), "set" or "atomic"."""
    if MERGE not in meta.strategies:
        return "atomic"
    return "map" if meta.merge_key else "set"


def item_element(item: Any, meta: FieldMeta, mode: str) -> str:
    """The path element naming ``item`` in a list of the given mode."""
    if mode == "set":
        return "v:" + go_json(item)
    if not isinstance(item, dict):
        raise FieldPathError("associative list with keys has an element that is not a map")
    defaults = dict(meta.key_defaults)
    key: dict[str, Any] = {}
    for name in meta.associative_keys:
        if item.get(name) is not None:
            key[name] = item[name]
        elif name in defaults:
            key[name] = defaults[name]
        else:
            raise FieldPathError(f"associative list with keys has an element that omits key "
                                 f"field {json.dumps(name)} (and doesn't have default value)")
    return "k:" + go_json(key)


_TOP_STRUCTS = frozenset([("f:metadata",), ("f:spec",), ("f:status",)])


@dataclass
class _Walker:
    schema: PatchSchema
    strict: bool  # apply configurations: raise on list items without keys, duplicates
    update_style: bool  # a map whose type is unknown is itself a field (Update managers)
    out: set[Path] = field(default_factory=set)

    def value(self, value: Any, meta: FieldMeta, path: Path) -> None:
        if isinstance(value, dict) and value and not meta.atomic:
            if self.update_style and not meta.type and path and path not in _TOP_STRUCTS:
                self.out.add(path)
            self.members(value, meta.type, path)
        elif isinstance(value, list) and list_mode(meta) != "atomic":
            self.items(value, meta, path)
        elif path and not is_zero_struct(value, meta, len(path) == 1):
            self.out.add(path)

    def members(self, value: dict[str, Any], type_name: str, path: Path) -> None:
        for key, child in value.items():
            self.value(child, self.schema.field(type_name, key), (*path, f"f:{key}"))

    def items(self, items: list[Any], meta: FieldMeta, path: Path) -> None:
        mode = list_mode(meta)
        seen: set[str] = set()
        for index, item in enumerate(items):
            element = self.element(item, meta, mode, path, index)
            if element is None:
                continue
            if element in seen and self.strict:
                raise FieldPathError(f"{path_string(path)}: duplicate entries for key "
                                     f"{path_string((element,))}")
            seen.add(element)
            child = (*path, element)
            self.out.add(child)
            if mode == "map" and isinstance(item, dict):
                self.members(item, meta.type, child)

    def element(self, item: Any, meta: FieldMeta, mode: str, path: Path,
                index: int) -> str | None:
        try:
            return item_element(item, meta, mode)
        except FieldPathError as e:
            if self.strict:
                raise FieldPathError(f"{path_string(path)}: element {index}: {e}") from None
            return None


def applied_set(config: Any, schema: PatchSchema, root: str) -> set[Path]:
    """The fields an apply configuration sets, minus ``STRIPPED``."""
    walker = _Walker(schema, strict=True, update_style=False)
    walker.value(config, FieldMeta(type=root), ())
    return walker.out - STRIPPED


def update_fields(value: Any, meta: FieldMeta, path: Path, schema: PatchSchema) -> set[Path]:
    """The fields of a value that an Update creates or deletes as a whole."""
    walker = _Walker(schema, strict=False, update_style=True)
    walker.value(value, meta, path)
    return walker.out


@dataclass
class Changes:
    added: set[Path] = field(default_factory=set)
    modified: set[Path] = field(default_factory=set)
    removed: set[Path] = field(default_factory=set)

    def strip(self) -> Changes:
        return Changes(self.added - STRIPPED, self.modified - STRIPPED, self.removed - STRIPPED)


def compare(old: Any, new: Any, schema: PatchSchema, root: str) -> Changes:
    """Fields added, modified and removed going from ``old`` to ``new``."""
    changes = Changes()
    _Comparer(schema, changes).value(old, new, FieldMeta(type=root), ())
    return changes.strip()


def _unchanged(old: Any, new: Any) -> bool:
    """Whether a value is the same in Go's eyes, checked cheaply first: most of an update
    is untouched, and walking equal subtrees field by field is what makes updates slow."""
    if old is new:
        return True
    kind = type(old)
    if kind is not type(new):
        return False
    if kind is dict or kind is list:
        # Python's == says 1 == 1.0 == True; the bytes tell them apart (as Go would)
        return bool(old == new) and orjson.dumps(old) == orjson.dumps(new)
    return bool(old == new) and kind is not float


@dataclass
class _Comparer:
    schema: PatchSchema
    changes: Changes

    def value(self, old: Any, new: Any, meta: FieldMeta, path: Path) -> None:
        if _unchanged(old, new):
            return
        if isinstance(old, dict) and isinstance(new, dict) and not meta.atomic:
            self.maps(old, new, meta, path)
        elif (isinstance(old, list) and isinstance(new, list)
              and list_mode(meta) != "atomic"):
            self.lists(old, new, meta, path)
        elif canonical(old) != canonical(new):
            self.changes.modified.add(path)
            if isinstance(old, dict | list):
                self.changes.removed |= self.fields(old, meta, path) - {path}
            if isinstance(new, dict | list):
                self.changes.added |= self.fields(new, meta, path) - {path}

    def maps(self, old: dict[str, Any], new: dict[str, Any], meta: FieldMeta,
             path: Path) -> None:
        for key in {**old, **new}:
            if key in old and key in new and _unchanged(old[key], new[key]):
                continue  # what ``value`` would find first, before any path is built
            child_meta = self.schema.field(meta.type, key)
            child = (*path, f"f:{key}")
            if key not in new:
                self.changes.removed |= self.fields(old[key], child_meta, child)
            elif key not in old:
                self.changes.added |= self.fields(new[key], child_meta, child)
            else:
                self.value(old[key], new[key], child_meta, child)

    def lists(self, old: list[Any], new: list[Any], meta: FieldMeta, path: Path) -> None:
        before, after = self.keyed(old, meta), self.keyed(new, meta)
        item_meta = FieldMeta(type=meta.type)
        for element, item in before.items():
            if element not in after:
                self.changes.removed |= self.item_fields(item, meta, (*path, element))
        for element, item in after.items():
            child = (*path, element)
            if element not in before:
                self.changes.added |= self.item_fields(item, meta, child)
            elif list_mode(meta) == "map":
                self.value(before[element], item, item_meta, child)

    def keyed(self, items: list[Any], meta: FieldMeta) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for item in items:
            try:
                out.setdefault(item_element(item, meta, list_mode(meta)), item)
            except FieldPathError:
                continue  # upstream cannot track such an item either
        return out

    def item_fields(self, item: Any, meta: FieldMeta, path: Path) -> set[Path]:
        walker = _Walker(self.schema, strict=False, update_style=True)
        if list_mode(meta) == "map" and isinstance(item, dict):
            walker.members(item, meta.type, path)
        return walker.out | {path}

    def fields(self, value: Any, meta: FieldMeta, path: Path) -> set[Path]:
        return update_fields(value, meta, path, self.schema)


@dataclass(frozen=True, slots=True)
class Slot:
    """Where a value sits: a map and its key, or a list and an index."""

    container: dict[str, Any] | list[Any]
    where: str | int

    def get(self) -> Any:
        if isinstance(self.container, dict):
            return self.container[str(self.where)]
        return self.container[int(self.where)]

    def delete(self) -> None:
        if isinstance(self.container, dict):
            del self.container[str(self.where)]
        else:
            del self.container[int(self.where)]


def locate(obj: Any, path: Path, schema: PatchSchema, root: str) -> Slot | None:
    """The slot holding the value at ``path``; None when absent."""
    current: Any = obj
    meta = FieldMeta(type=root)
    found: Slot | None = None
    for element in path:
        kind, _, text = element.partition(":")
        if kind == "f":
            if not isinstance(current, dict) or text not in current:
                return None
            meta = schema.field(meta.type, text)
            found = Slot(current, text)
            current = current[text]
        else:
            if not isinstance(current, list):
                return None
            index = _find_item(current, kind, text, meta)
            if index < 0:
                return None
            found = Slot(current, index)
            current = current[index]
            meta = FieldMeta(type=meta.type)
    return found


def _find_item(items: list[Any], kind: str, text: str, meta: FieldMeta) -> int:
    if kind == "i":
        index = int(text)
        return index if 0 <= index < len(items) else -1
    wanted = json.loads(text)
    for index, item in enumerate(items):
        if kind == "v" and canonical(item) == canonical(wanted):
            return index
        if kind == "k" and isinstance(item, dict) and _key_matches(item, wanted, meta):
            return index
    return -1


def _key_matches(item: dict[str, Any], key: dict[str, Any], meta: FieldMeta) -> bool:
    defaults = dict(meta.key_defaults)
    for name, value in key.items():
        actual = item.get(name)
        if canonical(actual if actual is not None else defaults.get(name)) != canonical(value):
            return False
    return True


def path_string(path: Path) -> str:
    """Upstream's ``fieldpath.Path.String()``: ``.spec.containers[name="nginx"].image``."""
    parts: list[str] = []
    for element in path:
        kind, _, text = element.partition(":")
        if kind == "f":
            parts.append("." + text)
        elif kind == "k":
            key = json.loads(text)
            parts.append("[" + ",".join(f"{k}={_value_string(v)}"
                                        for k, v in sorted(key.items())) + "]")
        elif kind == "v":
            parts.append(f"[={_value_string(json.loads(text))}]")
        else:
            parts.append(f"[{text}]")
    return "".join(parts)


def _value_string(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return canonical(value)


__all__ = [
    "NO_META",
    "STRIPPED",
    "Changes",
    "FieldPathError",
    "Path",
    "Slot",
    "applied_set",
    "compare",
    "decode_fields",
    "edited_fields",
    "element_order",
    "encode_fields",
    "has_members",
    "is_member",
    "locate",
    "path_string",
    "update_fields",
]
