"""``x-kubernetes-list-type`` invariants (cf. ``apiserver/schema/listtype/validation.go``):
the items of a ``set`` are unique, and so are the keys (``x-kubernetes-list-map-keys``) of
the items of a ``map``. Called by the validation walk for each list it meets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from kubegc.api.errors import StatusCause
from kubegc.registry.structural import field
from kubegc.registry.structural.schema import Structural


class _Unspecified:
    """An item without the key (or a null item) of a single-key list map."""


_UNSPECIFIED = _Unspecified()


def validate_list(path: str, schema: Structural, items: list[Any]) -> list[StatusCause]:
    """The errors of one list (not of the lists inside it); ``path`` is a field path."""
    if schema.list_type == "set":
        return [field.duplicate(f"{path}[{i}]", items[i]) for i in _non_unique(items)]
    if schema.list_type == "map":
        return _validate_map(path, schema.list_map_keys, items)
    return []


def identity(value: Any) -> Any:
    """What makes two JSON values equal as Go compares them (int64 1 is not float64 1)."""
    if type(value) is dict or type(value) is list:
        return ("compound", orjson.dumps(value, option=orjson.OPT_SORT_KEYS))
    return (type(value).__name__, value)


def _non_unique(values: Sequence[Any]) -> list[int]:
    """The index of each value's second appearance (``validateListSet``)."""
    if len(values) <= 1:
        return []
    seen: dict[Any, int] = {}
    out: list[int] = []
    for i, value in enumerate(values):
        key = value if value is _UNSPECIFIED else identity(value)
        times = seen.get(key, 0)
        seen[key] = times + 1
        if times == 1:
            out.append(i)
    return out


def _validate_map(path: str, keys: tuple[str, ...], items: list[Any]) -> list[StatusCause]:
    for i, item in enumerate(items):
        if item is not None and type(item) is not dict:
            return [field.invalid(f"{path}[{i}]", item,
                                  "must be an object for an array of list-type map")]
    if len(items) <= 1:
        return []
    if len(keys) == 1:
        name = keys[0]
        single = [_UNSPECIFIED if item is None or name not in item else item[name]
                  for item in items]
        return [field.duplicate(f"{path}[{i}]", {} if single[i] is _UNSPECIFIED else {
            name: single[i]}) for i in _non_unique(single)]
    compound = [{k: item[k] for k in keys if k in item} if item is not None else {}
                for item in items]
    return [field.duplicate(f"{path}[{i}]", compound[i]) for i in _non_unique(compound)]
