"""What the doctor keeps of each object of a dump (issue 27: the doctor on a 1M-object dump).

A dump's objects are decoded a chunk at a time (``client.dump_items``) and each passes
through ``Slim`` before the next chunk is decoded, so what is held is only what this keeps:

* the strings objects repeat, held once (``api.interning.intern_common``);
* the values dependents of one owner repeat, held once by content
  (``api.interning.SharedValues``, as the metadata informers hold them): ``labels`` (a
  ReplicaSet's pods carry the same) and ``ownerReferences`` (every dependent of one owner
  names it alike). Nothing in the tools mutates an object they read
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

from kubegc.api.interning import SharedValues, intern_identity, intern_labels, intern_refs
from kubegc.api.types import Obj

#: (apiVersion, kind) -> the top-level fields no check reads (a check that comes to read
#: one must take it out of here: the doctor would otherwise never see it on a dump)
PAYLOAD: dict[tuple[str, str], tuple[str, ...]] = {
    ("v1", "ConfigMap"): ("data", "binaryData"),
    ("v1", "Secret"): ("data", "stringData"),
}
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


class Slim:
    """A ``client.dump.Prepare`` for one dump: call it on each decoded object.

    A dump lists the dependents of one owner together (kubectl sorts by namespace and
    name; ``make_dump.py`` writes them in a row): the labels and references an object
    shares are most often the previous object's, so that one is compared first (a few
    C-level comparisons) before ``SharedValues`` builds and hashes a key for the value.
    Equal only when ``SharedValues`` would find them equal: the same keys in the same
    order, and values of the same types (``True == 1`` in Python: the types of the values
    that are not strings are compared too).

    Ownership: one per dump read; holds the shared values until the read ends."""

    def __init__(self) -> None:
        self._shared = SharedValues()
        #: the labels last shared, if all of its values are strings; its keys in order
        self._labels: dict[str, object] | None = None
        self._label_keys: tuple[str, ...] = ()
        #: the ownerReferences last shared, if their values are strings, booleans or null;
        #: per reference its keys in order and those whose value is a boolean
        self._refs: list[object] | None = None
        self._ref_shapes: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()

    def __call__(self, obj: Obj) -> Obj:
        meta = intern_identity(obj)  # (``intern_common``; labels and references below)
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
        labels = meta.get("labels")
        if labels and type(labels) is dict:
            last = self._labels
            if last is not None and labels == last and tuple(labels) == self._label_keys:
                meta["labels"] = last
            else:
                meta["labels"] = self._share_labels(labels)
        refs = meta.get("ownerReferences")
        if refs and type(refs) is list:
            held = self._refs
            if held is not None and refs == held and self._shaped_as_last(refs):
                meta["ownerReferences"] = held
            else:
                meta["ownerReferences"] = self._share_refs(refs)
        return obj

    def _share_labels(self, labels: dict[str, object]) -> dict[str, object]:
        shared = self._shared.labels(labels)
        if shared is labels:  # the first of its content: its strings held once too
            intern_labels(labels)
        plain = all(type(v) is str for v in shared.values())
        self._labels, self._label_keys = (shared, tuple(shared)) if plain else (None, ())
        return shared

    def _share_refs(self, refs: list[object]) -> list[object]:
        held = self._shared.owner_references(refs)
        if held is refs:
            intern_refs(refs)
        shapes = []
        for ref in held:
            if type(ref) is not dict or not _SCALARS.issuperset(map(type, ref.values())):
                self._refs, self._ref_shapes = None, ()
                return held
            shapes.append((tuple(ref), tuple(k for k, v in ref.items() if type(v) is bool)))
        self._refs, self._ref_shapes = held, tuple(shapes)
        return held

    def _shaped_as_last(self, refs: list[object]) -> bool:
        """``refs``, equal to the references last shared, has their keys in their order
        and booleans where they have (an equal 1 is no boolean)."""
        for ref, (keys, flags) in zip(refs, self._ref_shapes, strict=True):
            if tuple(ref) != keys:  # type: ignore[arg-type]  # (a map: equal to one)
                return False
            for key in flags:
                if type(ref[key]) is not bool:  # type: ignore[index]
                    return False
        return True


#: the values a reference compared to the last one may hold: ``==`` tells them apart
#: but for a boolean (checked by type)
_SCALARS = frozenset((str, bool, type(None)))
