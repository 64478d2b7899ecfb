"""Broken ownerReferences, and what the garbage collector will do about each.

One finding per bad reference (``ownership.check_refs``): an owner that does not exist
(the GC deletes the child unless another owner stays), a uid that does not match the
live owner of that name (the owner was recreated — the child will be deleted), a
namespaced owner in another namespace (the GC looks in the child's namespace, warns with
``OwnerRefInvalidNamespace`` and deletes the child), a cluster-scoped child of a
namespaced kind (never collected; the GC warns with ``OwnerRefInvalidNamespace`` too), a
kind the GC cannot map (never collected, retried); plus several controller references and
ownership cycles.

An ``OwnerRefInvalidNamespace`` event (Events expire after an hour by default) is evidence
for the finding of the reference it is about, not a second finding: it becomes one of that
finding's facts. It is a finding of its own only when no finding explains it: its object
is gone (the event is then the only trace of why), the reference was removed since, or the
owner could not be checked (a namespace-scoped read).
"""

from __future__ import annotations

import re

from kubegc.api.meta import owner_references_of, uid_of
from kubegc.api.types import Obj
from kubegc.tools.doctor.apiservices import group_version, unavailable_api_services
from kubegc.tools.doctor.context import Context, remove_owner_ref_command
from kubegc.tools.doctor.findings import Cause, CauseDetail, Finding, FindingKind, Severity
from kubegc.tools.model import ObjRef, age, human_duration
from kubegc.tools.ownership import Action, Decision, RefCheck, RefState, gc_decision

INVALID_NAMESPACE_REASON = "OwnerRefInvalidNamespace"

_KIND = {
    RefState.ABSENT: FindingKind.OWNER_ABSENT,
    RefState.UID_MISMATCH: FindingKind.OWNER_RECREATED,
    RefState.OTHER_NAMESPACE: FindingKind.OWNER_IN_OTHER_NAMESPACE,
    RefState.CLUSTER_SCOPED_CHILD: FindingKind.CLUSTER_SCOPED_DEPENDENT,
    RefState.UNKNOWN_KIND: FindingKind.UNKNOWN_OWNER_KIND,
}


#: References the GC reports with an ``OwnerRefInvalidNamespace`` event.
_EVENT_STATES = (RefState.OTHER_NAMESPACE, RefState.CLUSTER_SCOPED_CHILD)
#: The owner's uid in the event's message (``ownerRef [..., uid: <uid>] does not exist ...``).
_EVENT_OWNER_UID = re.compile(r"uid: ([^\],]+)\]")


#: lists of references remembered as quiet at most (``ownerref_findings``)
_QUIET_LIMIT = 4096


def ownerref_findings(ctx: Context) -> list[Finding]:
    out: list[Finding] = []
    #: uid of a child → the finding its OwnerRefInvalidNamespace events are evidence for
    explained: dict[str, Finding] = {}
    #: (id of a list of references, its holder's namespace) found to need no finding: what
    #: is found depends on no more (``Context.checks``), and 1,000 dependents of one owner
    #: share one list (``tools.slim``)
    quiet: set[tuple[int, str]] = set()
    for obj in ctx.inv.objects:
        meta = obj.get("metadata") or {}
        held = meta.get("ownerReferences")
        if not held:
            continue
        key = (id(held), str(meta.get("namespace") or ""))
        if key in quiet:
            continue
        found = len(out)
        refs = owner_references_of(obj)
        checks = ctx.checks(obj)
        if not any(check.state in _KIND for check in checks):
            verdict = None
        else:
            verdict = gc_decision(ctx.graph, obj, checks)
        for index, check in enumerate(checks):
            if verdict is not None and check.state in _KIND:
                finding = _ref_finding(ctx, obj, index, check, checks, verdict)
                out.append(finding)
                if check.state in _EVENT_STATES or uid_of(obj) not in explained:
                    explained[uid_of(obj)] = finding
        controllers = [r for r in refs if r.get("controller")]
        if len(controllers) > 1:
            out.append(_multiple_controllers(obj, controllers))
        if len(out) == found:
            if len(quiet) >= _QUIET_LIMIT:  # lists not shared (a live read): bounded
                quiet.clear()
            quiet.add(key)
    out.extend(_cycle_finding(cycle) for cycle in ctx.graph.cycles())
    out.extend(_event_findings(ctx, explained))
    return out


def _owner(check: RefCheck) -> ObjRef:
    return ObjRef.from_owner_ref(check.ref, check.lookup_namespace)


def _finding_kind(check: RefCheck) -> FindingKind:
    if check.state is RefState.UID_MISMATCH and not check.recreated:
        return FindingKind.OWNER_ABSENT  # no object with that uid is known to have existed
    return _KIND[check.state]


