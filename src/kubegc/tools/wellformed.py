"""Objects the tools can read: each field they read has the type the API's schema gives it.

An API server never serves an object whose ``metadata.finalizers`` is a string or whose
``deletionTimestamp`` is not a time: its decoding and ``ValidateObjectMeta``
(k8s.io/apimachinery/pkg/api/validation/objectmeta.go) refuse them. A dump edited by
hand, or a third-party server, may hold them all the same. ``well_formed(objects, now)``
is where every tool reads an object through (``inventory.read_inventory``): it checks
the fields the tools read, and for each one of the wrong type records an ``InputProblem``
(what is wrong, where: the object and the field) and leaves out what it breaks, in a copy
(the other objects are returned as they are, shared):

* an object without a string ``apiVersion``/``kind`` or a ``metadata`` object, or whose
  ``metadata.name``/``namespace``/``uid`` is not a string, cannot be named: it is left out;
* a ``deletionTimestamp`` that is not a time still says the object is being deleted: it
  is read as its ``creationTimestamp`` (the earliest the deletion can have begun), else
  as ``now``;
* any other field of the wrong type is left out (a list item of the wrong type: that
  item), so the tools judge the object as if the field were absent, and say so.

Every tool reports the problems (the doctor and ``why`` as ``MalformedObject`` findings,
``plan`` and ``tree`` as notes, the page with the doctor's findings).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from kubegc.api.clock import format_time, parse_time_or_none
from kubegc.api.types import Obj
from kubegc.tools.field_types import Memo, Path, describe, field_problems
from kubegc.tools.model import ObjRef

#: The object cannot be named: it is left out of the inventory.
SKIPPED = "the object is left out"
IGNORED = "ignored"
_SINCE_NOW = "read as being deleted since now"


@dataclass(frozen=True, slots=True)
class InputProblem:
    """One field of one object that breaks the API's schema, and what the tools do."""

    object: ObjRef
    field: str  # "metadata.ownerReferences[0].uid"
    wrong: str  # 'is an object, not a list'
    effect: str  # "ignored", "the object is left out", ...

    def __str__(self) -> str:
        return f"{self.object}: {self.field} {self.wrong}: {self.effect}"

    def to_dict(self) -> dict[str, Any]:
        return {"object": self.object.to_dict(), "field": self.field, "problem": self.wrong,
                "effect": self.effect}

#: The fields that name an object: without them it is left out.
IDENTITY = ("name", "namespace", "uid")
#: the types of a field that names an object (null: absent)
_NAMING = frozenset((str, type(None)))


def well_formed(objects: Iterable[Obj], now: datetime) -> tuple[list[Obj], list[InputProblem]]:
    """The objects with their malformed fields left out (see the module docstring), and
    what was wrong. Well-formed objects are returned as they are."""
    reading = Reading(now)
    read = reading.read
    out = [obj for obj in map(read, objects) if obj is not None]
    return out, reading.problems


class Reading:
    """``well_formed`` an object at a time, for a caller that walks the objects anyway
    (``Inventory``: one walk per object of a 1M-object dump, not one per check).

    Ownership: one per read of many objects; ``problems`` grows as they are read."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.problems: list[InputProblem] = []
        self._memo = Memo()
        #: the copies whose deletion is read as beginning ``now`` (``judge_at``)
        self._at_now: list[Obj] = []

    def read(self, obj: Obj) -> Obj | None:
        """``obj`` as the tools read it: itself when well-formed, else a copy without its
        malformed fields, or None when it cannot be named (its problems recorded)."""
        meta = obj.get("metadata") if type(obj) is dict else None
        if (type(meta) is not dict or type(obj.get("apiVersion")) is not str
                or type(obj.get("kind")) is not str or type(meta.get("name")) not in _NAMING
                or type(meta.get("namespace")) not in _NAMING
                or type(meta.get("uid")) not in _NAMING):  # else named: the common case
            found = _identity_problems(obj)
            if found:
                self.problems.extend(found)
                return None
        fixes = field_problems(obj, self._memo)
        if not fixes:
            return obj
        fixed = copy.deepcopy(obj)
        ref = ObjRef.of(obj)
        for path, wrong in fixes:
            effect = _fix(fixed, path, self.now)
            if effect == _SINCE_NOW:
                self._at_now.append(fixed)
            self.problems.append(InputProblem(ref, _path_text(path), wrong, effect))
        _purge(fixed)
        return fixed

    def judge_at(self, now: datetime) -> None:
        """``now`` is the time judged at after all (the cluster's, found as the objects
        were read): the deletions read as beginning now begin then."""
        self.now = now
        for obj in self._at_now:
            obj["metadata"]["deletionTimestamp"] = format_time(now)


def problem_notes(problems: list[InputProblem], limit: int = 10) -> list[str]:
    """The problems as notes of a report (``plan``, ``tree``), at most ``limit`` of them."""
    notes = [f"malformed input, {p}" for p in problems[:limit]]
    if len(problems) > limit:
        notes.append(f"and {len(problems) - limit} more malformed fields (kubegc doctor lists "
                     "them)")
    return notes


def _identity_problems(obj: Any) -> list[InputProblem]:
    if not isinstance(obj, dict):
        return [InputProblem(ObjRef("", "", ""), "", f"is {describe(obj)}, not an object",
                             SKIPPED)]
    meta = obj.get("metadata")
    where = ObjRef(_text(obj.get("kind")), "", "")
    if not isinstance(meta, dict):
        return [InputProblem(where, "metadata", f"is {describe(meta)}, not an object",
                             SKIPPED)]
    where = ObjRef(_text(obj.get("kind")), _text(meta.get("namespace")),
                   _text(meta.get("name")))
    out = [InputProblem(where, key, f"is {describe(obj.get(key))}, not a string", SKIPPED)
           for key in ("apiVersion", "kind") if not isinstance(obj.get(key), str)]
    out += [InputProblem(where, f"metadata.{key}", f"is {describe(meta[key])}, not a string",
                         SKIPPED)
            for key in IDENTITY if meta.get(key) is not None and not isinstance(meta[key], str)]
    return out

def _fix(obj: Obj, path: Path, now: datetime) -> str:
    """Leave the field at ``path`` out of ``obj`` (the copy); what that means, in words."""
    if path == ("metadata", "deletionTimestamp"):
        created = parse_time_or_none(obj["metadata"].get("creationTimestamp"))
        obj["metadata"]["deletionTimestamp"] = format_time(created or now)
        return ("read as being deleted since it was created, the earliest it can be"
                if created is not None else _SINCE_NOW)
    parent: Any = obj
    for step in path[:-1]:
        if not isinstance(parent, dict | list):
            return IGNORED  # within an item already left out
        parent = cast(Any, parent)[step]
    last = path[-1]
    if isinstance(parent, list) and isinstance(last, int):
        parent[last] = _DROPPED  # removed by ``_purge``, so that later indices stay valid
        return "that item is ignored"
    if isinstance(parent, dict):
        parent.pop(last, None)
    return IGNORED


class _Dropped:
    pass


_DROPPED = _Dropped()


def _purge(value: Any) -> None:
    """Take the ``_DROPPED`` items out of every list in ``value``, once every fix is made."""
    if isinstance(value, dict):
        for v in value.values():
            _purge(v)
    elif isinstance(value, list):
        value[:] = [v for v in value if v is not _DROPPED]
        for v in value:
            _purge(v)


def _path_text(path: Path) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text

def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
