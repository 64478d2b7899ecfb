"""The strings many stored objects repeat, held once (issue 27: memory per object).

orjson shares the dict keys it decodes but makes a new ``str`` for every value, so each
of a million decoded objects had its own ``"default"``, ``"v1"``, ``"ConfigMap"``, its
owner's name and uid (the same for a thousand dependents), its labels' values and its
creation second. ``intern_common`` replaces those values by one shared copy
(``sys.intern``; interned strings are freed when the last object holding them goes), in
the decoded object, before anyone else holds it. An object's own name and uid are not:
most are unique, and the interned table's entry (~50 B) would cost more than it saves.

It runs where decoded objects start to live long: the watch cache's events and the
in-process LISTs the informers fill their caches from (``registry/generic/target.py``),
and the objects of a dump the tools read (``client/dump.py``: ``kubegc doctor --from``);
~1 µs per object, a tenth of decoding it; values only, never a key or the shape of the
object. It lives in ``kubegc.api`` so that both the server and the client may use it.
"""

from __future__ import annotations

import sys
from typing import Any

from kubegc.api.types import Obj

#: the fields of an ownerReference (all shared by the owner's dependents)
_REF_FIELDS = ("apiVersion", "kind", "name", "uid")


def intern_common(obj: Obj) -> Obj:
    """``obj`` with its commonly repeated string values interned (in place)."""
    meta = intern_identity(obj)
    if meta is not None:
        intern_labels(meta.get("labels"))
        intern_refs(meta.get("ownerReferences"))
    return obj


def intern_identity(obj: Obj) -> dict[str, Any] | None:
    """``obj``'s apiVersion, kind, namespace and creation time interned (in place); its
    metadata (None if it is no map)."""
    intern = sys.intern
    for field in ("apiVersion", "kind"):
        value = obj.get(field)
        if type(value) is str:
            obj[field] = intern(value)
    meta = obj.get("metadata")
    if type(meta) is not dict:
        return None
    for field in ("namespace", "creationTimestamp"):
        value = meta.get(field)
        if type(value) is str:
            meta[field] = intern(value)
    return meta


def intern_labels(labels: object) -> None:
    """The values of a labels map interned (in place)."""
    if labels and type(labels) is dict:
        intern = sys.intern
        for key, value in labels.items():
            if type(value) is str:
                labels[key] = intern(value)


def intern_refs(refs: object) -> None:
    """The shared fields of a list of ownerReferences interned (in place)."""
    if refs and type(refs) is list:
        intern = sys.intern
        for ref in refs:
            if type(ref) is dict:
                for field in _REF_FIELDS:
                    value = ref.get(field)
                    if type(value) is str:
                        ref[field] = intern(value)


#: the scalar values a shared map or list may hold: ``True == 1`` must never let a bool
#: stand for a number (nor ``1 == 1.0`` a float for an int), so numbers are left out
_SHAREABLE = frozenset((str, bool, type(None)))
#: equal values ``SharedValues`` holds at most before it starts over
SHARED_VALUES_LIMIT = 4096


def _flat_key(value: dict[str, object]) -> tuple[object, ...] | None:
    """The items of a map of scalars in order, or None when one is not shareable."""
    if not _SHAREABLE.issuperset(map(type, value.values())):  # (in C: per decoded object)
        return None
    return tuple(value.items())


class SharedValues:
    """Equal read-only parts of decoded objects held once: the labels and annotations a
    ReplicaSet's pods repeat, the ownerReferences of an owner's thousand dependents
    (issue 27: ~490 bytes of each object a metadata-only informer keeps).

    ``flat_map`` and ``owner_references`` return an earlier equal value (same keys in the
    same order, same scalars: encoding it gives the same bytes), or remember the one given.
    Only for values nobody mutates (the informers' objects, see
    ``kubegc.client.cache.shared_informer``); at most ``limit`` values are remembered, then
    the table starts over (a value already shared stays shared).

    Ownership: one event loop, no locking."""

    __slots__ = ("_limit", "_table")

    def __init__(self, limit: int = SHARED_VALUES_LIMIT) -> None:
        self._limit = limit
        self._table: dict[tuple[object, ...], object] = {}

    def _shared(self, key: tuple[object, ...], value: object) -> object:
        table = self._table
        found = table.get(key)
        if found is not None:
            return found
        if len(table) >= self._limit:
            table.clear()
        table[key] = value
        return value

    def flat_map(self, value: dict[str, object]) -> dict[str, object]:
        """A map of scalars (labels, annotations)."""
        key = _flat_key(value)
        if key is None:
            return value
        return self._shared(("m", *key), value)  # type: ignore[return-value]

    def labels(self, labels: dict[str, object]) -> dict[str, object]:
        """``flat_map`` of a labels map."""
        return self.flat_map(labels)

    def owner_references(self, refs: list[object]) -> list[object]:
        parts: list[object] = ["r"]
        for ref in refs:
            if type(ref) is not dict:
                return refs
            key = _flat_key(ref)
            if key is None:
                return refs
            parts.append(key)
        return self._shared(tuple(parts), refs)  # type: ignore[return-value]