def _ref_finding(ctx: Context, obj: Obj, index: int, check: RefCheck, checks: list[RefCheck],
                 verdict: Decision) -> Finding:
    ref = ObjRef.of(obj)
    owner = _owner(check)
    uid = str(check.ref.get("uid") or "")
    facts = [f"ownerReferences[{index}]: {owner.api_version}/{owner.kind} {owner.name} uid {uid}"]
    title, fix = _describe(ctx, obj, index, check, owner, facts)
    severity = Severity.WARNING if verdict.action in (Action.DELETE, Action.NEVER) or (
        check.state.dangling) else Severity.INFO
    related = [owner]  # the referenced owner first, then what holds that name or uid
    if check.found is not None and ObjRef.of(check.found).uid != owner.uid:
        related.append(ObjRef.of(check.found))
    kind = _finding_kind(check)
    next_steps = [_next(ref, verdict, checks)]
    if verdict.action is Action.DELETE:
        facts.extend(_refusing(ctx, ref))
    what = _CAUSE[kind] + (" (no object with that uid)"
                           if check.state is RefState.UID_MISMATCH and not check.recreated
                           else "")
    return Finding(kind, severity, ref, f"{ref}: {title}", next=next_steps, fix=fix,
                   facts=facts, related=related,
                   causes={Cause(what, _cause_owner(check, owner)): _cause_detail(
                       obj, index, check, ref, next_steps, fix)})


_KEEP = "to keep an object that must live on, remove its reference first"


def _refusing(ctx: Context, ref: ObjRef) -> list[str]:
    """The webhooks that may refuse the garbage collector's DELETE of ``ref``: it would
    retry it for ever (as upstream), and the object stays."""
    hooks = ctx.delete_webhooks(ref)
    if not hooks:
        return []
    return ["admission webhooks may be asked about its DELETE: " + "; ".join(hooks)
            + f"; if one refuses the garbage collector's, {ref.short} stays and the garbage "
            "collector retries it for ever (its log: 'error syncing item' with the refusal)"]


def _cause_detail(obj: Obj, index: int, check: RefCheck, ref: ObjRef, next_steps: list[str],
                  fix: list[str]) -> CauseDetail:
    """What a group of children of the same broken owner is told once: the fix without
    the per-object commands, which are listed on their own."""
    if check.state is RefState.UNKNOWN_KIND:
        return CauseDetail(next_steps, fix, at=[ref])
    command = remove_owner_ref_command(obj, index, str(check.ref.get("uid") or ""))
    advice = [line.split(": kubectl patch", 1)[0] for line in fix
              if not line.startswith("if ") or "must live on" not in line]
    by_hand = ("remove the reference" if check.state is RefState.CLUSTER_SCOPED_CHILD
               else _KEEP)
    return CauseDetail(next_steps, advice, at=[ref], commands=[command], by_hand=by_hand)


def _cause_owner(check: RefCheck, owner: ObjRef) -> ObjRef:
    """The owner a broken reference names, where it is (the object with that uid in its
    own namespace, for a reference across namespaces)."""
    if check.state is RefState.OTHER_NAMESPACE and check.found is not None:
        return ObjRef.of(check.found)
    return owner


#: How a group of children with the same broken owner names its cause.
_CAUSE = {
    FindingKind.OWNER_ABSENT: "owner absent",
    FindingKind.OWNER_RECREATED: "owner recreated",
    FindingKind.OWNER_IN_OTHER_NAMESPACE: "owner in another namespace",
    FindingKind.CLUSTER_SCOPED_DEPENDENT: "namespaced owner of a cluster-scoped object",
    FindingKind.UNKNOWN_OWNER_KIND: "owner kind not served",
}


