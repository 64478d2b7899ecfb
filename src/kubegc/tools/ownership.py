"""Owner references as the garbage collector judges them, on an inventory.

This module holds no rule of the garbage collector's: it looks owners up in the inventory
instead of with live GETs, in the GC's order (the kind first, then its scope, then the
name where the GC looks: the child's namespace for a namespaced kind, cluster-wide for a
cluster-scoped one), and hands what it found to the GC's own decision core
(``kubegc.controllers.garbagecollector.decision``), which classifies the owners and says
what the GC does with the object. What it adds is the *why*, for reports:

* ``OK`` — an owner with this uid exists where the GC looks (solid);
* ``WAITING`` — that owner is deleting in the foreground (waitingForDependentsDeletion);
* ``ABSENT`` — nothing of that kind and name where the GC looks (dangling);
* ``UID_MISMATCH`` — the name is held by another uid (dangling). ``RefCheck.recreated``
  says whether an object with the referenced uid is known to have existed (the
  inventory's history: DeletionRecords, Events): only then was the owner recreated;
* ``OTHER_NAMESPACE`` — the uid belongs to a namespaced object in another namespace: the
  GC looks in the child's namespace, finds nothing, emits ``OwnerRefInvalidNamespace`` and
  treats it as dangling;
* ``CLUSTER_SCOPED_CHILD`` — a cluster-scoped object names a namespaced kind: invalid, the
  GC never collects it and does not retry;
* ``UNKNOWN_KIND`` — the GC cannot map the kind/version: it retries and deletes nothing;
* ``UNVERIFIED`` — the inventory did not read where the owner would be (a lookup that
  could not be made: the GC's verdict is unknown, shown as a retry).

``OwnerGraph`` indexes dependents by owner uid (as the GC graph links them) and finds
ownership cycles; ``gc_decision`` is the GC's decision for an object of the inventory.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kubegc.api.meta import finalizers_of, is_being_deleted, owner_references_of, uid_of
from kubegc.api.types import Obj
from kubegc.controllers.garbagecollector import decision
from kubegc.controllers.garbagecollector.graph import OwnerRef
from kubegc.controllers.garbagecollector.records import (
    DETAIL_NOT_FOUND,
    DETAIL_OTHER_NAMESPACE,
    DETAIL_RECREATED,
    DETAIL_UID_MISMATCH,
)
from kubegc.tools.dependents import Edge
from kubegc.tools.inventory import Inventory

is_deleting_dependents = decision.is_deleting_dependents
Action = decision.Action
Decision = decision.Decision


class RefState(enum.StrEnum):
    OK = "ok"
    WAITING = "waiting"
    ABSENT = "absent"
    UID_MISMATCH = "uid-mismatch"
    OTHER_NAMESPACE = "other-namespace"
    CLUSTER_SCOPED_CHILD = "cluster-scoped-child"
    UNKNOWN_KIND = "unknown-kind"
    UNVERIFIED = "unverified"

    @property
    def dangling(self) -> bool:
        return self in (RefState.ABSENT, RefState.UID_MISMATCH, RefState.OTHER_NAMESPACE)


@dataclass(frozen=True, slots=True)
class RefCheck:
    ref: dict[str, Any]
    state: RefState
    #: OK/WAITING: the owner; UID_MISMATCH: the object now holding the name;
    #: OTHER_NAMESPACE: the object with that uid in the other namespace
    found: Obj | None = None
    lookup_namespace: str = ""  # where the GC looks for the owner
    #: UID_MISMATCH: an object with the referenced uid is known to have existed
    recreated: bool = False

    @property
    def blocking(self) -> bool:
        return bool(self.ref.get("blockOwnerDeletion"))

    @property
    def owner_ref(self) -> OwnerRef:
        return OwnerRef.from_dict(self.ref)

    @property
    def lookup(self) -> decision.OwnerLookup:
        """What the GC's ``isDangling`` would have found, for the decision core."""
        if self.state in (RefState.OK, RefState.WAITING) and self.found is not None:
            return decision.OwnerLookup.found(self.found)
        if self.state is RefState.CLUSTER_SCOPED_CHILD:
            return decision.OwnerLookup.failed(decision.LookupOutcome.INVALID_SCOPE)
        if self.state is RefState.UNKNOWN_KIND:
            return decision.OwnerLookup.failed(decision.LookupOutcome.UNMAPPABLE)
        if self.state is RefState.UNVERIFIED:
            return decision.OwnerLookup.failed(decision.LookupOutcome.FAILED)
        return decision.OwnerLookup.absent(self.detail)

    @property
    def detail(self) -> str:
        """How a dangling owner's absence is concluded, as the GC's records say it."""
        if self.state is RefState.OTHER_NAMESPACE:
            return DETAIL_OTHER_NAMESPACE
        if self.state is RefState.UID_MISMATCH:
            return DETAIL_RECREATED if self.recreated else DETAIL_UID_MISMATCH
        return DETAIL_NOT_FOUND


