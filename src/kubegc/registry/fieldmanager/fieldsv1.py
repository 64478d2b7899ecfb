"""``FieldsV1``: the tree encoding of a field set (``.`` marks a node that is itself a
member), as server-side apply stores it in ``metadata.managedFields``.

* ``encode_fields`` / ``decode_fields`` -- a set of paths to its document and back, in
  upstream's order (``f:`` < ``k:`` < ``v:`` < ``i:``, then by text).
* ``edited_fields`` / ``is_member`` / ``has_members`` -- a document edited or queried as the
  set it stands for without decoding it; edits render exactly as ``encode_fields`` of the
  edited set would (the hot path of every update).

Paths and their elements are described in ``fieldpath``.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import Any

Path = tuple[str, ...]


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
