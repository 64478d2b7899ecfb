"""Objects stuck deleting: the seed's four questions, answered at once.

For every object whose deletionTimestamp is more than ``stuck_after`` seconds in the past
(namespaces are ``namespaces.py``'s): (1) when deletion was asked for, (2) which
finalizers remain, (3) who removes each and whether it is alive (``finalizers.py``), and
(4) for ``foregroundDeletion``, the dependents with blockOwnerDeletion=true that are
still there — followed down to the leaves that actually hold the owner, each with its
reason (its own finalizer, the kubelet, a garbage collector that has not acted, ...).
"""

from __future__ import annotations

from kubegc.api.clock import format_time
from kubegc.api.meta import (
    FINALIZER_DELETE_DEPENDENTS,
    FINALIZER_ORPHAN_DEPENDENTS,
    finalizers_of,
    is_being_deleted,
    uid_of,
)
from kubegc.api.types import Obj
from kubegc.tools.doctor.context import Context, remove_finalizer_command
from kubegc.tools.doctor.findings import BlockingNode, Deletion, Finding, FindingKind, Severity
from kubegc.tools.finalizers import Alive, Remover, controller_manager_evidence
from kubegc.tools.model import ObjRef, human_duration
from kubegc.tools.ownership import RefState, check_refs
from kubegc.tools.state import deletion_timing

GC = "the garbage collector (kube-controller-manager)"
MAX_DEPTH = 16


def stuck_findings(ctx: Context) -> list[Finding]:
    out = []
    for obj in ctx.inv.objects:
        if obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1":
            continue
        timing = deletion_timing(obj, ctx.inv.now)
        if timing is None or timing.overdue < ctx.options.stuck_after:
            continue
        out.append(stuck_finding(ctx, obj))
    return out


def stuck_finding(ctx: Context, obj: Obj) -> Finding:
    ref = ObjRef.of(obj)
    timing = deletion_timing(obj, ctx.inv.now)
    if timing is None:
        raise ValueError(f"{ref} is not being deleted")
    fins = finalizers_of(obj)
    removers = ctx.removers(obj)
    if not fins and obj.get("kind") == "Pod" and (obj.get("spec") or {}).get("nodeName"):
        removers = [ctx.kubelet(obj)]
    blocking = blocking_nodes(ctx, obj, {uid_of(obj)}) if FINALIZER_DELETE_DEPENDENTS in fins \
        else []
    deletion = Deletion(timing.deletion_timestamp, format_time(timing.requested),
                        timing.deleting_for, timing.grace_seconds)
    facts = [f"deletionTimestamp {timing.deletion_timestamp}, deleting for "
             f"{human_duration(timing.deleting_for)}"
             + (f" (requested {format_time(timing.requested)}, grace period "
                f"{timing.grace_seconds}s)" if timing.grace_seconds else ""),
             "finalizers: " + (", ".join(fins) if fins else "none")]
    if FINALIZER_DELETE_DEPENDENTS in fins:
        facts.append(f"blocking dependents (blockOwnerDeletion=true) left: {len(blocking)}")
    if FINALIZER_ORPHAN_DEPENDENTS in fins:
        left = ctx.graph.dependents(uid_of(obj))
        facts.append(f"dependents still referencing it (to orphan): {len(left)}")
    return Finding(
        FindingKind.STUCK_DELETION, Severity.ERROR, ref,
        f"{ref} has been Terminating for {human_duration(timing.deleting_for)}",
        next=_next(obj, removers, blocking), fix=_fix(obj, removers, blocking),
        facts=facts, deletion=deletion, removers=removers, blocking=blocking,
        related=[leaf.object for b in blocking for leaf in b.leaves()])


def blocking_nodes(ctx: Context, owner: Obj, seen: set[str]) -> list[BlockingNode]:
    """Dependents of ``owner`` with blockOwnerDeletion=true, each explained."""
    out = []
    for edge in sorted(ctx.graph.blocking_dependents(uid_of(owner)),
                       key=lambda e: ObjRef.of(e.dependent)):
        dep = edge.dependent
        if uid_of(dep) in seen or len(seen) > MAX_DEPTH:
            out.append(BlockingNode(ObjRef.of(dep), "-", "ownership cycle: already shown above"))
            continue
        out.append(blocking_node(ctx, dep, owner, seen | {uid_of(dep)}))
    return out


def blocking_node(ctx: Context, dep: Obj, owner: Obj, seen: set[str]) -> BlockingNode:
    ref = ObjRef.of(dep)
    if not is_being_deleted(dep):
        return _not_deleting(ctx, dep, owner)
    timing = deletion_timing(dep, ctx.inv.now)
    state = "Terminating" + (f" for {human_duration(timing.deleting_for)}" if timing else "")
    fins = finalizers_of(dep)
    removers = ctx.removers(dep, skip=(FINALIZER_DELETE_DEPENDENTS,))
    children = blocking_nodes(ctx, dep, seen) if FINALIZER_DELETE_DEPENDENTS in fins else []
    reasons = []
    if children:
        reasons.append("it is deleting its own dependents in the foreground")
    elif FINALIZER_DELETE_DEPENDENTS in fins:
        reasons.append("foregroundDeletion with no blocking dependent left: the garbage "
                       "collector should remove it now")
        removers = [Remover(FINALIZER_DELETE_DEPENDENTS, GC, "built-in",
                            "once no dependent with blockOwnerDeletion=true is left", "",
                            controller_manager_evidence(ctx.inv)), *removers]
    if [r for r in removers if r.finalizer != FINALIZER_DELETE_DEPENDENTS]:
        names = ", ".join(r.finalizer for r in removers if r.finalizer !=
                          FINALIZER_DELETE_DEPENDENTS)
        reasons.append(f"its own finalizer {names} is still there")
    if not fins and dep.get("kind") == "Pod" and (dep.get("spec") or {}).get("nodeName"):
        removers = [ctx.kubelet(dep)]
        reasons.append("graceful termination: waiting for " + removers[0].who)
    if not reasons:
        reasons.append("no finalizer left: it should already be gone (a stale read?)")
    return BlockingNode(ref, state, "; ".join(reasons), removers, children, source=dep)


