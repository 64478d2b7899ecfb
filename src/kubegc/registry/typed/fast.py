"""A fast yes/no pass of the typed decoding: whether an object decodes as it is, with no
error to word and no null to replace. Almost every request does, so ``decode_typed``
runs this first and walks with error context (``decode._Walk``) only when it says no.

Each Go type gets one checker (a closure over its fields' checkers, built on first use,
so recursive types such as ``JSONSchemaProps`` work); the subtrees of an object's top
level but ``metadata`` (``spec``, ``data``...) are remembered by their JSON once found
clean (``api.memo.Memo``): the Pods of one template are checked once.
May import: stdlib, ``kubegc.api``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from kubegc.api.memo import Memo
from kubegc.registry.typed.gotypes import INT_RANGES, GoType
from kubegc.registry.typed.special import (
    RFC3339,
    RFC3339_MICRO,
    check_base64,
    check_quantity,
    check_time,
)

Check = Callable[[Any], bool]
_checks: dict[GoType, Check] = {}
#: (id of a type's checker, JSON of a subtree) of subtrees found clean
_clean = Memo()


def clean(obj: dict[str, Any], typ: GoType) -> bool:
    """Whether ``obj`` (a ``typ`` struct) decodes with no error and no null."""
    fields = typ.fields()
    for key, item in obj.items():
        sub = fields.get(key)
        if sub is None:
            continue
        if item is None:
            return False
        check = checker(sub)
        if key != "metadata" and (type(item) is dict or type(item) is list) and item:
            try:
                memo_key = (id(check), orjson.dumps(item))
            except TypeError:
                return False
            if _clean.get(memo_key) is not None:
                continue
            if not check(item):
                return False
            _clean.put(memo_key, b"")
        elif not check(item):
            return False
    return True


def checker(typ: GoType) -> Check:
    found = _checks.get(typ)
    if found is None:
        found = _checks[typ] = _build(typ)
    return found


def _build(typ: GoType) -> Check:
    kind = typ.kind
    if kind == "struct":
        return _struct(typ)
    if kind in ("slice", "map"):
        assert typ.elem is not None
        elem = typ.elem
        lazy: list[Check] = []

        def items(value: Any) -> bool:
            if not lazy:
                lazy.append(checker(elem))
            check = lazy[0]
            if kind == "slice":
                return type(value) is list and all(v is not None and check(v) for v in value)
            return type(value) is dict and all(
                v is not None and check(v) for v in value.values())

        return items
    return _SCALARS.get(kind) or _special(kind)


def _struct(typ: GoType) -> Check:
    checks: dict[str, Check] = {}

    def check(value: Any) -> bool:
        if type(value) is not dict:
            return False
        if not checks and typ.fields():
            checks.update((name, checker(sub)) for name, sub in typ.fields().items())
        for key, item in value.items():
            sub = checks.get(key)
            if sub is not None and (item is None or not sub(item)):
                return False
        return True

    return check


def _int(kind: str) -> Check:
    low, high = INT_RANGES[kind]
    return lambda v: type(v) is int and low <= v <= high


_SCALARS: dict[str, Check] = {
    "string": lambda v: type(v) is str,
    "bool": lambda v: type(v) is bool,
    "int32": _int("int32"),
    "int64": _int("int64"),
    "float64": lambda v: type(v) is float or type(v) is int,
    "bytes": lambda v: type(v) is str and check_base64(v) is None,
    "raw": lambda v: True,
    "duration": lambda v: type(v) is str,
}


def _special(kind: str) -> Check:
    if kind == "quantity":
        return lambda v: (type(v) is str and check_quantity(v) is None) or (
            (type(v) is int or type(v) is float) and check_quantity(repr(v)) is None)
    if kind == "intorstring":
        low, high = INT_RANGES["int32"]
        return lambda v: type(v) is str or (type(v) is int and low <= v <= high)
    layout = RFC3339_MICRO if kind == "microtime" else RFC3339
    return lambda v: type(v) is str and check_time(v, layout) is None