def _describe(ctx: Context, obj: Obj, index: int, check: RefCheck, owner: ObjRef,
              facts: list[str]) -> tuple[str, list[str]]:
    uid = str(check.ref.get("uid") or "")
    keep = (f"if {ObjRef.of(obj).short} must live on, remove the reference first: "
            f"{remove_owner_ref_command(obj, index, uid)}")
    if check.state is RefState.ABSENT:
        where = f" in namespace {check.lookup_namespace}" if check.lookup_namespace else ""
        facts.append(f"no {owner.kind} named {owner.name}{where}")
        return f"owner {owner.short} does not exist", [
            keep, "if it should go with its owner, nothing to do"]
    if check.state is RefState.UID_MISMATCH and check.found is not None:
        live = check.found["metadata"]
        created = live.get("creationTimestamp")
        facts.append(f"the live {owner.kind} {owner.name} has uid {live.get('uid')}"
                     + (f" (created {created})" if created else ""))
        repoint = (f"if it belongs to the {owner.kind} {owner.name} of uid {live.get('uid')}, "
                   f"point the reference at that uid before the garbage collector deletes it")
        if not check.recreated:
            facts.append(f"no object with uid {uid} is known to have existed (no DeletionRecord "
                         "or Event names it): the uid was never this owner's")
            return (f"owner {owner.short} is absent: no object with that uid (the name belongs "
                    "to another object)", [
                        repoint, "a controller must take its owner's uid from the owner "
                        "itself, never make it up or copy it from another cluster", keep])
        facts.append(f"an object with uid {uid} existed: {ctx.inv.history.get(uid, 'seen')}")
        return (f"owner {owner.short} was recreated: the reference's uid does not match", [
            repoint.replace("if it belongs to the", "if it belongs to the new"),
            "a controller must read its owner's uid fresh, never from a cache that outlives "
            "the owner", keep])
    if check.state is RefState.OTHER_NAMESPACE and check.found is not None:
        there = ObjRef.of(check.found)
        facts.append(f"uid {uid} belongs to {there} — ownerReferences cannot cross namespaces")
        return (f"owner {owner.short} is in namespace {there.namespace}, not "
                f"{check.lookup_namespace}", [
                    f"keep the dependent in its owner's namespace ({there.namespace}), make the "
                    "owner cluster-scoped, or clean it up by label from the owner's controller",
                    keep])
    if check.state is RefState.CLUSTER_SCOPED_CHILD:
        facts.append(f"{owner.kind} is namespaced; a cluster-scoped object cannot have it as "
                     "owner (the reference names no namespace, and a cluster-scoped object "
                     "has none to look in)")
        return (f"cluster-scoped object owned by a namespaced {owner.kind}", [
            "remove the reference and delete the object explicitly when its owner goes "
            "(for instance from the owner's finalizer): "
            f"{remove_owner_ref_command(obj, index, uid)}"])
    down = next((a for a in unavailable_api_services(ctx.inv)
                 if group_version(a) == owner.api_version), None)
    if down is not None:  # served, but its APIService is unavailable: discovery fails
        name = str(down["metadata"].get("name") or "")
        facts.append(f"{owner.api_version} is served by APIService {name}, which is "
                     f"unavailable: the garbage collector cannot look the owner up")
        return (f"owner kind {owner.api_version}/{owner.kind} cannot be discovered: APIService "
                f"{name} is unavailable", [
                    f"bring back the backend of APIService {name} (the garbage collector then "
                    "looks the owner up), or, if that API is gone for good: kubectl delete "
                    f"apiservice {name}"])
    facts.append(f"{owner.api_version}/{owner.kind} is not served by this cluster")
    return (f"owner kind {owner.api_version}/{owner.kind} is unknown", [
        f"install the CustomResourceDefinition of {owner.api_version}/{owner.kind}, or fix "
        "the reference's apiVersion/kind"])


def _next(ref: ObjRef, verdict: Decision, checks: list[RefCheck]) -> str:
    action = verdict.action
    if action is Action.DELETE:
        return (f"the garbage collector deletes {ref.short}: none of its owners remains "
                "(a child with such a reference disappears within seconds of being created)")
    if action is Action.REMOVE_REFERENCES:
        solid = ", ".join(ObjRef.from_owner_ref(c.ref, "").short for c in checks
                          if c.state is RefState.OK)
        return (f"the garbage collector removes the bad reference; {ref.short} stays because "
                f"{solid} exists")
    if action is Action.WAIT_FOR_DELETION:
        return f"{ref.short} is already being deleted; the garbage collector waits for it"
    if action is Action.NEVER:
        return ("the garbage collector never collects it and does not retry: a cluster-scoped "
                "dependent of a namespaced owner is never deleted by the garbage collector, "
                "which only emits an OwnerRefInvalidNamespace Warning event on it; deleting "
                "the owner leaves it behind")
    if action is Action.RETRY:
        return ("the garbage collector cannot decide (unknown kind or unread owner): it "
                "retries with backoff and deletes nothing")
    return "nothing: another owner reference keeps it"


def _multiple_controllers(obj: Obj, controllers: list[dict[str, object]]) -> Finding:
    ref = ObjRef.of(obj)
    names = ", ".join(f"{c.get('kind')}/{c.get('name')}" for c in controllers)
    return Finding(FindingKind.MULTIPLE_CONTROLLERS, Severity.WARNING, ref,
                   f"{ref}: {len(controllers)} owner references have controller=true",
                   next=["the API server rejects any update of this object until only one "
                         "reference is the controller; controllers fight over it"],
                   fix=[f"keep controller=true only on the reference of the one controller "
                        f"that manages it ({names})"],
                   facts=[f"controllers: {names}"])


