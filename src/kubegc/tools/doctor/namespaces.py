"""Namespaces being deleted: their conditions, the content left, and the finalizers that
hold that content (cf. the namespace controller's ``NamespaceFinalizersRemaining`` and
``NamespaceContentRemaining`` conditions, pkg/controller/namespace/deletion).
``DeletingNamespace`` (info) for less than ``stuck_after`` seconds, then ``StuckNamespace``.

The namespace controller deletes everything in a terminating namespace and removes the
``kubernetes`` spec finalizer once nothing is left; what keeps a namespace is almost
always an object inside with a finalizer nobody removes. The fix is therefore always on
the content (or on an admission webhook that refuses its DELETEs: ``webhooks.py``), never
``/finalize`` on the namespace (that drops the records of the objects
inside without their controllers' clean-up).

The order is the cluster's version's (docs/versions.md): from 1.33 (``OrderedNamespaceDeletion``,
KEP-5080) the pods go first and nothing else is deleted while one remains, so the other
content waits for the pods, which are then what to look at; before 1.33 everything is
deleted at once. A dump says no version: its content then tells (pods being deleted next
to content that is not yet).
"""

from __future__ import annotations

from collections import Counter

from kubegc.api.clock import format_time
from kubegc.api.features import ORDERED_NAMESPACE_DELETION, FeatureGate
from kubegc.api.meta import finalizers_of, is_being_deleted
from kubegc.api.types import Obj
from kubegc.tools.doctor.apiservices import api_service_causes, discovery_failure
from kubegc.tools.doctor.chains import finalizer_causes
from kubegc.tools.doctor.context import Context
from kubegc.tools.doctor.findings import (
    Cause,
    CauseDetail,
    Deletion,
    Finding,
    FindingKind,
    severity_of_deletion,
)
from kubegc.tools.doctor.webhooks import webhook_causes
from kubegc.tools.finalizers import Alive, Remover, who_removes
from kubegc.tools.model import ObjRef, group_of, human_duration
from kubegc.tools.state import deletion_timing


def namespace_findings(ctx: Context) -> list[Finding]:
    out = []
    for ns in ctx.inv.of_kind("", "Namespace"):
        if deletion_timing(ns, ctx.inv.now) is not None:
            out.append(namespace_finding(ctx, ns))
    return out


def _resource_name(ctx: Context, obj: Obj) -> str:
    """``deployments.apps``, as the namespace controller's conditions name resources."""
    group = group_of(obj)
    kind = str(obj.get("kind") or "")
    res = ctx.inv.resource_for_kind(group, kind)
    return (res.resource if res is not None else kind.lower()) + (f".{group}" if group else "")


def namespace_finding(ctx: Context, ns: Obj) -> Finding:
    ref = ObjRef.of(ns)
    name = ref.name
    timing = deletion_timing(ns, ctx.inv.now)
    if timing is None:
        raise ValueError(f"namespace {name} is not being deleted")
    content = [o for o in ctx.inv.in_namespace(name) if o.get("kind") != "Event"]
    by_kind = Counter(_resource_name(ctx, o) for o in content)
    held: Counter[str] = Counter()
    holders: list[Obj] = []
    for obj in content:
        fins = finalizers_of(obj)
        held.update(fins)
        if fins:
            holders.append(obj)
    spec_fins = [str(f) for f in (ns.get("spec") or {}).get("finalizers") or []]
    removers = [who_removes(f, ns, ctx.inv, ctx.options.mapping)
                for f in spec_fins + finalizers_of(ns)]
    facts = [f"deletionTimestamp {timing.deletion_timestamp} "
             f"(Terminating for {human_duration(timing.deleting_for)})",
             "spec.finalizers: " + (", ".join(spec_fins) or "none")
             + "; metadata.finalizers: " + (", ".join(finalizers_of(ns)) or "none")]
    for cond in (ns.get("status") or {}).get("conditions") or []:
        if cond.get("status") == "True":
            facts.append(f"condition {cond.get('type')}: {cond.get('message', '')}")
    if ctx.inv.namespace and ctx.inv.namespace != name:
        facts.append("content not read (the doctor read another namespace only)")
    else:
        facts.append("content left: " + (", ".join(f"{k} {n}" for k, n in sorted(
            by_kind.items())) or "none"))
        if held:
            facts.append("finalizers on that content: " + ", ".join(
                f"{f} in {n} object{'s' if n > 1 else ''}" for f, n in sorted(held.items())))
    next_steps, fix = _advice(ctx, name, removers, holders)
    pods_first = _pods_first(ctx, content)
    if pods_first:
        facts.append(pods_first[0])
        next_steps.insert(0, pods_first[1])
    webhooks = webhook_causes(ctx, ns)
    for cause, detail in webhooks.items():
        next_steps.insert(0, detail.next[0])
        fix[:0] = [f"{cause.what}: {step}" for step in detail.fix] + [
            f"{detail.by_hand}: {command}" for command in detail.commands]
    # an unavailable aggregated API comes first: nothing is finalized before discovery works
    unavailable = api_service_causes(ctx.inv, ns)
    for detail in unavailable.values():
        next_steps.insert(0, detail.next[0])
        fix[:0] = detail.fix
    if not unavailable and discovery_failure(ns) is not None:
        next_steps.insert(0, "the namespace controller retries discovery; the namespace "
                             "goes once every group can be discovered")
    causes = {**unavailable, **webhooks, **_causes(ctx, ns, removers, holders,
                                                   held_otherwise=bool(webhooks or unavailable))}
    young = timing.overdue < ctx.options.stuck_after
    return Finding(FindingKind.DELETING_NAMESPACE if young else FindingKind.STUCK_NAMESPACE,
                   severity_of_deletion(young, causes), ref,
                   f"namespace {name} has been Terminating for "
                   f"{human_duration(timing.deleting_for)}",
                   next=next_steps, fix=fix, facts=facts,
                   deletion=Deletion(timing.deletion_timestamp, format_time(timing.requested),
                                     timing.deleting_for, timing.grace_seconds),
                   removers=removers, related=sorted(ObjRef.of(o) for o in holders),
                   causes=causes)


