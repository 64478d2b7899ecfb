"""Dependents by owner uid, indexed in the inventory's own walk over its objects.

The garbage collector's graph links a dependent to each owner its references name by uid
(``uid_to_node`` in upstream's ``GraphBuilder``); ``ownership.OwnerGraph`` answers the
tools' questions on that index. It is built here, by ``Inventory`` as it indexes each
object (issue 27: one walk per object of a 1M-object dump rather than one per index), and
only read after.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kubegc.api.types import Obj


class Edge(NamedTuple):
    """``dependent`` names its owner through ``ref`` (a tuple: an inventory has one per
    owner reference, 100,000s of them)."""

    dependent: Obj
    ref: dict[str, Any]

    @property
    def blocking(self) -> bool:
        return bool(self.ref.get("blockOwnerDeletion"))


#: lists of references ``Dependents`` remembers the targets of at most, then starts over
_TARGETS_LIMIT = 4096


class Dependents:
    """owner uid -> the edges of its dependents, in the order the dependents are added.

    Ownership: filled by one ``Inventory`` (``add`` per object with references), read-only
    after."""

    def __init__(self) -> None:
        self.by_owner: dict[str, list[Edge]] = {}
        #: id of a list of references -> (the list, where each of its references goes):
        #: the dependents of one owner share one list (``tools.slim``), looked up once
        self._targets: dict[int, tuple[object, list[tuple[list[Edge], dict[str, Any]]]]] = {}

    def add(self, obj: Obj, refs: list[dict[str, Any]]) -> None:
        """``obj``'s edges to the owners ``refs`` (its ownerReferences, not empty) name."""
        targets = self._targets
        found = targets.get(id(refs))
        if found is None:  # the list is held with its targets: its id is not reused
            if len(targets) >= _TARGETS_LIMIT:  # lists not shared (a live read)
                targets.clear()
            by_owner = self.by_owner
            found = targets[id(refs)] = (refs, [
                (by_owner.setdefault(str(ref.get("uid") or ""), []), ref) for ref in refs])
        new = tuple.__new__  # ``Edge(obj, ref)`` without its Python-level __new__
        for into, ref in found[1]:
            into.append(new(Edge, (obj, ref)))

    def done(self) -> None:
        """Forget the lists looked up: nothing is added after the inventory's walk."""
        self._targets = {}
