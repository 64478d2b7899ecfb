"""ownerReferences looked up in an inventory (tools/ownership.py) and decided by the
garbage collector's own decision core."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.tools.ownership import Action, OwnerGraph, RefState, check_refs, gc_decision

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
    pytest.param(obj("Secret", "c", refs=[ref(OWNER)]), [RefState.OK], Action.NONE, id="ok"),
    pytest.param(obj("Secret", "c", refs=[{**ref(OWNER), "uid": "other"}]),
                 [RefState.UID_MISMATCH], Action.DELETE, id="uid-mismatch"),
    pytest.param(obj("Secret", "c", refs=[{**ref(OWNER), "name": "gone", "uid": "gone"}]),
                 [RefState.ABSENT], Action.DELETE, id="absent"),
    pytest.param(obj("Secret", "c", "c", refs=[ref(OTHER_NS_OWNER)]),
                 [RefState.OTHER_NAMESPACE], Action.DELETE, id="other-namespace"),
    pytest.param(obj("Secret", "c", refs=[ref(OWNER), {**ref(OWNER), "uid": "x",
                                                       "name": "gone"}]),
                 [RefState.OK, RefState.ABSENT], Action.REMOVE_REFERENCES, id="solid-and-dangling"),
    pytest.param(obj("Secret", "c", refs=[ref(OWNER), {**ref(OWNER), "uid": "x", "name": "gone"},
                                          {"apiVersion": "x.io/v1", "kind": "Thing", "name": "t",
                                           "uid": "t"}]),
                 [RefState.OK, RefState.ABSENT, RefState.UNKNOWN_KIND], Action.RETRY,
                 id="an-unmappable-owner-stops-the-gc-from-patching"),
    pytest.param(obj("ConfigMap", "c", refs=[{**ref(OWNER), "name": "gone", "uid": "gone"}],
                     deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["foregroundDeletion"]),
                 [RefState.ABSENT], Action.PROCESS_DELETING_DEPENDENTS,
                 id="deleting-its-dependents-refs-untouched"),
    pytest.param(obj("Secret", "c", refs=[ref(DELETING)]), [RefState.WAITING], Action.DELETE,
                 id="waiting-owner"),
    pytest.param(obj("PersistentVolume", "pv", "", refs=[ref(OWNER)]),
                 [RefState.CLUSTER_SCOPED_CHILD], Action.NEVER, id="cluster-scoped-child"),
    pytest.param(obj("Secret", "c", refs=[ref(NODE)]), [RefState.OK], Action.NONE,
                 id="namespaced-child-of-cluster-scoped-owner"),
    pytest.param(obj("Secret", "c", refs=[{"apiVersion": "x.io/v1", "kind": "Thing",
                                           "name": "t", "uid": "t"}]),
                 [RefState.UNKNOWN_KIND], Action.RETRY, id="unknown-kind"),
    pytest.param(obj("Secret", "c", refs=[{**ref(OWNER), "apiVersion": "v2"}]),
                 [RefState.UNKNOWN_KIND], Action.RETRY, id="unserved-version"),
    pytest.param(obj("Secret", "c", refs=[{**ref(OWNER), "uid": "x"}],
                     deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["f/x"]),
                 [RefState.UID_MISMATCH], Action.WAIT_FOR_DELETION, id="already-deleting"),
])
async def test_check_refs(child: dict[str, Any], states: list[RefState],
                          verdict: Action) -> None:
    inv = await inventory_of([OWNER, OTHER_NS_OWNER, NODE, DELETING, child])
    checks = check_refs(inv, child)
    assert [c.state for c in checks] == states
    assert gc_decision(OwnerGraph(inv), child, checks).action is verdict


async def test_uid_mismatch_is_a_recreation_only_with_evidence_of_the_old_uid() -> None:
    child = obj("Secret", "c", refs=[{**ref(OWNER), "uid": "old-uid"}])
    event = {"apiVersion": "v1", "kind": "Event",
             "metadata": {"name": "e1", "namespace": "a", "uid": "e1"}, "reason": "Created",
             "involvedObject": {"kind": "ConfigMap", "name": "owner", "uid": "old-uid"}}
    (made_up,) = check_refs(await inventory_of([OWNER, child]), child)
    (seen,) = check_refs(await inventory_of([OWNER, child, event]), child)
    assert (made_up.state, made_up.recreated, made_up.detail) == (
        RefState.UID_MISMATCH, False, "UIDMismatch")
    assert (seen.state, seen.recreated, seen.detail) == (RefState.UID_MISMATCH, True, "Recreated")


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