def check_ref(inv: Inventory, obj: Obj, ref: dict[str, Any]) -> RefCheck:
    child_ns = str((obj.get("metadata") or {}).get("namespace") or "")
    kind, name, uid = str(ref.get("kind") or ""), str(ref.get("name") or ""), str(
        ref.get("uid") or "")
    group, res = inv.served_kind(str(ref.get("apiVersion") or ""), kind)
    if res is None:
        return RefCheck(ref, RefState.UNKNOWN_KIND)
    if res.namespaced and not child_ns:
        return RefCheck(ref, RefState.CLUSTER_SCOPED_CHILD)
    lookup_ns = child_ns if res.namespaced else ""
    by_uid = inv.by_uid(uid)
    if (by_uid is not None and res.namespaced
            and (by_uid.get("metadata") or {}).get("namespace") != child_ns
            and by_uid.get("kind") == kind):
        return RefCheck(ref, RefState.OTHER_NAMESPACE, by_uid, lookup_ns)
    live = inv.find(group, kind, lookup_ns, name)
    if live is None:
        if inv.was_read(group, kind, lookup_ns):
            return RefCheck(ref, RefState.ABSENT, None, lookup_ns)
        return RefCheck(ref, RefState.UNVERIFIED, None, lookup_ns)
    if uid_of(live) != uid:
        return RefCheck(ref, RefState.UID_MISMATCH, live, lookup_ns,
                        recreated=inv.existed(uid))
    if is_deleting_dependents(live):
        return RefCheck(ref, RefState.WAITING, live, lookup_ns)
    return RefCheck(ref, RefState.OK, live, lookup_ns)


def check_refs(inv: Inventory, obj: Obj) -> list[RefCheck]:
    return [check_ref(inv, obj, ref) for ref in owner_references_of(obj)]


class OwnerGraph:
    """Dependents by owner uid, over the objects of an inventory (cf. the GC's
    ``uid_to_node``: an edge exists when a reference's uid names an owner), as the
    inventory indexed them in its walk (``tools.dependents``)."""

    def __init__(self, inv: Inventory) -> None:
        self.inv = inv
        self._dependents: dict[str, list[Edge]] = inv.dependents.by_owner

    def dependents(self, uid: str) -> list[Edge]:
        return list(self._dependents.get(uid, []))

    def blocking_dependents(self, uid: str) -> list[Edge]:
        """The dependents that keep ``uid``'s ``foregroundDeletion`` (the GC's rule)."""
        edges = self._dependents.get(uid, [])
        return decision.blocking_dependents(
            uid, ((e, (OwnerRef.from_dict(e.ref),)) for e in edges))

    def item_state(self, obj: Obj) -> decision.ItemState:
        """``obj`` as the GC's graph node would be: being deleted, deleting its dependents
        (observed deleting with foregroundDeletion), its dependents."""
        deps = self._dependents.get(uid_of(obj), [])
        return decision.ItemState(
            being_deleted=is_being_deleted(obj), deleting_dependents=is_deleting_dependents(obj),
            finalizers=tuple(finalizers_of(obj)), dependents=len(deps),
            dependent_deleting_dependents=any(is_deleting_dependents(e.dependent) for e in deps))

    def owners(self, obj: Obj) -> Iterator[tuple[dict[str, Any], Obj | None]]:
        for ref in owner_references_of(obj):
            yield ref, self.inv.by_uid(str(ref.get("uid") or ""))

    def cycles(self) -> list[list[Obj]]:
        """Ownership cycles (each once, starting from its smallest uid). Only an object
        that is an owner and has an owner in the inventory can be on one."""
        found: dict[tuple[str, ...], list[Obj]] = {}
        # the objects with a uid, in the inventory's order, without reading each (issue
        # 27): an object whose uid another one holds too is never ``by_uid``'s, so no walk
        # from it can close a cycle (``owner is path[0]``)
        dependents = self._dependents
        for uid, start in self.inv.uids():
            if uid in dependents and any(owner is not None for _, owner in self.owners(start)):
                self._walk(start, [start], found)
        return list(found.values())

    def _walk(self, obj: Obj, path: list[Obj], found: dict[tuple[str, ...], list[Obj]]) -> None:
        if len(path) > 32:
            return
        for _, owner in self.owners(obj):
            if owner is None:
                continue
            if owner is path[0]:
                uids = [uid_of(o) for o in path]
                first = uids.index(min(uids))
                rotated = path[first:] + path[:first]
                found.setdefault(tuple(uid_of(o) for o in rotated), rotated)
            elif all(owner is not o for o in path) and uid_of(owner) > uid_of(path[0]):
                self._walk(owner, [*path, owner], found)


def gc_decision(graph: OwnerGraph, obj: Obj, checks: list[RefCheck]) -> decision.Decision:
    """What the GC does with ``obj``: its own decision (``attemptToDeleteItem``)."""
    return decision.decide(graph.item_state(obj), [(c.owner_ref, c.lookup) for c in checks])
