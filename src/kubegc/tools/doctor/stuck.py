"""Objects being deleted: the seed's four questions, answered at once.

Every object with a deletionTimestamp (namespaces are ``namespaces.py``'s) is a finding,
whatever its age: ``Deleting`` (info) while it has been deleting for less than
``stuck_after`` seconds (for pods: counted from the end of the grace period), then
``StuckDeletion`` — a warning, or an error when the evidence says nothing will release it
(whoever must remove a finalizer on its path is not running, or the garbage collector
cannot decide about a dependent it waits for). Each answers (1) when deletion was asked
for, (2) which finalizers remain, (3) who removes each and whether it is alive
(``finalizers.py``), and (4) for ``foregroundDeletion``, the dependents with
blockOwnerDeletion=true that are still there, followed down to the leaves that actually
hold the owner. What the garbage collector does with a dependent that is not being
deleted is its own decision (``ownership.gc_decision``). Each leaf, and each finalizer of
the object's own, is a ``Cause``; ``causes.py`` groups the findings that share one, and
``removers.py`` words each finalizer's remover (the cause, what happens next, the fix).

An inventory that may not hold every kind (a dump; a list the cluster refused) cannot
prove that no blocking dependent is left: then the finding says the dependents are not in
the dump (or were not read) instead of "none left".
"""

from __future__ import annotations

from kubegc.api.clock import format_time
from kubegc.api.meta import (
    FINALIZER_DELETE_DEPENDENTS,
    FINALIZER_ORPHAN_DEPENDENTS,
    GC_FINALIZERS,
    DeletionPropagation,
    finalizers_of,
    is_being_deleted,
    uid_of,
)
from kubegc.api.types import Obj
from kubegc.tools.doctor.chains import (
    CRD_CLEANUP,
    crd_fix,
    crd_holders,
    crd_next,
    holder_causes,
    unread_instances_cause,
)
from kubegc.tools.doctor.context import Context
from kubegc.tools.doctor.findings import (
    BlockingNode,
    Cause,
    CauseDetail,
    Deletion,
    Finding,
    FindingKind,
    severity_of_deletion,
)
from kubegc.tools.doctor.removers import finalizer_fix, remover_cause, remover_next
from kubegc.tools.finalizers import Alive, Remover, controller_manager_evidence
from kubegc.tools.model import ObjRef, human_duration
from kubegc.tools.ownership import Action, RefState, gc_decision
from kubegc.tools.state import deleting_for, deletion_timing

GC = "the garbage collector (kube-controller-manager)"
MAX_DEPTH = 16
#: The kinds a built-in owner's dependents have (what a dump must hold to show them).
DEPENDENT_KINDS: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {
    ("apps", "Deployment"): (("apps", "ReplicaSet"),),
    ("apps", "ReplicaSet"): (("", "Pod"),),
    ("", "ReplicationController"): (("", "Pod"),),
    ("batch", "Job"): (("", "Pod"),),
    ("batch", "CronJob"): (("batch", "Job"),),
    ("apps", "StatefulSet"): (("", "Pod"), ("apps", "ControllerRevision")),
    ("apps", "DaemonSet"): (("", "Pod"), ("apps", "ControllerRevision")),
    ("", "Service"): (("", "Endpoints"), ("discovery.k8s.io", "EndpointSlice")),
}


