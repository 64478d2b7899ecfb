"""``kubegc why``: why an object is gone, or going.

Evidence, best first:
* kubegc's ``kubegc.io/v1 DeletionRecord``s (kept 7 days): every action the garbage
  collector took on the object, with its reason and how it classified each owner; found
  by the object's uid, and by kind/name/namespace for earlier incarnations of the name;
* on other clusters, Events about the object (``OwnerRefInvalidNamespace``, the GC's and
  the kubelet's) — only while they live (one hour by default), which the report says;
* the object itself when it still exists: if it is Terminating, the doctor's four
  answers; if its ownerReferences are broken, what the GC will do.
A pod deleted through ``pods/eviction`` has a record too (action ``evict``): ``why`` names
the eviction, the user who asked for it and the budget that allowed it.
For each owner a record names as dangling or waiting, ``why`` follows the owner in turn
(``causes``), so a chain "pod ← replicaset ← deployment deleted in the foreground" reads
top to bottom. Records also name the other deleting controllers (``deleter``): pod GC with
the node that went, taint eviction with the taint and the toleration that ran out. An
object without any record was deleted by a request of a user or of a client outside kubegc:
every kubegc component that deletes records it (Events, which expire, excepted).
This module gathers the evidence; the report and the conclusion drawn from it are
``kubegc.tools.why_report``.
"""

from __future__ import annotations

from kubegc.api.errors import StatusError, is_not_found
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import APIResource, Client, ListOptions
from kubegc.controllers.deletionrecords import (
    DELETION_RECORDS,
    LABEL_ACTION,
    LABEL_KIND,
    LABEL_NAME,
    LABEL_NAMESPACE,
    LABEL_UID,
    label_value,
)
from kubegc.tools.audit_log import AuditDeletion, deletions_of, describe
from kubegc.tools.doctor import DoctorOptions
from kubegc.tools.doctor.context import Context
from kubegc.tools.doctor.malformed import malformed_findings
from kubegc.tools.doctor.namespaces import namespace_finding
from kubegc.tools.doctor.ownerrefs import ownerref_findings
from kubegc.tools.doctor.stuck import stuck_finding
from kubegc.tools.inventory import Inventory
from kubegc.tools.model import ObjRef
from kubegc.tools.ownership import OwnerGraph
from kubegc.tools.state import state_of, terminating_since
from kubegc.tools.why_report import (
    Entry,
    WhyReport,
    conclude,
)

EVENTS = GroupVersionResource("", "v1", "events")
#: owner details (see DeletionRecord owners) worth following: the owner was deleted
_FOLLOWED = ("NotFound", "ObservedDeleted", "Foreground", "Recreated")
MAX_CAUSE_DEPTH = 3
EVENTS_NOTE = ("this cluster keeps no DeletionRecords: only Events explain deletions, and "
               "they expire (kube-apiserver --event-ttl, 1 hour by default); anything older "
               "is lost")


async def explain(client: Client, inv: Inventory, resource: APIResource | None, *, kind: str,
                  name: str, namespace: str, uid: str = "",
                  options: DoctorOptions | None = None,
                  audit_log: list[AuditDeletion] | None = None) -> WhyReport:
    """Why the object ``kind``/``name`` (or with ``uid``) is gone or going; with
    ``audit_log`` (kube-apiserver's, ``kubegc.tools.audit_log``), who sent its DELETE."""
    live = _find(inv, resource, kind, name, namespace)
    if live is not None and uid and live["metadata"].get("uid") != uid:
        live = None  # the name now belongs to another incarnation
    query = ObjRef.of(live) if live is not None else ObjRef(kind, namespace, name, uid=uid)
    served = await _has_records(client, inv)
    report = WhyReport(inv.source, query, "DeletionRecords" if served else "Events")
    report.notes.extend(inv.notes)
    if live is not None:
        report.state = state_of(live, inv.now)
        report.since = terminating_since(live, inv.now)
        ctx = Context(inv, OwnerGraph(inv), options or DoctorOptions())
        if report.state.terminating:
            report.findings.append(namespace_finding(ctx, live) if _is_namespace(live)
                                   else stuck_finding(ctx, live))
        report.findings.extend(f for f in ownerref_findings(ctx)
                               if f.object.uid == query.uid)
    report.findings.extend(malformed_findings(inv, query))
    if served:
        report.entries = await _records(client, query)
        await _follow_owners(client, inv, report, MAX_CAUSE_DEPTH)
    else:
        report.entries = await _events(client, query)
        report.notes.append(EVENTS_NOTE)
    report.conclusion = conclude(report, _namespace_deleting(inv, query))
    if audit_log is not None:
        _join_audit(report, resource, audit_log)
    return report


