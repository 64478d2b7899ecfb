"""From recorded changes to the plan's steps, order constraints and survivors.

Only objects that existed before the delete are reported (the simulation's own objects —
its nodes, leases, records — are not). Attribution: the garbage collector's actions are
matched with its DeletionRecords by uid and action, the other deleting controllers' (pod
GC ...) with their ``Deletion``s by uid; a pod's final deletion is the kubelet's; content
of a terminating namespace is deleted by the namespace controller;
an object whose last finalizer goes is removed by the API server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubegc.api.meta import (
    DELETED,
    FINALIZER_DELETE_DEPENDENTS,
    FINALIZER_ORPHAN_DEPENDENTS,
    finalizers_of,
    namespace_of,
    owner_references_of,
    uid_of,
)
from kubegc.api.types import Obj
from kubegc.component.deletions import NAMESPACE_DELETED, Deletion
from kubegc.controllers.garbagecollector.records import DeletionRecord, RecordAction
from kubegc.tools.model import ObjRef
from kubegc.tools.plan.recorder import Change
from kubegc.tools.plan.report import Constraint, Step, StepAction, Survivor

GC = "the garbage collector"
_RECORD_ACTIONS = {
    StepAction.DELETION_STARTED: "delete", StepAction.DELETED: "delete",
    StepAction.OWNER_REF_REMOVED: ("remove-dangling-refs", "orphan-patch"),
    StepAction.FINALIZER_REMOVED: "remove-finalizer",
    StepAction.OWNER_REF_UNBLOCKED: "unblock-patch",
}


def _refs(obj: Obj) -> dict[str, dict[str, Any]]:
    return {str(r.get("uid")): r for r in owner_references_of(obj)}


class Timeline:
    """Steps of one recorded deletion (see the module docstring)."""

    def __init__(self, changes: list[Change], before: dict[str, Obj], *, target_uid: str,
                 records: Sequence[DeletionRecord], deletions: Sequence[Deletion] = (),
                 assumed: dict[tuple[str, str], str] | None = None) -> None:
        self.assumed = assumed or {}
        self._assumed_by_uid: dict[str, list[str]] = {}
        for uid, finalizer in self.assumed:
            self._assumed_by_uid.setdefault(uid, []).append(finalizer)
        self.changes = [c for c in changes if uid_of(c.after) in before]
        self.before = before
        self.target_uid = target_uid
        self._records: dict[str, list[DeletionRecord]] = {}
        self._consumed: set[int] = set()  # records (by id) already matched with a step
        self._started: set[str] = set()  # uids whose deletionTimestamp step is recorded
        for rec in sorted(records, key=lambda r: r.time):  # stable: the GC's order
            self._records.setdefault(rec.object.uid, []).append(rec)
        self._deletions: dict[str, list[Deletion]] = {}
        for d in deletions:  # the namespace controller's: by the namespace rule below
            if d.reason != NAMESPACE_DELETED:
                self._deletions.setdefault(d.object.uid, []).append(d)
        self._deleting_ns = {str((c.after.get("metadata") or {}).get("name"))
                             for c in self.changes
                             if c.after.get("kind") == "Namespace"
                             and (c.after.get("metadata") or {}).get("deletionTimestamp")}
        self._refs_by_uid: dict[str, ObjRef] = {}
        self.steps: list[Step] = []
        self._build()

    def ref(self, obj: Obj) -> ObjRef:
        """``ObjRef.of(obj)``, made once per uid (a plan of 10,000 names each object often)."""
        uid = uid_of(obj)
        found = self._refs_by_uid.get(uid)
        if found is None:
            found = self._refs_by_uid[uid] = ObjRef.of(obj)
        return found

    def _build(self) -> None:
        for change in self.changes:
            for action, detail in _diff(change):
                self._add(change, action, detail)

    def _add(self, change: Change, action: StepAction, detail: str) -> None:
        obj = change.after
        uid = uid_of(obj)
        by, reason = self._attribute(uid, obj, action, detail)
        if action is StepAction.DELETION_STARTED:
            self._started.add(uid)
        self.steps.append(Step(len(self.steps) + 1, change.time, action, self.ref(obj), detail,
                               by, reason))

    def _attribute(self, uid: str, obj: Obj, action: StepAction, detail: str
                   ) -> tuple[str, str]:
        wanted = _RECORD_ACTIONS.get(action)
        names = (wanted,) if isinstance(wanted, str) else (wanted or ())
        if action is StepAction.DELETED and uid in self._started:
            names = ()  # the GC's delete started it; something else finished it
        for rec in self._records.get(uid, []):
            if rec.action.value in names and id(rec) not in self._consumed:
                self._consumed.add(id(rec))
                return GC, f"{rec.reason.value}: {rec.message}"
        if action is StepAction.DELETION_STARTED or (action is StepAction.DELETED
                                                     and uid not in self._started):
            by_other = self._deletions.get(uid)
            if by_other:
                d = by_other.pop(0)
                return d.deleter, f"{d.reason}: {d.message}"
        if action is StepAction.FINALIZER_REMOVED and (uid, detail) in self.assumed:
            return (f"{self.assumed[(uid, detail)]} (assumed: alive in the source, not "
                    "simulated)"), ""
        if action is StepAction.DELETED:
            for rec in self._records.get(uid, []):
                if rec.action is RecordAction.REMOVE_FINALIZER and id(rec) not in self._consumed:
                    self._consumed.add(id(rec))  # its last finalizer went: no update, a deletion
                    return ("the API server, once the garbage collector removed its last "
                            "finalizer", f"{rec.reason.value}: {rec.message}")
        removed = self._assumed_by_uid.get(uid, [])
        if action is StepAction.DELETED and removed:
            who = self.assumed[(uid, removed[0])]
            return (f"the API server, once {who} removed {', '.join(removed)} (assumed: alive "
                    "in the source, not simulated)"), ""
        if uid == self.target_uid and action in (StepAction.DELETION_STARTED,
                                                 StepAction.FINALIZER_ADDED):
            return "you (the delete request)", ""
        if action is StepAction.FINALIZER_REMOVED and detail in GC_FINALIZERS:
            return GC, ""
        if action is StepAction.FINALIZER_REMOVED and detail == "kubernetes":
            return "the namespace controller", ""
        if action in (StepAction.DELETION_STARTED, StepAction.DELETED) and (namespace_of(
                obj) in self._deleting_ns or obj.get("kind") == "Namespace"):
            return "the namespace controller", ""
        if action is StepAction.DELETED and obj.get("kind") == "Pod" and (
                obj.get("spec") or {}).get("nodeName"):
            return "the kubelet", ""
        if action is StepAction.DELETED:
            return "the API server (no finalizer left)", ""
        if action is StepAction.FINALIZER_ADDED:
            return "the API server (propagation policy)", ""
        return "", ""

    def deleted(self) -> list[ObjRef]:
        return [s.object for s in self.steps if s.action is StepAction.DELETED]

    def constraints(self) -> list[Constraint]:
        """What the GC guarantees about the order: a foreground owner goes after its
        blocking dependents — except through a reference the GC unblocked to break an
        ownership cycle (``unblocked``) or removed (the dependent had another owner that
        stays); an orphaning owner goes after its references are removed; a dependent the
        GC collected in the background goes after its owner."""
        deleted = {s.object.uid for s in self.steps if s.action is StepAction.DELETED}
        collected = {s.object.uid for s in self.steps if s.by == GC and s.action in (
            StepAction.DELETION_STARTED, StepAction.DELETED)}
        dropped = {(dep, owner) for dep, owner, _ in self.unblocked()} | self._removed_refs()
        fins: dict[str, set[str]] = {}
        for change in self.changes:
            fins.setdefault(uid_of(change.after), set()).update(finalizers_of(change.after))
        dependents: dict[str, list[tuple[Obj, dict[str, Any]]]] = {}
        for dep in self.before.values():
            for owner_uid, ref in _refs(dep).items():
                if owner_uid in deleted:
                    dependents.setdefault(owner_uid, []).append((dep, ref))
        out = []
        for owner_uid in deleted:
            owner = self.ref(self.before[owner_uid])
            seen = fins.get(owner_uid, set()) | set(finalizers_of(self.before[owner_uid]))
            for dep, ref in dependents.get(owner_uid, ()):
                dep_ref = self.ref(dep)
                kept = (dep_ref.uid, owner_uid) not in dropped
                if FINALIZER_DELETE_DEPENDENTS in seen:
                    if ref.get("blockOwnerDeletion") and dep_ref.uid in deleted and kept:
                        out.append(Constraint(dep_ref, "deleted", owner,
                                              "foreground: blockOwnerDeletion=true"))
                elif FINALIZER_ORPHAN_DEPENDENTS in seen:
                    if dep_ref.uid not in deleted:
                        out.append(Constraint(dep_ref, "ownerReference removed", owner,
                                              "orphan: references removed first"))
                elif (dep_ref.uid in deleted and dep_ref.uid in collected and kept
                      and self._only_deleted_owners(dep, deleted)
                      and namespace_of(dep) not in self._deleting_ns):  # else: anyone first
                    out.append(Constraint(owner, "deleted", dep_ref,
                                          "background: collected once its owner is gone"))
        return sorted(out, key=lambda c: (c.then, c.first))

    def _removed_refs(self) -> set[tuple[str, str]]:
        """(dependent uid, owner uid) of every reference a change removed."""
        out: set[tuple[str, str]] = set()
        for change in self.changes:
            if change.type != DELETED:
                after = _refs(change.after)
                out.update((uid_of(change.after), u) for u in _refs(change.before)
                           if u not in after)
        return out

    def unblocked(self) -> list[tuple[str, str, Step | None]]:
        """(dependent uid, owner uid, its step) of each reference the GC set to
        blockOwnerDeletion=false to unblock an ownership cycle (cf. ``unblockOwnerReferences``)."""
        steps = [s for s in self.steps if s.action is StepAction.OWNER_REF_UNBLOCKED]
        out: list[tuple[str, str, Step | None]] = []
        for change in self.changes:
            if change.type == DELETED:
                continue
            dep, new = uid_of(change.after), _refs(change.after)
            for uid, ref in _refs(change.before).items():
                if not ref.get("blockOwnerDeletion") or uid not in new or new[uid].get(
                        "blockOwnerDeletion"):
                    continue
                detail = f"{ref.get('kind')}/{ref.get('name')}"
                step = next((s for s in steps if s.object.uid == dep and s.detail == detail),
                            None)
                if step is not None:
                    steps.remove(step)
                out.append((dep, uid, step))
        return out

    def _only_deleted_owners(self, dep: Obj, deleted: set[str]) -> bool:
        return all(u in deleted for u in _refs(dep))

    def survivors(self, end: dict[str, Obj]) -> list[Survivor]:
        """Objects that lost a reference, or keep one to an owner this delete removed, and
        stay (not deleting at the end), with the owners that still keep them (none:
        orphaned) and the references to deleted owners the garbage collector never acts on
        (``dangling``: a cluster-scoped dependent of a namespaced owner)."""
        out = []
        deleted = {s.object.uid for s in self.steps if s.action is StepAction.DELETED}
        for uid, old in self.before.items():
            now = end.get(uid)
            if now is None or (now.get("metadata") or {}).get("deletionTimestamp"):
                continue  # gone, or going: it does not stay
            lost = [r for u, r in _refs(old).items() if u not in _refs(now)]
            dangling = [r for u, r in _refs(now).items() if u in deleted and u not in end]
            if not lost and not dangling:
                continue
            ns = namespace_of(old)
            kept = tuple(ObjRef.from_owner_ref(r, ns) for u, r in _refs(now).items()
                         if u in end)
            gone = tuple(self.ref(self.before[str(r.get("uid"))]) if str(r.get("uid"))
                         in self.before else ObjRef.from_owner_ref(r, ns) for r in dangling)
            out.append(Survivor(self.ref(old), tuple(ObjRef.from_owner_ref(r, ns) for r in lost),
                                kept, gone))
        return sorted(out, key=lambda s: s.object)


GC_FINALIZERS = (FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS)


def _diff(change: Change) -> list[tuple[StepAction, str]]:
    old, new = change.before, change.after
    if change.type == DELETED:
        return [(StepAction.DELETED, "")]
    out: list[tuple[StepAction, str]] = []
    old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
    if new_meta.get("deletionTimestamp") and not old_meta.get("deletionTimestamp"):
        grace = new_meta.get("deletionGracePeriodSeconds")
        fins = ", ".join(finalizers_of(new)) or "none"
        spec = (new.get("spec") or {}).get("finalizers") if new.get("kind") == "Namespace" else None
        out.append((StepAction.DELETION_STARTED, f"finalizers: {fins}"
                    + (f"; spec.finalizers: {', '.join(spec)}" if spec else "")
                    + (f"; grace period {grace}s" if grace else "")))
    old_f, new_f = finalizers_of(old), finalizers_of(new)
    out.extend((StepAction.FINALIZER_ADDED, f) for f in new_f if f not in old_f
               and not (new_meta.get("deletionTimestamp") and not old_meta.get(
                   "deletionTimestamp")))
    out.extend((StepAction.FINALIZER_REMOVED, f) for f in old_f if f not in new_f)
    old_spec = list((old.get("spec") or {}).get("finalizers") or []) if old.get(
        "kind") == "Namespace" else []
    new_spec = list((new.get("spec") or {}).get("finalizers") or []) if new.get(
        "kind") == "Namespace" else []
    out.extend((StepAction.FINALIZER_REMOVED, f) for f in old_spec if f not in new_spec)
    old_refs, new_refs = _refs(old), _refs(new)
    for uid, ref in old_refs.items():
        if uid not in new_refs:
            out.append((StepAction.OWNER_REF_REMOVED, f"{ref.get('kind')}/{ref.get('name')}"))
        elif ref.get("blockOwnerDeletion") and not new_refs[uid].get("blockOwnerDeletion"):
            out.append((StepAction.OWNER_REF_UNBLOCKED, f"{ref.get('kind')}/{ref.get('name')}"))
    return out


def order_violations(constraints: list[Constraint], changes: list[Change]) -> list[str]:
    """Constraints that the recorded ``changes`` (of any run) do not satisfy."""
    position: dict[tuple[str, str], int] = {}
    for i, change in enumerate(changes):
        uid = uid_of(change.after)
        if change.type == DELETED:
            position.setdefault((uid, "deleted"), i)
        for action, _ in _diff(change):
            if action is StepAction.OWNER_REF_REMOVED:
                position.setdefault((uid, "ownerReference removed"), i)
    out = []
    for c in constraints:
        first = position.get((c.first.uid, c.first_event))
        then = position.get((c.then.uid, "deleted"))
        if first is None or then is None or first > then:
            out.append(str(c))
    return out