def stuck_findings(ctx: Context) -> list[Finding]:
    return [stuck_finding(ctx, obj) for obj in ctx.inv.deleting
            if not (obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1")]


def stuck_finding(ctx: Context, obj: Obj) -> Finding:
    ref = ObjRef.of(obj)
    timing = deletion_timing(obj, ctx.inv.now)
    if timing is None:
        raise ValueError(f"{ref} is not being deleted")
    young = timing.overdue < ctx.options.stuck_after
    fins = finalizers_of(obj)
    removers = ctx.removers(obj)
    if not fins and obj.get("kind") == "Pod" and (obj.get("spec") or {}).get("nodeName"):
        removers = [ctx.kubelet(obj)]
    blocking = blocking_nodes(ctx, obj, {uid_of(obj)}) if FINALIZER_DELETE_DEPENDENTS in fins \
        else []
    deletion = Deletion(timing.deletion_timestamp, format_time(timing.requested),
                        timing.deleting_for, timing.grace_seconds)
    facts = [f"deletionTimestamp {timing.deletion_timestamp}, {deleting_for(timing)}"
             + (f" (requested {format_time(timing.requested)}, grace period "
                f"{timing.grace_seconds}s)" if timing.grace_seconds else ""),
             "finalizers: " + (", ".join(fins) if fins else "none")]
    unread = unread_dependent_kinds(ctx, obj) if not blocking else []
    if FINALIZER_DELETE_DEPENDENTS in fins:
        facts.append("blocking dependents (blockOwnerDeletion=true) left: "
                     + (str(len(blocking)) if blocking or not unread
                        else f"none read — {_unread_text(ctx, unread)}"))
    if FINALIZER_ORPHAN_DEPENDENTS in fins:
        left = ctx.graph.dependents(uid_of(obj))
        facts.append(f"dependents still referencing it (to orphan): {len(left)}")
    causes = _causes(ctx, obj, removers, blocking, unread)
    kind = FindingKind.DELETING if young else FindingKind.STUCK_DELETION
    title = (f"{ref} has been Terminating for {human_duration(timing.deleting_for)}"
             + (f" (less than --stuck-after {human_duration(ctx.options.stuck_after)})"
                if young else ""))
    return Finding(
        kind, severity_of_deletion(young, causes), ref, title,
        next=_next(ctx, obj, removers, blocking, unread),
        fix=_fix(ctx, obj, removers, blocking, unread),
        facts=facts, deletion=deletion, removers=removers, blocking=blocking,
        related=[leaf.object for b in blocking for leaf in b.leaves()]
        + [ObjRef.of(o) for o in crd_holders(ctx, obj)], causes=causes)


def unread_dependent_kinds(ctx: Context, owner: Obj) -> list[str]:
    """Kinds whose objects could be ``owner``'s dependents but that the inventory may not
    hold: for a well-known owner kind, its dependents' kinds the inventory has none of
    (a dump) or did not read; for any other owner in a dump, "every kind it lacks"."""
    inv = ctx.inv
    key = (str(owner.get("apiVersion") or "").rpartition("/")[0], str(owner.get("kind")))
    known = DEPENDENT_KINDS.get(key)
    if known is None:
        return ["(kinds not in the dump)"] if inv.dump else []
    return [kind if not group else f"{kind}.{group}" for group, kind in known
            if not inv.may_hold(group, kind)]


def _unread_text(ctx: Context, unread: list[str]) -> str:
    if unread == ["(kinds not in the dump)"]:
        return "its dependents may be of kinds the dump does not hold"
    what = ", ".join(unread)
    return (f"not in the dump (it holds no {what})" if ctx.inv.dump
            else f"not read ({what} could not be listed)")


def blocking_nodes(ctx: Context, owner: Obj, seen: set[str]) -> list[BlockingNode]:
    """Dependents of ``owner`` with blockOwnerDeletion=true, each explained."""
    out = []
    for edge in sorted(ctx.graph.blocking_dependents(uid_of(owner)),
                       key=lambda e: ObjRef.of(e.dependent)):
        dep = edge.dependent
        if uid_of(dep) in seen or len(seen) > MAX_DEPTH:
            node = BlockingNode(ObjRef.of(dep), "-", "ownership cycle: already shown above")
            node.causes[Cause("ownership cycle", node.object)] = CauseDetail(
                ["a foreground deletion in a cycle makes the garbage collector set "
                 "blockOwnerDeletion=false on it, so that the cycle does not wait forever"],
                ["break the cycle: an object should not (indirectly) own its owner"])
            out.append(node)
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
    unread = unread_dependent_kinds(ctx, dep) if not children else []
    reasons = []
    if children:
        reasons.append("it is deleting its own dependents in the foreground")
    elif FINALIZER_DELETE_DEPENDENTS in fins and unread:
        reasons.append(f"foregroundDeletion; its blocking dependents are "
                       f"{_unread_text(ctx, unread)}")
    elif FINALIZER_DELETE_DEPENDENTS in fins:
        reasons.append("foregroundDeletion with no blocking dependent left: the garbage "
                       "collector should remove it now")
        removers = [Remover(FINALIZER_DELETE_DEPENDENTS, GC, "built-in",
                            "once no dependent with blockOwnerDeletion=true is left", "",
                            controller_manager_evidence(ctx.inv)), *removers]
    own = [r for r in removers if r.finalizer != FINALIZER_DELETE_DEPENDENTS]
    if own:
        reasons.append(f"its own finalizer {', '.join(r.finalizer for r in own)} is still "
                       "there")
    if not fins and dep.get("kind") == "Pod" and (dep.get("spec") or {}).get("nodeName"):
        removers = [ctx.kubelet(dep)]
        reasons.append("graceful termination: waiting for " + removers[0].who)
    if not reasons:
        reasons.append("no finalizer left: it should already be gone (a stale read?)")
    node = BlockingNode(ref, state, "; ".join(reasons), removers, children, source=dep)
    if not children:
        node.causes.update(_causes(ctx, dep, removers, [], unread))
    return node


def _not_deleting(ctx: Context, dep: Obj, owner: Obj) -> BlockingNode:
    """A blocking dependent not being deleted yet: what the garbage collector decides for
    it, now that its owner waits (its own decision core)."""
    ref = ObjRef.of(dep)
    checks = ctx.checks(dep)
    made = gc_decision(ctx.graph, dep, checks)
    owner_ref = ObjRef.of(owner).short
    gc = Remover("(not deleted yet)", GC, "built-in",
                 f"when it processes the foreground deletion of {owner_ref}", "",
                 controller_manager_evidence(ctx.inv))
    dead = gc.alive is Alive.NO
    if made.action is Action.REMOVE_REFERENCES:
        solid = [c for c in checks if c.state is RefState.OK]
        others = ", ".join(ObjRef.from_owner_ref(c.ref, "").short for c in solid)
        why = (f"it has another owner that stays ({others}): the garbage collector only removes "
               f"its reference to {owner_ref}, which then no longer blocks")
    elif made.action is Action.DELETE:
        why = ("not deleted yet: the garbage collector deletes it"
               + (" in the foreground" if made.policy is DeletionPropagation.FOREGROUND else "")
               + " while its owner waits; if it stays, the garbage collector is not running "
               "or cannot delete it")
    elif made.action is Action.RETRY:
        stopped = made.classified.stopped_at if made.classified else None
        what = f"{stopped.kind}/{stopped.name}" if stopped else "an owner"
        why = (f"the garbage collector cannot decide about it: it cannot look up {what} (a "
               "kind it cannot map, or an owner that was not read), so it retries and never "
               f"deletes it; {owner_ref} waits until that reference is fixed")
        dead = True
    elif made.action is Action.NEVER:
        why = ("a cluster-scoped object naming a namespaced owner: the garbage collector never "
               f"collects it, so {owner_ref} waits until the reference is removed")
        dead = True
    else:
        why = (f"the garbage collector keeps it and does not remove its reference to "
               f"{owner_ref} ({made.action.value})")
    node = BlockingNode(ref, "not being deleted", why, [gc], source=dep)
    if made.action in (Action.RETRY, Action.NEVER):  # its own broken reference
        node.causes[Cause("blocking dependent the garbage collector cannot decide about",
                          ref)] = CauseDetail([why], leaf_fix(node, ctx), dead=True, at=[ref])
    else:
        node.causes[Cause(GC_NOT_ACTED)] = CauseDetail(
            ["the garbage collector deletes the blocking dependents (or removes their "
             "reference) while their owners wait; these are still there"],
            ["make sure the garbage collector runs: it acts on the dependents of an owner "
             "deleted in the foreground within seconds"], dead=dead, at=[ref])
    return node


GC_NOT_ACTED = "blocking dependents the garbage collector has not deleted"


def _causes(ctx: Context, obj: Obj, removers: list[Remover], blocking: list[BlockingNode],
            unread: list[str]) -> dict[Cause, CauseDetail]:
    """What holds ``obj``: the leaves of its blocking chain, and its own finalizers
    (or the kubelet) other than the garbage collector's."""
    ref = ObjRef.of(obj)
    out: dict[Cause, CauseDetail] = {}
    for leaf in (leaf for b in blocking for leaf in b.leaves()):
        for cause, detail in leaf.causes.items():
            if cause in out:
                out[cause].merge(detail)
            else:
                out[cause] = detail.copy()
    fins = finalizers_of(obj)
    holders = crd_holders(ctx, obj)
    unread_instances = unread_instances_cause(ctx, obj)
    for r in removers:
        if r.finalizer == CRD_CLEANUP and holders:  # held by its instances: theirs
            for cause, detail in holder_causes(ctx, holders).items():
                out.setdefault(cause, detail)
        elif r.finalizer == CRD_CLEANUP and unread_instances is not None:
            out[unread_instances[0]] = unread_instances[1]
        elif r.finalizer not in GC_FINALIZERS:
            cause, detail = remover_cause(obj, r, ctx.inv.now)
            out[cause] = detail
    if FINALIZER_DELETE_DEPENDENTS in fins and not blocking:
        if unread:
            where = "not in the dump" if ctx.inv.dump else "not read"
            out[Cause(f"foregroundDeletion whose blocking dependents are {where}")] = \
                CauseDetail(
                    [f"whether a blocking dependent is left cannot be told: {ref.short}'s are "
                     f"{_unread_text(ctx, unread)}"],
                    ["read the cluster itself (or a dump with every kind) to see what holds "
                     "it"], at=[ref])
        else:
            gc = controller_manager_evidence(ctx.inv)
            out[Cause("foregroundDeletion the garbage collector has not removed")] = \
                CauseDetail(["no blocking dependent is left: the garbage collector removes "
                             "foregroundDeletion now"],
                            ["wait: ends within seconds, when the garbage collector removes "
                             "foregroundDeletion; if it stays, make sure the garbage "
                             "collector runs"],
                            dead=any(e.alive is Alive.NO for e in gc), at=[ref])
    if FINALIZER_ORPHAN_DEPENDENTS in fins:
        out[Cause("orphan finalizer: the garbage collector is orphaning dependents")] = \
            CauseDetail(["the garbage collector removes the owner's references from its "
                         "dependents, then the orphan finalizer"],
                        ["wait: ends when the garbage collector has removed the owner's "
                         "references from its dependents, within seconds; if it stays, make "
                         "sure the garbage collector runs"], at=[ref])
    return out


def _next(ctx: Context, obj: Obj, removers: list[Remover], blocking: list[BlockingNode],
          unread: list[str]) -> list[str]:
    ref = ObjRef.of(obj)
    parts = []
    leaves = [leaf for b in blocking for leaf in b.leaves()]
    if FINALIZER_DELETE_DEPENDENTS in finalizers_of(obj):
        if leaves:
            held = ", ".join(str(leaf.object) for leaf in leaves)
            parts.append(f"foregroundDeletion stays until its blocking dependents are gone "
                         f"(held at {held}); then the garbage collector removes it")
        elif unread:
            parts.append("whether a blocking dependent is left cannot be told: they are "
                         f"{_unread_text_plain(unread)}")
        else:
            parts.append("no blocking dependent is left: the garbage collector should remove "
                         "foregroundDeletion now")
    chained = crd_next(ctx, obj)
    parts.extend(chained)
    for r in removers:
        if r.finalizer != FINALIZER_DELETE_DEPENDENTS and not (
                chained and r.finalizer == CRD_CLEANUP):
            parts.extend(remover_next(obj, r, ctx.inv.now))
    return parts or [f"{ref.short} should disappear at once"]


def _unread_text_plain(unread: list[str]) -> str:
    return "of kinds not read (" + ", ".join(unread) + ")"


def _fix(ctx: Context, obj: Obj, removers: list[Remover], blocking: list[BlockingNode],
         unread: list[str]) -> list[str]:
    parts = []
    for leaf in [leaf for b in blocking for leaf in b.leaves()]:
        parts.extend(leaf_fix(leaf, ctx))
    chained = crd_fix(ctx, obj)
    unread_instances = unread_instances_cause(ctx, obj)
    if unread_instances is not None:
        chained = list(unread_instances[1].fix)
    parts.extend(chained)
    for r in removers:
        text = None if chained and r.finalizer == CRD_CLEANUP else \
            finalizer_fix(obj, r, ctx.inv.now)
        if text:
            parts.append(text)
    if not parts and unread and FINALIZER_DELETE_DEPENDENTS in finalizers_of(obj):
        parts.append("read the cluster itself (or a dump with every kind) to see what holds it")
    if not parts:
        parts.append("wait: the garbage collector is processing it (seconds)"
                     if finalizers_of(obj) else "re-read it: it may already be gone")
    return parts


def leaf_fix(leaf: BlockingNode, ctx: Context | None = None) -> list[str]:
    """How to release the leaf that holds a foreground deletion."""
    if leaf.source is None or not is_being_deleted(leaf.source):
        who = leaf.removers[0] if leaf.removers else None
        alive = (f" ({who.who}: {who.alive_at(ctx.inv.now if ctx else None)})"
                 if who else "")
        if "cannot decide" in leaf.holds_because or "never collects" in leaf.holds_because:
            return [f"{leaf.object.short}: fix or remove its broken owner reference (see its "
                    "reference finding); the garbage collector then decides about it"]
        return [f"{leaf.object.short} is not being deleted{alive}: make sure the garbage "
                "collector runs; it deletes the dependents of an owner deleted in the "
                "foreground"]
    out = []
    for r in leaf.removers:
        text = finalizer_fix(leaf.source, r, ctx.inv.now if ctx else None)
        if text:
            out.append(f"{leaf.object.short} holds it: {text}")
    return out or [f"{leaf.object.short}: {leaf.holds_because}"]
