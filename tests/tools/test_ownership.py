"""ownerReferences classified as the garbage collector will (tools/ownership.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.tools.ownership import OwnerGraph, RefState, Verdict, check_refs, gc_verdict

from .conftest import inventory_of


def obj(kind: str, name: str, ns: str = "a", *, api: str = "v1", refs: Any = (),
        **meta: Any) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name, "uid": f"{kind}-{ns}-{name}", **meta}
    if ns:
        m["namespace"] = ns
    if refs:
        m["ownerReferences"] = list(refs)
    return {"apiVersion": api, "kind": kind, "metadata": m}


def ref(owner: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"],
            "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"], **extra}


OWNER = obj("ConfigMap", "owner")
OTHER_NS_OWNER = obj("ConfigMap", "owner", "b")
NODE = obj("Node", "n1", "")
DELETING = obj("ConfigMap", "fg", deletionTimestamp="2026-01-01T00:00:00Z",
               finalizers=["foregroundDeletion"])


@pytest.mark.parametrize(("child", "states", "verdict"), [
    pytest.param(obj("Secret", "c", refs=[ref(OWNER)]), [RefState.OK], Verdict.KEEP, id="ok"),
    pytest.param(obj("Secret", "c", refs=[{**ref(OWNER), "uid": "other"}]),
                 [RefState.UID_MISMATCH], Verdict.DELETE, id="recreated"),
    pytest.param(obj("Secret", "c", refs=[{**ref(OWNER), "name": "gone", "uid": "gone"}]),
                 [RefState.ABSENT], Verdict.DELETE, id="absent"),
    pytest.param(obj("Secret", "c", "c", refs=[ref(OTHER_NS_OWNER)]),
                 [RefState.OTHER_NAMESPACE], Verdict.DELETE, id="other-namespace"),
    pytest.param(obj("Secret", "c", refs=[ref(OWNER), {**ref(OWNER), "uid": "x",
                                                       "name": "gone"}]),
                 [RefState.OK, RefState.ABSENT], Verdict.REMOVE_REFS, id="solid-and-dangling"),
    pytest.param(obj("Secret", "c", refs=[ref(DELETING)]), [RefState.WAITING], Verdict.DELETE,
                 id="waiting-owner"),
    pytest.param(obj("PersistentVolume", "pv", "", refs=[ref(OWNER)]),
                 [RefState.CLUSTER_SCOPED_CHILD], Verdict.NEVER, id="cluster-scoped-child"),
    pytest.param(obj("Secret", "c", refs=[ref(NODE)]), [RefState.OK], Verdict.KEEP,
                 id="namespaced-child-of-cluster-scoped-owner"),
    pytest.param(obj("Secret", "c", refs=[{"apiVersion": "x.io/v1", "kind": "Thing",
                                           "name": "t", "uid": "t"}]),
                 [RefState.UNKNOWN_KIND], Verdict.UNDECIDED, id="unknown-kind"),
    pytest.param(obj("Secret", "c", refs=[{**ref(OWNER), "apiVersion": "v2"}]),
                 [RefState.UNKNOWN_KIND], Verdict.UNDECIDED, id="unserved-version"),
    pytest.param(obj("Secret", "c", refs=[{**ref(OWNER), "uid": "x"}],
                     deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["f/x"]),
                 [RefState.UID_MISMATCH], Verdict.WAIT, id="already-deleting"),
])
async def test_check_refs(child: dict[str, Any], states: list[RefState],
                          verdict: Verdict) -> None:
    inv = await inventory_of([OWNER, OTHER_NS_OWNER, NODE, DELETING, child])
    checks = check_refs(inv, child)
    assert [c.state for c in checks] == states
    assert gc_verdict(child, checks) is verdict


async def test_graph_dependents_and_cycles() -> None:
    a = obj("ConfigMap", "a")
    b = obj("ConfigMap", "b", refs=[ref(a, blockOwnerDeletion=True)])
    a["metadata"]["ownerReferences"] = [ref(b)]
    c = obj("Secret", "c", refs=[ref(a)])
    graph = OwnerGraph(await inventory_of([a, b, c]))
    assert sorted(e.dependent["metadata"]["name"] for e in graph.dependents(
        a["metadata"]["uid"])) == ["b", "c"]
    assert [e.dependent["metadata"]["name"] for e in graph.blocking_dependents(
        a["metadata"]["uid"])] == ["b"]
    (cycle,) = graph.cycles()
    assert sorted(o["metadata"]["name"] for o in cycle) == ["a", "b"]
