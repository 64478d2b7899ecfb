"""The strings many stored objects repeat, held once (issue 27: memory per object).

orjson shares the dict keys it decodes but makes a new ``str`` for every value, so each
of a million decoded objects had its own ``"default"``, ``"v1"``, ``"ConfigMap"``, its
owner's name and uid (the same for a thousand dependents), its labels' values and its
creation second. ``intern_common`` replaces those values by one shared copy
(``sys.intern``; interned strings are freed when the last object holding them goes), in
the decoded object, before anyone else holds it. An object's own name and uid are not:
most are unique, and the interned table's entry (~50 B) would cost more than it saves.

Cost: ~1 µs per object; values only, never a key or the shape of the object.
"""

from __future__ import annotations

import sys
from typing import Any

from kubegc.api.types import Obj

_intern = sys.intern

#: metadata fields whose values objects share: the namespace and the creation second
_META_FIELDS = ("namespace", "creationTimestamp")
#: the fields of an ownerReference (all shared by the owner's dependents)
_REF_FIELDS = ("apiVersion", "kind", "name", "uid")


def intern_common(obj: Obj) -> Obj:
    """``obj`` with its commonly repeated string values interned (in place)."""
    _intern_fields(obj, ("apiVersion", "kind"))
    meta = obj.get("metadata")
    if type(meta) is dict:
        _intern_fields(meta, _META_FIELDS)
        labels = meta.get("labels")
        if type(labels) is dict:
            for key, value in labels.items():
                if type(value) is str:
                    labels[key] = _intern(value)
        refs = meta.get("ownerReferences")
        if type(refs) is list:
            for ref in refs:
                if type(ref) is dict:
                    _intern_fields(ref, _REF_FIELDS)
    return obj


def _intern_fields(d: dict[str, Any], fields: tuple[str, ...]) -> None:
    for field in fields:
        value = d.get(field)
        if type(value) is str:
            d[field] = _intern(value)