def _join_audit(report: WhyReport, resource: APIResource | None,
                audit_log: list[AuditDeletion]) -> None:
    """What the audit log says, joined to the conclusion: the DELETE that named the
    object (its sender and that sender's rule), else the DeleteCollections that may have
    included it — said as a possibility, never as the answer."""
    q = report.query
    if resource is None:
        report.notes.append(f"the audit log is not searched: {q.kind} is not served, so its "
                            "resource name is not known")
        return
    named, collections = deletions_of(audit_log, resource=resource.resource,
                                      api_group=resource.group, namespace=q.namespace,
                                      name=q.name, uid=q.uid)
    report.audit = (named, collections)
    if named:
        said = describe(named[-1])
        report.conclusion = (f"{q.short} was {said}" if report.state is None
                             else f"{report.conclusion}; the audit log: {said}")
    elif collections:
        report.conclusion += (
            f"; the audit log names no DELETE of it, but {len(collections)} DeleteCollection"
            f"{'s' if len(collections) > 1 else ''} of {resource.resource} in "
            f"{q.namespace or 'the cluster'} may have included it, the last: "
            f"{describe(collections[-1])}")
    else:
        report.notes.append("the audit log has no deletion of it: it was deleted before the "
                            "log begins, or the audit policy does not log its DELETE")


def _namespace_deleting(inv: Inventory, query: ObjRef) -> bool:
    ns = inv.find("", "Namespace", "", query.namespace) if query.namespace else None
    return ns is not None and bool((ns.get("metadata") or {}).get("deletionTimestamp"))


async def recorded_kind(client: Client, text: str, name: str, namespace: str) -> str | None:
    """The kind, as DeletionRecords spell it, of a recorded object named ``name`` whose
    kind ``text`` names (any case, singular or plural) though the cluster no longer
    serves it (a custom resource whose CRD was deleted); None if no record names one."""
    try:
        listed = await client.list(DELETION_RECORDS, options=ListOptions(
            label_selector=f"{LABEL_NAME}={label_value(name)}"))
    except StatusError:
        return None  # no records here (not kubegc), or not readable
    wanted = text.lower().split(".", 1)[0]
    for record in listed.get("items") or []:
        about = record.get("object") or {}
        kind = str(about.get("kind") or "")
        if (kind.lower() in (wanted, wanted.removesuffix("s"), wanted.removesuffix("es"))
                and str(about.get("namespace") or "") in ("", namespace)):
            return kind
    return None


async def _has_records(client: Client, inv: Inventory) -> bool:
    """Whether the source keeps DeletionRecords (a dump: whether it holds any)."""
    if not any(r.group == DELETION_RECORDS.group and r.resource == DELETION_RECORDS.resource
               for r in inv.resources):
        return False
    if not inv.dump:
        return True
    listed = await client.list(DELETION_RECORDS, options=ListOptions(limit=1))
    return bool(listed.get("items"))


def _find(inv: Inventory, resource: APIResource | None, kind: str, name: str,
          namespace: str) -> Obj | None:
    group = resource.group if resource is not None else ""
    ns = namespace if resource is None or resource.namespaced else ""
    return inv.find(group, resource.kind if resource is not None else kind, ns, name)


async def _records(client: Client, query: ObjRef) -> list[Entry]:
    selectors = []
    if query.uid:
        selectors.append(f"{LABEL_UID}={query.uid}")
    if query.name:
        by_name = f"{LABEL_KIND}={label_value(query.kind)},{LABEL_NAME}={label_value(query.name)}"
        if query.namespace:
            by_name += f",{LABEL_NAMESPACE}={query.namespace}"
        selectors.append(by_name)
    found: dict[str, Obj] = {}
    for selector in selectors:
        listed = await client.list(DELETION_RECORDS, options=ListOptions(label_selector=selector))
        for item in listed.get("items") or []:
            found[str(item["metadata"]["name"])] = item
    entries = [_record_entry(r) for r in found.values()]
    return sorted(entries, key=lambda e: (e.time, e.action))


