"""Validation ratcheting (cf. ``apiserver/validation/ratcheting.go`` and
``apiserver/cel/common`` ``CorrelatedObject``): on update, a value equal to its old
counterpart is not validated again. These are the counterparts: a field's old value by
name, a ``map`` list item's by its keys, a ``set`` item's by its value; items of atomic
lists have none."""

from __future__ import annotations

from typing import Any

from kubegc.registry.structural.listtype import identity
from kubegc.registry.structural.schema import Structural


class _Absent:
    """No old value to ratchet against (a create, or a value without a counterpart)."""


ABSENT: Any = _Absent()


def correlate(items: list[Any], s: Structural, old: Any) -> list[Any] | None:
    """The old counterpart (or ``ABSENT``) of each item of a list whose old value is
    ``old``; None when no item has one."""
    if type(old) is not list or s.list_type not in ("map", "set"):
        return None
    if s.list_type == "set":
        before = {identity(item) for item in old}
        return [item if identity(item) in before else ABSENT for item in items]
    keys = s.list_map_keys
    by_key = {identity([o.get(k) for k in keys]): o for o in old if type(o) is dict}
    return [by_key.get(identity([i.get(k) for k in keys]), ABSENT) if type(i) is dict
            else ABSENT for i in items]
