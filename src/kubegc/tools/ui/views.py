"""What the page draws, as JSON: objects as graph nodes, and the doctor's marks on them.

``node_of(obj)`` is an object's node: identity, state (``Terminating`` once deleting, the
finalizers left), and its ownerReferences, each one an edge to draw (an object with
several owners has several edges). ``doctor_marks(report)`` reads a doctor report's JSON
(``DoctorReport.to_dict()``, the same fields ``kubegc doctor -o json`` prints) into what
the page colours: each bad reference by dependent and owner uid (``dangling`` as the GC
treats it, or ``invalid``), each object's findings, and for every held foreground
deletion its blocking chain — the dependents with blockOwnerDeletion that hold it, down to
the leaves that hold them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubegc.api.meta import deletion_timestamp_of, finalizers_of, owner_references_of
from kubegc.api.types import Obj
from kubegc.tools.doctor import FindingKind
from kubegc.tools.state import state_of, terminating_since
from kubegc.tools.ui.live import object_id

#: Reference findings the garbage collector treats as a missing owner.
DANGLING = frozenset({FindingKind.OWNER_ABSENT.value, FindingKind.OWNER_RECREATED.value,
                      FindingKind.OWNER_IN_OTHER_NAMESPACE.value})
#: Reference findings of references the garbage collector cannot act on.
INVALID = frozenset({FindingKind.CLUSTER_SCOPED_DEPENDENT.value,
                     FindingKind.UNKNOWN_OWNER_KIND.value})


def node_of(obj: Obj, now: datetime) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    state = state_of(obj, now)
    return {
        "id": object_id(obj), "uid": str(meta.get("uid") or ""),
        "kind": str(obj.get("kind") or ""), "apiVersion": str(obj.get("apiVersion") or ""),
        "name": str(meta.get("name") or ""), "namespace": str(meta.get("namespace") or ""),
        "deleting": deletion_timestamp_of(obj), "finalizers": finalizers_of(obj),
        "terminating": terminating_since(obj, now) if deletion_timestamp_of(obj) else None,
        "status": state.status, "ready": state.ready,
        "owners": [{"uid": str(r.get("uid") or ""), "kind": str(r.get("kind") or ""),
                    "name": str(r.get("name") or ""),
                    "apiVersion": str(r.get("apiVersion") or ""),
                    "controller": bool(r.get("controller")),
                    "blockOwnerDeletion": bool(r.get("blockOwnerDeletion"))}
                   for r in owner_references_of(obj)],
    }


def doctor_marks(report: dict[str, Any]) -> dict[str, Any]:
    """``{"references": {dependent uid: {owner uid: "dangling"|"invalid"}}, "findings":
    {uid: [finding kinds]}, "chains": {uid: {"edges": [[owner, dependent], ...],
    "leaves": [uid, ...], "text": [...]}}, "malformed": [what is wrong, ...]}`` from a
    doctor report's JSON (``malformed``: the facts of its MalformedObject findings)."""
    references: dict[str, dict[str, str]] = {}
    findings: dict[str, list[str]] = {}
    malformed: list[str] = []
    chains: dict[str, dict[str, Any]] = {}
    for finding in report.get("findings") or []:
        kind, uid = finding["kind"], finding["object"]["uid"]
        findings.setdefault(uid, []).append(kind)
        if kind == FindingKind.MALFORMED_OBJECT.value:
            malformed += [f"{_short(finding['object'])}: {fact}" for fact in finding["facts"]]
        related = finding.get("related") or []
        if (kind in DANGLING or kind in INVALID) and related:
            verdict = "dangling" if kind in DANGLING else "invalid"
            references.setdefault(uid, {})[related[0]["uid"]] = verdict
        if kind in (FindingKind.STUCK_DELETION.value, FindingKind.DELETING.value) and finding.get(
                "blockingDependents"):
            chains[uid] = chain_of(finding["object"], finding["blockingDependents"])
    return {"references": references, "findings": findings, "chains": chains,
            "malformed": malformed}


def chain_of(root: dict[str, Any], blocking: list[dict[str, Any]]) -> dict[str, Any]:
    """A foreground deletion's blocking chain: its edges, its leaves, and one line per
    leaf, "Owner ← dependent ← leaf (holds it: why)"."""
    edges: list[list[str]] = []
    leaves: list[str] = []
    text: list[str] = []

    def walk(owner: str, nodes: list[dict[str, Any]], path: list[str]) -> None:
        for node in nodes:
            uid = node["object"]["uid"]
            edges.append([owner, uid])
            here = [*path, _short(node["object"])]
            if node.get("blockingDependents"):
                walk(uid, node["blockingDependents"], here)
            else:
                leaves.append(uid)
                text.append(" ← ".join(here) + f" (holds it: {node.get('holdsBecause')})")

    walk(root["uid"], blocking, [_short(root)])
    return {"edges": edges, "leaves": leaves, "text": text}


def _short(ref: dict[str, Any]) -> str:
    return f"{ref.get('kind')}/{ref.get('name')}"