def _record_entry(rec: Obj) -> Entry:
    obj = rec.get("object") or {}
    ref = ObjRef(str(obj.get("kind") or ""), str(obj.get("namespace") or ""),
                 str(obj.get("name") or ""), str(obj.get("apiVersion") or ""),
                 str(obj.get("uid") or ""))
    owners = tuple({k: str(v) for k, v in o.items()} for o in rec.get("owners") or [])
    budget = rec.get("budget")
    budget = budget if isinstance(budget, dict) else {}
    return Entry(str(rec.get("time") or ""), "DeletionRecord", str(rec.get("action") or ""),
                 str(rec.get("reason") or ""), str(rec.get("message") or ""), ref,
                 str(rec.get("propagationPolicy") or ""), owners, str(rec.get("user") or ""),
                 tuple(sorted(budget.items())), str(rec.get("deleter") or ""),
                 str(rec.get("node") or ""), str(rec.get("taint") or ""),
                 str(rec.get("toleration") or ""))


async def _events(client: Client, query: ObjRef) -> list[Entry]:
    selector = f"involvedObject.name={query.name}"
    if query.kind:
        selector += f",involvedObject.kind={query.kind}"
    try:
        listed = await client.list(EVENTS, namespace=query.namespace or "default",
                                   options=ListOptions(field_selector=selector))
    except StatusError as e:
        if is_not_found(e):
            return []
        raise
    out = []
    for ev in listed.get("items") or []:
        when = str(ev.get("lastTimestamp") or ev.get("eventTime") or "")
        inv_obj = ev.get("involvedObject") or {}
        ref = ObjRef(str(inv_obj.get("kind") or ""), str(inv_obj.get("namespace") or ""),
                     str(inv_obj.get("name") or ""), str(inv_obj.get("apiVersion") or ""),
                     str(inv_obj.get("uid") or ""))
        out.append(Entry(when, "Event", str(ev.get("reason") or ""), str(ev.get("type") or ""),
                         str(ev.get("message") or ""), ref))
    return sorted(out, key=lambda e: e.time)


def _is_namespace(obj: Obj) -> bool:
    return obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1"


async def _follow_owners(client: Client, inv: Inventory, report: WhyReport, depth: int) -> None:
    if depth <= 0:
        return
    seen = {report.query.uid}
    for entry in report.entries:
        if entry.action != "delete":
            continue
        for owner in entry.owners:
            uid = owner.get("uid", "")
            if not uid or uid in seen or owner.get("detail") not in _FOLLOWED:
                continue  # a uid mismatch or another namespace: that uid explains nothing
            seen.add(uid)
            ref = ObjRef(owner.get("kind", ""), entry.object.namespace, owner.get("name", ""),
                         owner.get("apiVersion", ""), uid)
            live = inv.by_uid(uid)
            cause = WhyReport(inv.source, ObjRef.of(live) if live is not None else ref,
                              report.evidence)
            if live is not None:
                cause.state = state_of(live, inv.now)
                cause.since = terminating_since(live, inv.now)
            cause.entries = await _records(client, cause.query)
            await _follow_owners(client, inv, cause, depth - 1)
            cause.conclusion = conclude(cause)
            report.causes.append(cause)


async def dependent_deletions(client: Client, owner_uid: str,
                              namespace: str = "") -> list[Entry]:
    """The garbage collector's DELETEs of dependents that named ``owner_uid`` among their
    owners (its ``delete`` records), oldest first; none where no records are kept. A
    namespaced owner's dependents are in its ``namespace`` (a reference across namespaces
    is invalid: ``OwnerRefInvalidNamespace``)."""
    if not owner_uid:
        return []
    selector = f"{LABEL_ACTION}=delete"
    if namespace:
        selector += f",{LABEL_NAMESPACE}={namespace}"
    try:
        listed = await client.list(DELETION_RECORDS, options=ListOptions(
            label_selector=selector))
    except StatusError:
        return []  # no records here (not kubegc), or not readable
    entries = [_record_entry(r) for r in listed.get("items") or []]
    return sorted((e for e in entries if any(o.get("uid") == owner_uid for o in e.owners)),
                  key=lambda e: (e.time, e.object.short))