def _not_deleting(ctx: Context, dep: Obj, owner: Obj) -> BlockingNode:
    ref = ObjRef.of(dep)
    checks = check_refs(ctx.inv, dep)
    solid = [c for c in checks if c.state is RefState.OK]
    gc = Remover("(not deleted yet)", GC, "built-in",
                 f"when it processes the foreground deletion of {ObjRef.of(owner).short}", "",
                 controller_manager_evidence(ctx.inv))
    if solid:
        others = ", ".join(ObjRef.from_owner_ref(c.ref, "").short for c in solid)
        why = (f"it has another owner that stays ({others}): the garbage collector only removes "
               f"its reference to {ObjRef.of(owner).short}, which then no longer blocks")
    else:
        why = ("not deleted yet: the garbage collector deletes it while its owner waits; if it "
               "stays, the garbage collector is not running or cannot delete it")
    return BlockingNode(ref, "not being deleted", why, [gc], source=dep)


def _next(obj: Obj, removers: list[Remover], blocking: list[BlockingNode]) -> list[str]:
    ref = ObjRef.of(obj)
    parts = []
    leaves = [leaf for b in blocking for leaf in b.leaves()]
    if FINALIZER_DELETE_DEPENDENTS in finalizers_of(obj):
        if leaves:
            held = ", ".join(str(leaf.object) for leaf in leaves)
            parts.append(f"foregroundDeletion stays until its blocking dependents are gone "
                         f"(held at {held}); then the garbage collector removes it")
        else:
            parts.append("no blocking dependent is left: the garbage collector should remove "
                         "foregroundDeletion now")
    for r in removers:
        if r.finalizer == FINALIZER_DELETE_DEPENDENTS:
            continue
        if r.alive is Alive.YES:
            parts.append(f"{r.finalizer}: {r.who} is alive and removes it {r.removes_when}")
        elif r.alive is Alive.NO:
            parts.append(f"{r.finalizer}: {r.who} is not running, so {ref.short} stays "
                         "Terminating until it runs again")
        else:
            parts.append(f"{r.finalizer}: {ref.short} stays Terminating until {r.who} removes "
                         "it; nothing shows whether that runs")
    return parts or [f"{ref.short} should disappear at once"]


def _fix(obj: Obj, removers: list[Remover], blocking: list[BlockingNode]) -> list[str]:
    parts = []
    for leaf in [leaf for b in blocking for leaf in b.leaves()]:
        parts.extend(leaf_fix(leaf))
    for r in removers:
        text = finalizer_fix(obj, r)
        if text:
            parts.append(text)
    if not parts:
        parts.append("nothing to do but wait: the garbage collector is processing it"
                     if finalizers_of(obj) else "re-read it: it may already be gone")
    return parts


def leaf_fix(leaf: BlockingNode) -> list[str]:
    """How to release the leaf that holds a foreground deletion."""
    if leaf.source is None or not is_being_deleted(leaf.source):
        who = leaf.removers[0] if leaf.removers else None
        alive = f" ({who.who}: {who.alive.value})" if who else ""
        return [f"{leaf.object.short} is not being deleted{alive}: make sure the garbage "
                "collector runs; it deletes the dependents of an owner deleted in the "
                "foreground"]
    out = []
    for r in leaf.removers:
        text = finalizer_fix(leaf.source, r)
        if text:
            out.append(f"{leaf.object.short} holds it: {text}")
    return out or [f"{leaf.object.short}: {leaf.holds_because}"]


def finalizer_fix(obj: Obj, r: Remover) -> str | None:
    """The safe fix for one finalizer (None for the garbage collector's own, which the
    blocking chain explains)."""
    if r.finalizer in (FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN_DEPENDENTS):
        return None
    if r.alive is Alive.YES:
        return f"{r.finalizer}: nothing to do but wait; if it stays, read the logs of {r.who}"
    if r.finalizer.startswith("("):
        ref = ObjRef.of(obj)
        return (f"bring {r.who} back (if the node is gone for good, the pod garbage collector "
                "force-deletes its pods). Forcing it now, `kubectl delete pod "
                f"{ref.name} -n {ref.namespace} --grace-period=0 --force`, skips {r.skips}")
    return (f"{r.finalizer}: start (or scale up) {r.who}: it does its clean-up and removes "
            f"the finalizer. Only if it is gone for good, remove the finalizer by hand: "
            f"{remove_finalizer_command(obj, r.finalizer)} — this skips {r.skips}")