def _pods_first(ctx: Context, content: list[Obj]) -> tuple[str, str] | None:
    """(fact, next step) when the namespace controller deletes pods first and pods remain
    while other content waits its turn; None otherwise."""
    pods = [o for o in content if o.get("kind") == "Pod" and o.get("apiVersion") == "v1"]
    waiting = [o for o in content if o.get("kind") != "Pod" and not is_being_deleted(o)]
    if not pods or not waiting:
        return None
    version = ctx.inv.emulated_version
    if version is not None:
        if not FeatureGate(version).enabled(ORDERED_NAMESPACE_DELETION):
            return None
        why = f"Kubernetes {version} deletes a namespace's pods first"
    elif any(is_being_deleted(p) for p in pods):
        why = ("the pods are being deleted and the rest not yet: Kubernetes 1.33+ deletes "
               "a namespace's pods first")
    else:
        return None
    names = ", ".join(str(ObjRef.of(p)) for p in pods[:5]) + (
        f" and {len(pods) - 5} more" if len(pods) > 5 else "")
    return (f"pods first: {why} (OrderedNamespaceDeletion, KEP-5080) and deletes nothing "
            f"else while one remains; {len(waiting)} other object"
            f"{'s wait' if len(waiting) > 1 else ' waits'} for {len(pods)} pod"
            f"{'s' if len(pods) > 1 else ''}",
            f"the rest of the content is deleted once these pods are gone: {names}")


def _causes(ctx: Context, ns: Obj, removers: list[Remover], holders: list[Obj], *,
            held_otherwise: bool = False) -> dict[Cause, CauseDetail]:
    """What holds the namespace: the finalizers of its content (the same causes as those
    objects' own deletions), else (nothing else holds it: ``held_otherwise`` False) its
    own finalizer's controller."""
    out = finalizer_causes(ctx, holders)
    if not out and not held_otherwise:
        controller = next((r for r in removers if r.finalizer == "kubernetes"), None)
        dead = controller is not None and controller.alive is Alive.NO
        out[Cause("content being deleted by the namespace controller", ObjRef.of(ns))] = \
            CauseDetail(["the namespace controller deletes what is left, then removes the "
                         "'kubernetes' finalizer"],
                        [f"bring back {controller.who}" if dead and controller
                         else "wait: ends when the namespace controller has deleted what is "
                         "left (no finalizer holds it), within seconds; it retries on errors"],
                        dead=dead)
    return out


def _advice(ctx: Context, name: str, removers: list[Remover], holders: list[Obj]
            ) -> tuple[list[str], list[str]]:
    next_steps = []
    fix = []
    controller = next((r for r in removers if r.finalizer == "kubernetes"), None)
    if controller is not None and controller.alive is Alive.NO:
        next_steps.append(f"nothing happens until {controller.who} runs again")
        fix.append(f"bring back {controller.who}")
    if holders:
        held = ", ".join(str(ObjRef.of(o)) for o in holders[:5]) + (
            f" and {len(holders) - 5} more" if len(holders) > 5 else "")
        next_steps.append(f"the namespace stays until these objects lose their finalizers: {held}")
        deleting = [o for o in holders if is_being_deleted(o)]
        fix.append("resolve the finalizers of the objects inside (see their StuckDeletion "
                   "findings: start the controllers that remove them)"
                   if deleting else "their controllers must remove the finalizers")
    else:
        next_steps.append("the namespace controller deletes what is left and then removes "
                          "the 'kubernetes' finalizer")
    fix.append(f"do not force namespace {name} out by clearing spec.finalizers through "
               "/finalize: the objects inside would vanish from the API without their "
               "controllers' clean-up, leaving their outside resources behind")
    return next_steps, fix
