"""Outcomes that depend on the order in which the garbage collector takes dependents.

The garbage collector decides each dependent on its owners' state *when it gets to it*
(upstream ``attemptToDeleteItem``: classify the owners, then delete or patch), and it
takes the dependents of an owner in no promised order (upstream iterates a Go map; kubegc
in insertion order, with 20 workers). So when a delete reaches a dependent ``D`` that
has an owner ``W`` waiting for it in the foreground (blockOwnerDeletion=true) and
another owner ``S`` that this same delete starts deleting, two runs can differ:

* ``S`` is taken first: ``S`` waits too, no owner of ``D`` is solid, and ``D`` is deleted
  with its reference to ``W`` intact — ``W`` waits for ``D`` (if that reference blocks);
* ``D`` is taken first: ``S`` is still solid, so the garbage collector removes ``D``'s
  reference to ``W`` — ``W`` no longer waits for ``D``, and ``D`` then follows ``S``.

If ``D`` goes for good, both orders end the same. If it does not, ``D`` may instead be
deleted (or survive), and through a blocking reference ``W`` is deleted in one order and
hangs on ``D`` in the other, and so is every owner that waits for ``W`` in the foreground.
The simulation runs one order; ``order_dependent`` names the objects whose outcome the
other order could change, so that the plan says so instead of promising one.
"""

from __future__ import annotations

from typing import Any

from kubegc.api.meta import (
    FINALIZER_DELETE_DEPENDENTS,
    finalizers_of,
    is_being_deleted,
    owner_references_of,
    uid_of,
)
from kubegc.api.types import Obj
from kubegc.tools.model import ObjRef
from kubegc.tools.plan.report import StepAction
from kubegc.tools.plan.timeline import Timeline


def _refs(obj: Obj) -> dict[str, dict[str, Any]]:
    return {str(r.get("uid")): r for r in owner_references_of(obj)}


def order_dependent(timeline: Timeline) -> dict[str, str]:
    """uid -> why, for each object whose outcome depends on the order (module docstring)."""
    before = timeline.before
    started = {s.object.uid for s in timeline.steps
               if s.action in (StepAction.DELETION_STARTED, StepAction.DELETED)}
    # the target is deleting before the GC gets to anything: never solid when it does
    started -= {u for u, o in before.items() if is_being_deleted(o)} | {timeline.target_uid}
    deleted = {s.object.uid for s in timeline.steps if s.action is StepAction.DELETED}
    foreground = {uid_of(c.after) for c in timeline.changes
                  if FINALIZER_DELETE_DEPENDENTS in finalizers_of(c.after)}
    out: dict[str, str] = {}
    for dep_uid, dep in before.items():
        refs = _refs(dep)
        if dep_uid in deleted or len(refs) < 2:
            continue
        for waiting, ref in sorted(refs.items(), key=lambda r: not r[1].get("blockOwnerDeletion")):
            others = [u for u in refs if u != waiting and u in started]
            if waiting not in foreground or not others:
                continue
            dep_ref, other = ObjRef.of(dep), _name(before, others[0])
            out.setdefault(dep_uid, (
                f"{dep_ref} is deleted, or loses its reference to {_name(before, waiting)} and "
                f"stays, depending on whether the garbage collector gets to it before or after "
                f"{other} starts deleting"))
            if ref.get("blockOwnerDeletion"):
                _waits_on(before, foreground, waiting, dep_ref, out)
    return out


def _waits_on(before: dict[str, Obj], foreground: set[str], uid: str, holder: ObjRef,
              out: dict[str, str]) -> None:
    """``uid`` and the foreground owners waiting for it may hang on ``holder``."""
    todo = [uid]
    while todo:
        current = todo.pop()
        if current in out or current not in before:
            continue
        out[current] = (f"{_name(before, current)} is deleted or stays Terminating held by "
                        f"{holder}, depending on the order the garbage collector takes "
                        f"{holder}'s owners in")
        todo.extend(u for u, r in _refs(before[current]).items()
                    if r.get("blockOwnerDeletion") and u in foreground)


def _name(before: dict[str, Obj], uid: str) -> str:
    obj = before.get(uid)
    return str(ObjRef.of(obj)) if obj is not None else f"uid {uid}"
