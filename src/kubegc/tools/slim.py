"""What the doctor keeps of each object of a dump (issue 27: the doctor on a 1M-object dump).

A dump's objects are decoded a chunk at a time (``client.dump_items``) and each passes
through ``Slim`` before the next chunk is decoded, so what is held is only what this keeps:

* the strings objects repeat, held once (``api.interning.intern_common``);
* the values dependents of one owner repeat, held once by content: ``labels`` (a
  ReplicaSet's pods carry the same), ``ownerReferences`` and ``finalizers`` (every
  dependent of one owner names it alike). Nothing in the tools mutates an object they read
  (``inventory``: objects are shared, read-only), and ``wellformed`` fixes a malformed one
  in a deep copy, so a shared value is never changed through one of its holders;
* not the payload of kinds whose payload no check reads (``PAYLOAD``: a ConfigMap's
  ``data``, a Secret's), nor the ``last-applied-configuration`` annotation ``kubectl
  apply`` leaves on objects (a copy of the object as applied: often most of it), while it
  is a string (a value of another type stays, for ``wellformed`` to report).

Everything the checks read stays as it was in the dump, in the same dicts: the doctor and
the GC's rules read a slim object exactly as the whole one (``ownership``, ``decision``),
and the report is the same byte for byte (``tests/tools/test_slim.py``). Only the doctor
reads a dump so (``commands``): ``plan`` loads every object into a simulated cluster and
``tree``/``why``/the page show them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from kubegc.api.interning import intern_identity, intern_labels, intern_refs
from kubegc.api.types import Obj

#: (apiVersion, kind) -> the top-level fields no check reads
PAYLOAD: dict[tuple[str, str], tuple[str, ...]] = {
    ("v1", "ConfigMap"): ("data", "binaryData"),
    ("v1", "Secret"): ("data", "stringData"),
}
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
#: the values dependents of one owner repeat, and how to intern the first of each
SHARED: tuple[tuple[str, Callable[[object], None] | None], ...] = (
    ("labels", intern_labels), ("ownerReferences", intern_refs), ("finalizers", None))


class Slim:
    """A ``client.dump.Prepare`` for one dump: call it on each decoded object.

    Ownership: one per dump read; holds the shared values until the read ends."""

    def __init__(self) -> None:
        #: a value's content (its JSON: types, order and all) -> the value held for it
        self._shared: dict[bytes, Any] = {}

    def __call__(self, obj: Obj) -> Obj:
        meta = intern_identity(obj)  # (``intern_common``, the rest below)
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        payload = (PAYLOAD.get((api_version, kind))
                   if type(api_version) is str and type(kind) is str else None)
        if payload is not None:
            for field in payload:
                obj.pop(field, None)
        if meta is None:
            return obj
        annotations = meta.get("annotations")
        if type(annotations) is dict and type(annotations.get(LAST_APPLIED)) is str:
            meta["annotations"] = {k: v for k, v in annotations.items() if k != LAST_APPLIED}
        for field, intern in SHARED:
            value = meta.get(field)
            if value:
                meta[field] = self._share(value, intern)
        return obj

    def _share(self, value: Any, intern: Callable[[object], None] | None) -> Any:
        """The value held for the content of ``value`` (``value`` itself, interned, the
        first time)."""
        try:
            key = orjson.dumps(value)
        except orjson.JSONEncodeError:  # what JSON cannot hold (an integer too large)
            key = b""
        found = self._shared.get(key) if key else None
        if found is None:
            if intern is not None:
                intern(value)
            found = value
            if key:
                self._shared[key] = value
        return found
