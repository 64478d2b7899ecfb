"""The side panel's answers about one object, from the tools themselves.

* ``find``: ``KIND/NAME`` as the command line reads it (``resolve_kind``: any spelling
  kubectl accepts), in the namespace shown or, for the whole cluster, in any namespace;
* ``details``: the doctor's findings about the object (``diagnose``), ``why``
  (``explain``), its ancestors and descendants (``build_tree`` both ways) — each in its
  ``to_dict()`` form, the JSON that ``-o json`` prints;
* ``what_if``: ``plan_delete`` with the chosen propagation policy, plus what it names
  ``deleted``, ``orphaned`` (survivors with no owner left), ``survives`` (kept by another
  owner) and ``hangs`` (still deleting when the simulation went quiet).

Each reads an ``Inventory`` of the live picture scoped as the command line scopes it
(``kubegc doctor -n NS``, ``kubegc plan delete KIND/NAME -n NS``), so the page and the
commands give the same answers.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from kubegc.api.meta import DeletionPropagation, namespace_of
from kubegc.api.types import Obj
from kubegc.client.interface import APIResource
from kubegc.tools.doctor import DoctorOptions, diagnose
from kubegc.tools.inventory import Inventory
from kubegc.tools.model import ObjRef, group_of
from kubegc.tools.plan import SimulationFactory, plan_delete
from kubegc.tools.resolve import resolve_kind
from kubegc.tools.tree import build_tree
from kubegc.tools.ui.live import LiveObjects, object_id
from kubegc.tools.ui.timeline import timeline
from kubegc.tools.ui.views import chain_of, node_of
from kubegc.tools.why import dependent_deletions, explain
from kubegc.tools.why_report import Entry, WhyReport

POLICIES = ("Background", "Foreground", "Orphan")


class NotFound(LookupError):
    """No such object (the message says what was looked for)."""


def find(live: LiveObjects, query: str, namespace: str) -> Obj:
    """The object ``KIND/NAME`` names (``UnknownKind`` for a kind nobody serves)."""
    kind, sep, name = query.strip().partition("/")
    if not sep or not kind or not name:
        raise NotFound(f"{query!r}: expected KIND/NAME, e.g. deployment/web")
    res = resolve_kind(live.resources, kind)
    for obj in live.objects():
        meta = obj.get("metadata") or {}
        if (obj.get("kind"), group_of(obj), meta.get("name")) != (res.kind, res.group, name):
            continue
        if not res.namespaced or not namespace or meta.get("namespace") == namespace:
            return obj
    where = f" in namespace {namespace}" if namespace and res.namespaced else ""
    raise NotFound(f"{res.kind}/{name} not found{where}")


def _object(live: LiveObjects, oid: str) -> Obj:
    obj = live.get(oid)
    if obj is None:
        raise NotFound(f"no object {oid} (deleted?)")
    return obj


def _resource(inv: Inventory, ref: ObjRef) -> APIResource:
    res = inv.resource_for_kind(ref.group, ref.kind)
    if res is None:
        raise NotFound(f"{ref.short}: its kind is no longer served")
    return res


async def details(live: LiveObjects, oid: str) -> dict[str, Any]:
    if live.get(oid) is None and (seen := live.observed.get(oid)) is not None:
        return await gone(live, oid, seen.last)
    obj = _object(live, oid)
    namespace = namespace_of(obj)
    inv = await live.inventory(namespace)
    ref = ObjRef.of(obj)
    res = _resource(inv, ref)
    options = DoctorOptions(stuck_after=0)  # every deletion gets the four answers
    doctor = diagnose(inv, options)
    found = inv.by_uid(ref.uid) or obj
    why = await explain(live.client, inv, res, kind=res.kind, name=ref.name,
                        namespace=namespace, uid=ref.uid, options=options)
    mine = [f for f in doctor.findings if f.object.uid == ref.uid]
    index = {id(f): i for i, f in enumerate(mine)}
    return {"object": node_of(obj, inv.now),
            "doctor": [_with_chain(f.to_dict()) for f in mine],
            # the root causes holding it, each with its fix and commands ("findings":
            # indexes into "doctor")
            "rootCauses": [r.to_dict(defaultdict(lambda: -1, index))
                           for r in doctor.root_causes
                           if any(id(f) in index for f in r.findings)],
            "why": why.to_dict(),
            "timeline": timeline(obj, why, await _dependents(live, why), live.observed, oid,
                                 inv.now),
            "ancestors": build_tree(inv, found, owners=True, source=inv.source).to_dict(),
            "descendants": build_tree(inv, found, source=inv.source).to_dict()}


async def _dependents(live: LiveObjects, why: WhyReport) -> list[Entry]:
    """The garbage collector's DELETEs of the object's dependents, where records are kept
    (a namespaced owner's dependents are in its namespace)."""
    if why.evidence != "DeletionRecords":
        return []
    return await dependent_deletions(live.client, why.query.uid, why.query.namespace)


def _with_chain(finding: dict[str, Any]) -> dict[str, Any]:
    """A finding's JSON and, for a foreground deletion, its chain's lines (``chain``)."""
    blocking = finding.get("blockingDependents")
    finding["chain"] = chain_of(finding["object"], blocking)["text"] if blocking else []
    return finding


async def gone(live: LiveObjects, oid: str, last: Obj) -> dict[str, Any]:
    """A deleted object the page saw being deleted: ``why`` and its deletion's timeline."""
    ref = ObjRef.of(last)
    inv = await live.inventory(ref.namespace)
    res = inv.resource_for_kind(ref.group, ref.kind)
    why = await explain(live.client, inv, res, kind=ref.kind, name=ref.name,
                        namespace=ref.namespace, uid=ref.uid)
    return {"object": node_of(last, inv.now), "gone": True, "why": why.to_dict(),
            "timeline": timeline(None, why, await _dependents(live, why), live.observed, oid,
                                 inv.now)}


def _refs(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": ref.get("uid") or "", "kind": ref.get("kind"), "name": ref.get("name"),
             "namespace": ref.get("namespace")} for ref in items]


async def what_if(live: LiveObjects, oid: str, policy: str,
                  factory: SimulationFactory) -> dict[str, Any]:
    if policy not in POLICIES:
        raise ValueError(f"propagation policy {policy!r}: expected one of "
                         + ", ".join(POLICIES))
    obj = _object(live, oid)
    ref = ObjRef.of(obj)
    # the scope ``kubegc plan delete`` reads: a Namespace's content is all inside it
    scope = ref.name if (ref.group, ref.kind) == ("", "Namespace") else ref.namespace
    inv = await live.inventory(scope)
    res = _resource(inv, ref)
    target = inv.by_uid(ref.uid) or obj
    plan = (await plan_delete(inv, target, res, factory=factory,
                              propagation=DeletionPropagation(policy),
                              options=DoctorOptions())).to_dict()
    survivors = plan["survivors"]
    return {"plan": plan, "target": object_id(obj), "policy": policy, "result": {
        "deleted": _refs(plan["deleted"]),
        "orphaned": _refs([s["object"] for s in survivors if not s["keptBy"]]),
        "survives": _refs([s["object"] for s in survivors if s["keptBy"]]),
        "hangs": _refs([h["object"] for h in plan["hanging"]])}}
