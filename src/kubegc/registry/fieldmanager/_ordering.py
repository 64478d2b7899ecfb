"""Element order of merged lists in strategic merge patch.

Mirrors ``normalizeElementOrder`` and its helpers in apimachinery's strategicpatch/patch.go
(design: "preserve order in strategic merge patch"). After a list is merged, its items are
split into *patch items* (named in the patch, or in ``$setElementOrder``) and *server-only
items*; each group is sorted by its own reference order and the two are interleaved using
the live list's order. Consequences worth knowing: without ``$setElementOrder`` a new item
goes *before* the items already in the list (``kubectl patch`` prepends a container), and
``$setElementOrder`` decides the order of everything it names.

``AliasedOriginal`` reproduces one Go artefact the order depends on: upstream reads the
live list back through a slice that shares its backing array with the merge's working list,
so deletions shift it and appended items show through in the freed slots.
"""

from __future__ import annotations

from typing import Any

from kubegc.api.errors import StatusError
from kubegc.registry.fieldmanager._errors import bad_arg_type, go_repr, unknown_error
from kubegc.registry.fieldmanager._values import canonical

MAP = "map"
DIRECTIVE = "$patch"
_MAP_TYPE = "map[string]interface {}"


def no_merge_key(item: Any, merge_key: str) -> StatusError:
    """``mergepatch.ErrNoMergeKey``."""
    return unknown_error(f"map: {go_repr(item)} does not contain declared merge key: {merge_key}")


def key_value(item: dict[str, Any], merge_key: str) -> str:
    if merge_key not in item:
        raise no_merge_key(item, merge_key)
    return canonical(item[merge_key])


def find_by_key(items: list[Any], merge_key: str, value: str) -> int:
    """Position of the first map whose merge key equals ``value`` (canonical), or -1."""
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise unknown_error(f"value for key {i} is not a map")
        if merge_key in item and canonical(item[merge_key]) == value:
            return i
    return -1


class _Indexer:
    """First position of each element of ``order``, by merge key value or by value."""

    def __init__(self, order: list[Any], merge_key: str, kind: str) -> None:
        self._key = merge_key if kind == MAP else ""
        self._first: dict[str, int] = {}
        for i, item in enumerate(order):
            self._first.setdefault(self._value(item), i)

    def _value(self, item: Any) -> str:
        if self._key:
            return canonical(item.get(self._key) if isinstance(item, dict) else None)
        return canonical(item)

    def index(self, item: Any) -> int:
        return self._first.get(self._value(item), -1)


def _validate_merge_keys(merge_key: str, *lists: list[Any]) -> None:
    for items in lists:
        for item in items:
            if not isinstance(item, dict):
                raise bad_arg_type(_MAP_TYPE, item)
            if merge_key not in item:
                raise no_merge_key(item, merge_key)


def _is_delete(item: Any) -> bool:
    return isinstance(item, dict) and item.get(DIRECTIVE) == "delete"


def normalize_slice_order(to_sort: list[Any], order: list[Any], merge_key: str,
                          kind: str) -> list[Any]:
    """``to_sort`` sorted by position in ``order``; ``$patch: delete`` items last."""
    to_delete: list[Any] = []
    if kind == MAP:
        _validate_merge_keys(merge_key, to_sort, order)
        to_delete = [item for item in to_sort if _is_delete(item)]
        to_sort = [item for item in to_sort if not _is_delete(item)]
    indexer = _Indexer(order, merge_key, kind)
    positions = [indexer.index(item) for item in to_sort]
    if all(p >= 0 for p in positions):
        ranked = sorted(zip(positions, range(len(to_sort)), to_sort, strict=True))
        return [item for _, _, item in ranked] + to_delete
    return _go_insertion_sort(to_sort, positions) + to_delete


def _go_insertion_sort(items: list[Any], positions: list[int]) -> list[Any]:
    """sort.SliceStable with upstream's comparator, which calls an unknown item "less"."""
    pairs = list(zip(positions, items, strict=True))
    for i in range(1, len(pairs)):
        j = i
        while j > 0 and _less(pairs[j][0], pairs[j - 1][0]):
            pairs[j], pairs[j - 1] = pairs[j - 1], pairs[j]
            j -= 1
    return [item for _, item in pairs]


def _less(a: int, b: int) -> bool:
    return a < b if a >= 0 and b >= 0 else True


def merge_sorted(left: list[Any], right: list[Any], server_order: list[Any], merge_key: str,
                 kind: str) -> list[Any]:
    """Interleave server-only items (``left``) into patch items (``right``) by live order."""
    indexer = _Indexer(server_order, merge_key, kind)
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if i >= len(left):
            out.append(right[j])
            j += 1
        elif j >= len(right):
            out.append(left[i])
            i += 1
        else:
            li, ri = indexer.index(left[i]), indexer.index(right[j])
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


def normalize_element_order(patch_items: list[Any], server_only: list[Any],
                            patch_order: list[Any], server_order: list[Any], merge_key: str,
                            kind: str) -> list[Any]:
    patch_items = normalize_slice_order(patch_items, patch_order, merge_key, kind)
    server_only = normalize_slice_order(server_only, server_order, merge_key, kind)
    return merge_sorted(server_only, patch_items, server_order, merge_key, kind)


def partition_maps(items: list[Any], by: list[Any],
                   merge_key: str) -> tuple[list[Any], list[Any]]:
    """(items whose merge key appears in ``by``, the others)."""
    inside: list[Any] = []
    outside: list[Any] = []
    for item in items:
        if not isinstance(item, dict):
            raise bad_arg_type(_MAP_TYPE, item)
        found = find_by_key(by, merge_key, key_value(item, merge_key)) >= 0
        (inside if found else outside).append(item)
    return inside, outside


def partition_primitives(items: list[Any], by: list[Any]) -> tuple[list[Any], list[Any]]:
    if any(isinstance(v, dict | list) for v in (*items, *by)):
        raise unknown_error("runtime error: hash of unhashable type map[string]interface {}")
    present = {canonical(v) for v in by}
    inside = [v for v in items if canonical(v) in present]
    outside = [v for v in items if canonical(v) not in present]
    return inside, outside


def dedupe_scalars(items: list[Any]) -> list[Any]:
    seen: set[str] = set()
    out: list[Any] = []
    for item in items:
        text = canonical(item)
        if text not in seen:
            seen.add(text)
            out.append(item)
    return out


def delete_from_slice(current: list[Any], to_delete: list[Any]) -> list[Any]:
    doomed = {canonical(v) for v in to_delete}
    return [v for v in current if canonical(v) not in doomed]


class AliasedOriginal:
    """The live list as upstream's ``originalFieldValue`` shows it after the merge.

    Go deletes list items with ``append(s[:i], s[i+1:]...)``, shifting the shared backing
    array, and appends new items into it while it has room; the live slice keeps its length
    and so sees shifted items, stale tail copies and the first appended items.
    """

    def __init__(self, items: list[Any]) -> None:
        self._backing = list(items)
        self._length = len(items)
        self._detached = False

    def delete_at(self, index: int) -> None:
        if not self._detached:
            end = self._length
            self._backing[index:end - 1] = self._backing[index + 1:end]
            self._length -= 1

    def append(self, item: Any) -> None:
        if self._detached:
            return
        if self._length < len(self._backing):
            self._backing[self._length] = item
            self._length += 1
        else:
            self._detached = True  # Go reallocates: later writes no longer show through

    def detach(self) -> None:
        self._detached = True

    def view(self) -> list[Any]:
        return list(self._backing)
