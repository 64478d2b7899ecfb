"""Which fields of an object have a type other than the API's schema gives them.

``field_problems(obj, memo)`` walks the fields the tools read (``FIELDS``, as a tree:
``SCHEMA``) and says, for each of the wrong type, where it is and what is wrong, parents
first (the fields of a malformed one are not looked at). ``tools.wellformed`` decides what
the tools then do with such an object (leave the field out, in a copy) and reports it.
A value many objects share (``tools.slim``: labels, ownerReferences) is checked once while
``Memo`` remembers it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kubegc.api.clock import parse_time_or_none
from kubegc.api.types import Obj

Check = Callable[[Any], bool]


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def _is_dict(v: Any) -> bool:
    return isinstance(v, dict)


def _is_list(v: Any) -> bool:
    return isinstance(v, list)


_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)")


def _is_time(v: Any) -> bool:
    """A time as ``metav1.Time`` writes it (fast), or as the tools parse one."""
    if type(v) is str and v in _TIMES:
        return True
    good = isinstance(v, str) and (_RFC3339.fullmatch(v) is not None
                                   or parse_time_or_none(v) is not None)
    if good and type(v) is str:  # objects share their creation second: remembered
        if len(_TIMES) >= 4096:
            _TIMES.clear()
        _TIMES.add(v)
    return good


#: times found well-formed lately
_TIMES: set[str] = set()


EXPECTED: dict[Check, str] = {_is_str: "a string", _is_int: "an integer", _is_bool: "a boolean",
                               _is_dict: "an object", _is_list: "a list",
                               _is_time: "a time (RFC 3339)"}

#: (path, check): the fields the tools read, of any kind. A path's "*" is every item of a
#: list and every value of a map; a field is checked only where its parent passed.
FIELDS: tuple[tuple[tuple[str, ...], Check], ...] = (
    (("metadata", "generateName"), _is_str),
    (("metadata", "resourceVersion"), _is_str),
    (("metadata", "creationTimestamp"), _is_time),
    (("metadata", "deletionGracePeriodSeconds"), _is_int),
    (("metadata", "labels"), _is_dict),
    (("metadata", "labels", "*"), _is_str),
    (("metadata", "annotations"), _is_dict),
    (("metadata", "annotations", "*"), _is_str),
    (("metadata", "finalizers"), _is_list),
    (("metadata", "finalizers", "*"), _is_str),
    (("metadata", "ownerReferences"), _is_list),
    (("metadata", "ownerReferences", "*"), _is_dict),
    (("metadata", "ownerReferences", "*", "controller"), _is_bool),
    (("metadata", "ownerReferences", "*", "blockOwnerDeletion"), _is_bool),
    (("spec",), _is_dict),
    (("status",), _is_dict),
    (("spec", "nodeName"), _is_str),
    (("spec", "finalizers"), _is_list),  # a Namespace's
    (("spec", "finalizers", "*"), _is_str),
    (("spec", "replicas"), _is_int),
    (("spec", "terminationGracePeriodSeconds"), _is_int),
    (("spec", "ttlSecondsAfterFinished"), _is_int),
    (("spec", "holderIdentity"), _is_str),  # a Lease's
    (("spec", "leaseDurationSeconds"), _is_int),
    (("spec", "renewTime"), _is_time),
    (("spec", "acquireTime"), _is_time),
    (("spec", "unschedulable"), _is_bool),  # a Node's
    (("spec", "taints"), _is_list),
    (("spec", "taints", "*"), _is_dict),
    (("status", "phase"), _is_str),
    (("status", "conditions"), _is_list),
    (("status", "conditions", "*"), _is_dict),
    (("status", "conditions", "*", "type"), _is_str),
    (("status", "conditions", "*", "status"), _is_str),
    (("status", "conditions", "*", "reason"), _is_str),
    (("status", "conditions", "*", "message"), _is_str),
    (("status", "readyReplicas"), _is_int),
    (("status", "replicas"), _is_int),
    (("status", "numberReady"), _is_int),
    (("status", "desiredNumberScheduled"), _is_int),
    (("involvedObject",), _is_dict),  # an Event's
    (("involvedObject", "*"), _is_str),
    (("reason",), _is_str),
    (("message",), _is_str),
)
#: Owner reference fields every reference needs (``ValidateOwnerReferences``): a
#: reference without them is left out.
REF_REQUIRED = ("apiVersion", "kind", "name", "uid")


Path = tuple[str | int, ...]


@dataclass(slots=True)
class _Node:
    """``FIELDS`` as a tree: a field's check, its checked fields (``leaves``: with no
    fields or items of their own; ``inner``: with), its items' node."""

    check: Check | None = None
    children: dict[str, _Node] = field(default_factory=dict)
    items: _Node | None = None
    #: field -> (its check, the exact type that passes it, its node unless a leaf)
    fields: dict[str, tuple[Check | None, type | None, _Node | None]] = field(
        default_factory=dict)
    keys: frozenset[str] = frozenset()
    #: its values are often one value shared by many objects (``tools.slim``): ``Memo``
    shared: bool = False

    @property
    def is_leaf(self) -> bool:
        return not self.children and self.items is None