def _cycle_finding(cycle: list[Obj]) -> Finding:
    refs = [ObjRef.of(o) for o in cycle]
    chain = " → ".join(r.short for r in [*refs, refs[0]])
    return Finding(FindingKind.OWNERSHIP_CYCLE, Severity.INFO, refs[0],
                   f"ownership cycle: {chain}",
                   next=["deleting any member with foreground propagation makes the garbage "
                         "collector set blockOwnerDeletion=false on the cycle so that it "
                         "does not wait forever; background deletion deletes the rest"],
                   fix=["break the cycle: an object should not (indirectly) own its owner"],
                   facts=[f"{r} uid {r.uid}" for r in refs], related=refs[1:])


def _event_time(event: Obj) -> str:
    return str(event.get("lastTimestamp") or event.get("eventTime") or (
        event.get("metadata") or {}).get("creationTimestamp") or "")


def _latest_events(ctx: Context) -> dict[tuple[str, str, str, str], Obj]:
    """The latest ``OwnerRefInvalidNamespace`` event per involved object."""
    latest: dict[tuple[str, str, str, str], Obj] = {}
    for event in ctx.inv.of_kind("", "Event"):
        if event.get("reason") != INVALID_NAMESPACE_REASON:
            continue
        inv_obj = event.get("involvedObject") or {}
        key = (str(inv_obj.get("namespace") or ""), str(inv_obj.get("kind") or ""),
               str(inv_obj.get("name") or ""), str(inv_obj.get("uid") or ""))
        if key not in latest or _event_time(event) > _event_time(latest[key]):
            latest[key] = event
    return latest


def _event_facts(ctx: Context, event: Obj) -> list[str]:
    when = _event_time(event)
    ago = age(when, ctx.inv.now)
    return [f"the garbage collector reported it: Warning {INVALID_NAMESPACE_REASON} event "
            f"{(event.get('metadata') or {}).get('name')}: {event.get('message', '')}",
            f"event last seen {when}" + (f" ({human_duration(ago)} ago)" if ago else "")
            + "; Events expire (1 h by default)"]


def _event_findings(ctx: Context, explained: dict[str, Finding]) -> list[Finding]:
    """Events become facts of the finding they explain; the others are findings."""
    out = []
    for (namespace, kind, name, uid), event in sorted(_latest_events(ctx).items()):
        facts = _event_facts(ctx, event)
        finding = explained.get(uid) if uid else None
        if finding is not None:
            finding.facts.extend(facts)
            continue
        inv_obj = event.get("involvedObject") or {}
        child = ObjRef(kind=kind, namespace=namespace, name=name,
                       api_version=str(inv_obj.get("apiVersion") or ""), uid=uid)
        live = ctx.inv.by_uid(uid) if uid else None
        facts.append(f"{child.short} {'still exists' if live is not None else 'is gone'}")
        if live is not None and not _still_refers(live, event):
            out.append(_fixed_finding(child, facts))
        else:
            out.append(_event_finding(child, live is not None, facts))
    return out


def _still_refers(obj: Obj, event: Obj) -> bool:
    """Whether ``obj`` still has the owner reference ``event`` is about."""
    refs = owner_references_of(obj)
    found = _EVENT_OWNER_UID.search(str(event.get("message") or ""))
    if found is None:
        return bool(refs)
    return any(str(r.get("uid") or "") == found.group(1).strip() for r in refs)


def _fixed_finding(child: ObjRef, facts: list[str]) -> Finding:
    return Finding(
        FindingKind.INVALID_NAMESPACE_EVENT, Severity.INFO, child,
        f"{child}: the garbage collector reported an invalid owner reference, since removed",
        next=["nothing: the reference is no longer there"], fix=["nothing to do"],
        facts=facts)


def _event_finding(child: ObjRef, still: bool, facts: list[str]) -> Finding:
    """An event about a reference no finding explains: its child is gone, or the owner
    could not be checked (not read)."""
    if still and child.namespace:
        next_step = ("the garbage collector treats that owner as absent in the child's "
                     "namespace and deletes the child if no other owner stays")
    elif still:
        next_step = ("the garbage collector never deletes a cluster-scoped object for a "
                     "namespaced owner and does not retry")
    elif not child.namespace:
        next_step = ("the garbage collector never deletes a cluster-scoped object for a "
                     "namespaced owner: something else deleted it; this event expires (1 h "
                     "by default)")
    else:
        next_step = ("the garbage collector treated that owner as absent in the child's "
                     "namespace and deleted the child if no other owner stayed; this event "
                     "expires (1 h by default), after which nothing in the cluster tells why "
                     "the child is gone")
    return Finding(
        FindingKind.INVALID_NAMESPACE_EVENT, Severity.WARNING, child,
        f"{child}: the garbage collector reported an owner "
        + ("that a cluster-scoped object cannot have" if not child.namespace
           else "in another namespace"),
        next=[next_step],
        fix=["keep dependents in their owner's namespace (or use a cluster-scoped owner); "
             "`kubegc why` reads kubegc's DeletionRecords, kept 7 days"],
        facts=facts)
