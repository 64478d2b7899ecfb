"""Field sets of server-side apply: paths, the ``FieldsV1`` encoding, walks over objects.

A path is a tuple of structured-merge-diff path elements in their ``FieldsV1`` spelling:
``f:<field>`` (map key), ``k:{"name":"nginx"}`` (item of an associative list, by its key
fields, compact JSON with sorted keys), ``v:"value"`` (item of a set), ``i:<n>`` (index).
A ``FieldsV1`` document is the set as a tree; ``.`` marks a node that is itself a member.

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

import bisect
import json
from collections.abc import Iterable, Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

import orjson

from kubegc.api.patch._errors import go_json
from kubegc.api.patch._values import canonical
from kubegc.api.patch.strategic_schema import MERGE, NO_META, FieldMeta, PatchSchema

Path = tuple[str, ...]

#: Fields nobody owns (upstream's strip set in fieldmanager/internal/stripmeta.go).
STRIPPED: frozenset[Path] = frozenset(
    [("f:apiVersion",), ("f:kind",), ("f:metadata",)]
    + [("f:metadata", f"f:{name}") for name in (
        "name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName",
        "generation", "managedFields", "resourceVersion")]
)


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
        elif path:
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


def decode_fields(fields_v1: Any) -> set[Path]:
    """The set a ``FieldsV1`` tree describes."""
    out: set[Path] = set()

    def walk(node: Any, prefix: Path) -> None:
        if not isinstance(node, dict):
            return
        for key, child in node.items():
            if key == ".":
                if prefix:
                    out.add(prefix)
            elif isinstance(child, dict) and child:
                walk(child, (*prefix, key))
            else:
                out.add((*prefix, key))

    walk(fields_v1, ())
    return out


_ORDER = {"f": 0, "k": 1, "v": 2, "i": 3}


def element_order(element: str) -> tuple[int, str]:
    return _ORDER.get(element[:1], 4), element


def encode_fields(paths: Iterable[Path]) -> dict[str, Any]:
    """``FieldsV1`` of a set: a tree with ``.`` on members that have children."""
    members = set(paths)
    tree: dict[str, Any] = {}
    for path in members:
        node = tree
        for element in path:
            node = node.setdefault(element, {})
    return _render(tree, (), members)


def _render(node: dict[str, Any], path: Path, members: set[Path]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if node and path in members:
        out["."] = {}
    # All children of one node are of one kind ("f:" of a map, "k:"/"v:"/"i:" of a list),
    # so plain string order is element_order here, at a fraction of the cost.
    for element in sorted(node):
        out[element] = _render(node[element], (*path, element), members)
    return out


def has_members(fields_v1: Any) -> bool:
    """Whether ``decode_fields(fields_v1)`` is not empty, without decoding it."""
    return isinstance(fields_v1, dict) and any(key != "." for key in fields_v1)


def is_member(fields_v1: Any, path: Path) -> bool:
    """Whether ``path`` is in ``decode_fields(fields_v1)``, without decoding it."""
    node = fields_v1
    last = len(path) - 1
    for depth, element in enumerate(path):
        if not isinstance(node, dict) or element == "." or element not in node:
            return False
        child = node[element]
        inner = isinstance(child, dict) and bool(child)
        if depth == last:
            return not inner or "." in child
        if not inner:
            return False
        node = child
    return False


def edited_fields(fields_v1: Any, removed: AbstractSet[Path],
                  added: AbstractSet[Path]) -> Any:
    """``FieldsV1`` of ``(decode_fields(fields_v1) - removed) | added``.

    ``fields_v1`` itself when that is the set it already stands for; otherwise the document
    ``encode_fields`` renders, built by editing a copy of ``fields_v1`` along the changed
    paths when ``fields_v1`` is in that rendering already (anything stored by this module),
    so that an update does not decode and re-render every field an entry owns.
    """
    missing = [p for p in added if not is_member(fields_v1, p)]
    gone = [p for p in removed if p not in added and is_member(fields_v1, p)]
    if not missing and not gone:
        return fields_v1
    if not isinstance(fields_v1, dict) or not _is_rendered(fields_v1, top=True):
        return encode_fields((decode_fields(fields_v1) - removed) | added)
    editor = _Editor(fields_v1)
    for path in gone:
        editor.remove(path)
    for path in missing:
        editor.add(path)
    return editor.root


def _is_rendered(node: dict[str, Any], *, top: bool) -> bool:
    """Whether ``node`` is exactly what ``_render`` makes of the set it stands for."""
    previous: str | None = None
    for key, child in node.items():
        if type(child) is not dict:
            return False
        if key == ".":
            if top or previous is not None or child or len(node) == 1:
                return False
            continue
        if type(key) is not str or (previous is not None and key <= previous):
            return False
        previous = key
        if child and not _is_rendered(child, top=False):
            return False
    return True


class _Editor:
    """Copy-on-write edits of a rendered ``FieldsV1`` tree, one member path at a time; every
    node an edit passes through is copied once, untouched subtrees are shared."""

    def __init__(self, tree: dict[str, Any]) -> None:
        self.root = dict(tree)
        self.owned = {id(self.root)}

    def child(self, node: dict[str, Any], element: str) -> dict[str, Any]:
        child: dict[str, Any] = node[element]
        if id(child) not in self.owned:
            child = node[element] = dict(child)
            self.owned.add(id(child))
        return child

    def remove(self, path: Path) -> None:
        """Remove a member: its ``.`` if it has children, else the node and every ancestor
        left empty (an ancestor left with only its ``.`` becomes a leaf)."""
        nodes = [self.root]
        for element in path[:-1]:
            nodes.append(self.child(nodes[-1], element))
        target = self.child(nodes[-1], path[-1])
        if target:
            del target["."]
            return
        del nodes[-1][path[-1]]
        for depth in range(len(nodes) - 1, 0, -1):
            node = nodes[depth]
            if node:
                if len(node) == 1 and "." in node:
                    node.clear()
                return
            del nodes[depth - 1][path[depth - 1]]

    def add(self, path: Path) -> None:
        """Add a non-member, creating missing nodes in sorted position."""
        node = self.root
        for depth, element in enumerate(path):
            if element not in node:
                built: dict[str, Any] = {}
                for below in reversed(path[depth + 1:]):
                    built = {below: built}
                _insert_sorted(node, element, built)
                return
            child = self.child(node, element)
            if depth == len(path) - 1:
                if child and "." not in child:
                    items = list(child.items())
                    child.clear()
                    child["."] = {}
                    child.update(items)
                return
            if not child:  # a leaf member gains children
                child["."] = {}
            node = child


def _insert_sorted(node: dict[str, Any], key: str, value: dict[str, Any]) -> None:
    keys = [k for k in node if k != "."]
    if not keys or keys[-1] < key:
        node[key] = value
        return
    at = bisect.bisect(keys, key)
    tail = [(k, node.pop(k)) for k in keys[at:]]
    node[key] = value
    node.update(tail)


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
    "encode_fields",
    "has_members",
    "is_member",
    "locate",
    "path_string",
    "update_fields",
]


_STRIPPED_METADATA = frozenset(p[1] for p in STRIPPED if len(p) == 2)


def created_fields(obj: Any, schema: PatchSchema, root: str) -> dict[str, Any]:
    """``FieldsV1`` of every field an Update manager owns after creating ``obj``: the same
    document as ``encode_fields(compare({}, obj).added - STRIPPED)``, built in one walk
    without the intermediate path sets (the common case of every create, so it is hot)."""
    out: dict[str, Any] = {}
    if not isinstance(obj, dict):
        return out
    for key in sorted(obj):  # all "f:" elements: plain string order is FieldsV1 order
        if key in ("apiVersion", "kind"):
            continue
        node = _created_node(obj[key], schema.field(root, key), schema,
                             top=key in ("metadata", "spec", "status"))
        if key == "metadata" and node is not None:
            for element in _STRIPPED_METADATA:  # strip the field itself, not what is below
                stripped = node.get(element)
                if stripped is not None:
                    stripped.pop(".", None)
                    if not stripped:
                        del node[element]
            node.pop(".", None)
            if not node:
                node = None
        if node is not None:
            out[f"f:{key}"] = node
    return out


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
    return {}


def _created_members(value: dict[str, Any], type_name: str,
                     schema: PatchSchema) -> dict[str, Any]:
    children: dict[str, Any] = {}
    for key in sorted(value):
        node = _created_node(value[key], schema.field(type_name, key), schema)
        if node is not None:
            children[f"f:{key}"] = node
    return children


def _node(children: dict[str, Any], member: bool) -> dict[str, Any] | None:
    if not children:
        return {} if member else None
    return {".": {}, **children} if member else children