#: The exact type that passes a check at once (JSON decoders make no subclasses).
_EXACT: dict[Check, type] = {_is_str: str, _is_int: int, _is_bool: bool, _is_dict: dict,
                             _is_list: list}


def _schema(fields: Iterable[tuple[tuple[str, ...], Check]]) -> _Node:
    root = _Node()
    for path, check in fields:
        node = root
        for step in path:
            if step == "*":
                node.items = node.items or _Node()
                node = node.items
            else:
                node = node.children.setdefault(step, _Node())
        node.check = check
    _freeze(root)
    return root


def _freeze(node: _Node) -> None:
    node.fields = {k: (c.check, _EXACT.get(c.check) if c.check else None,
                       None if c.is_leaf else c) for k, c in node.children.items()}
    node.keys = frozenset(node.fields)
    for child in node.children.values():
        _freeze(child)
    if node.items is not None:
        _freeze(node.items)


SCHEMA = _schema(FIELDS)
#: the fields ``tools.slim`` shares between the objects of a dump
SHARED = (("metadata", "labels"), ("metadata", "annotations"), ("metadata", "ownerReferences"),
          ("metadata", "finalizers"))
for _path in SHARED:
    SCHEMA.children[_path[0]].children[_path[1]].shared = True


class Memo:
    """Shared values found well-formed lately (by identity; each held, so that its id
    is not reused while it is remembered): a value 1,000 dependents share (``tools.slim``)
    is checked once, not 1,000 times. Bounded: forgets everything past ``LIMIT``."""

    LIMIT = 4096

    def __init__(self) -> None:
        #: (id of the value, id of its node) -> the value
        self.walked: dict[tuple[int, int], Any] = {}
        self.refs: dict[int, Any] = {}  # id of an ownerReferences list -> the list

    @staticmethod
    def remember(seen: dict[Any, Any], key: Any, value: Any) -> None:
        if len(seen) >= Memo.LIMIT:
            seen.clear()
        seen[key] = value


def field_problems(obj: Obj, memo: Memo) -> list[tuple[Path, str]]:
    """(concrete path, what is wrong) of each malformed field, parents first (the fields
    of a malformed one are not looked at). The hot loop of a 100k-object read: lean."""
    found: list[tuple[Path, str]] = []
    _walk(obj, SCHEMA, (), found, memo)
    if len(found) > 1:  # fields are visited in set order: parents first, then by name
        found.sort(key=lambda f: [str(step) for step in f[0]])
    meta = obj["metadata"]
    stamp = meta.get("deletionTimestamp")
    if stamp is not None and not _is_time(stamp):
        found.append((("metadata", "deletionTimestamp"),
                      f"is {describe(stamp)}, not {EXPECTED[_is_time]}"))
    refs = meta.get("ownerReferences")
    if isinstance(refs, list) and id(refs) not in memo.refs:
        before = len(found)
        for i, ref in enumerate(refs):
            if not isinstance(ref, dict):
                continue
            missing = [k for k in REF_REQUIRED if not (isinstance(ref.get(k), str) and ref[k])]
            if missing:
                found.append((("metadata", "ownerReferences", i),
                               f"has no {', '.join(missing)} (strings)"))
        if len(found) == before:
            memo.remember(memo.refs, id(refs), refs)
    return found


def _walk(value: Any, node: _Node, path: Path, found: list[tuple[Path, str]],
          memo: Memo) -> None:
    """Check ``value`` (not null) against ``node``, then its fields and items."""
    check = node.check
    if check is not None and type(value) is not _EXACT.get(check) and not check(value):
        found.append((path, f"is {describe(value)}, not {EXPECTED[check]}"))
        return
    if type(value) is dict:
        for key in node.keys.intersection(value):  # the fields it has: few of those checked
            v = value[key]
            if v is None:  # a field set to null is absent
                continue
            leaf_check, exact, child = node.fields[key]
            if child is not None and child.shared:
                if (id(v), id(child)) not in memo.walked:  # before building its path
                    _walk_shared(v, child, (*path, key), found, memo)
            elif child is not None:
                _walk(v, child, (*path, key), found, memo)
            elif leaf_check is not None and type(v) is not exact and not leaf_check(v):
                found.append(((*path, key), f"is {describe(v)}, not {EXPECTED[leaf_check]}"))
    items = node.items
    if items is not None and value:
        pairs: Iterable[tuple[Any, Any]] = (
            enumerate(value) if type(value) is list
            else value.items() if type(value) is dict else ())
        item_check, exact = items.check, _EXACT.get(items.check) if items.check else None
        simple = items.is_leaf and item_check is not None
        for key, v in pairs:
            if simple and type(v) is exact:
                continue
            if v is None:  # an item or a map's value is never absent
                found.append(((*path, key), "is null, not " + EXPECTED[item_check]
                              if item_check is not None else "is null"))
            else:
                _walk(v, items, (*path, key), found, memo)


def _walk_shared(value: Any, node: _Node, path: Path, found: list[tuple[Path, str]],
                 memo: Memo) -> None:
    """``_walk`` of a value objects often share, unless it was found well-formed lately."""
    if (id(value), id(node)) not in memo.walked:
        before = len(found)
        _walk(value, node, path, found, memo)
        if len(found) == before:
            memo.remember(memo.walked, (id(value), id(node)), value)


def describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f'the string "{shown}"'
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__
