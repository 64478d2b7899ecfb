"""DOT dump of the graph (upstream dump_test.go and testdata/*.dot)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubegc.api.meta import ObjectReference
from kubegc.controllers.garbagecollector import Node, OwnerRef
from kubegc.controllers.garbagecollector.dump import to_dot, to_vertices_and_edges

TESTDATA = Path(__file__).parent / "testdata"


def _node(uid: str, *, owners: tuple[str, ...] = (), dependents: tuple[Node, ...] = ()) -> Node:
    refs = tuple(OwnerRef("", "", "", o) for o in owners)
    n = Node(ObjectReference("", "", "", uid), owners=refs)
    for d in dependents:
        n.add_dependent(d)
    return n


def graph(*names: str) -> dict[str, Node]:
    """Upstream's fixtures: alpha -> bravo, charlie; delta -> foxtrot -> golf; echo alone."""
    alpha = _node("alpha", owners=("bravo", "charlie"))
    delta = _node("delta", owners=("foxtrot",))
    foxtrot = _node("foxtrot", owners=("golf",), dependents=(delta,))
    all_nodes = {
        "alpha": alpha,
        "bravo": _node("bravo", dependents=(alpha,)),
        "charlie": _node("charlie", dependents=(alpha,)),
        "delta": delta,
        "echo": _node("echo"),
        "foxtrot": foxtrot,
        "golf": _node("golf", dependents=(foxtrot,)),
    }
    return {n: all_nodes[n] for n in names}


@pytest.mark.parametrize(("names", "vertices", "edges"), [
    pytest.param(("alpha", "bravo", "charlie"), ["alpha", "bravo", "charlie"],
                 [("alpha", "bravo"), ("alpha", "charlie")], id="simple"),
    pytest.param(("alpha", "charlie"), ["alpha", "bravo", "charlie"],
                 [("alpha", "bravo"), ("alpha", "charlie")], id="missing-owner-synthesized"),
    pytest.param(("alpha", "bravo", "charlie", "echo"), ["alpha", "bravo", "charlie"],
                 [("alpha", "bravo"), ("alpha", "charlie")], id="drop-no-ref"),
])
def test_vertices_and_edges(names: tuple[str, ...], vertices: list[str],
                            edges: list[tuple[str, str]]) -> None:
    got_vertices, got_edges = to_vertices_and_edges(graph(*names))
    assert [v.uid for v in got_vertices] == vertices
    assert got_edges == edges


def test_missing_owner_is_marked() -> None:
    vertices, _ = to_vertices_and_edges(graph("alpha", "charlie"))
    assert {v.uid: v.missing_from_graph for v in vertices} == {
        "alpha": False, "bravo": True, "charlie": False}


ALL = ("alpha", "bravo", "charlie", "delta", "foxtrot", "golf")


@pytest.mark.parametrize(("names", "uids", "vertices"), [
    pytest.param(("alpha", "bravo", "charlie"), ["bravo"], ["alpha", "bravo", "charlie"],
                 id="simple"),
    pytest.param(("alpha", "charlie"), ["bravo"], [], id="missing"),
    pytest.param(("alpha", "bravo", "charlie", "echo"), ["echo"], [], id="drop-no-ref"),
    pytest.param(ALL, ["golf"], ["delta", "foxtrot", "golf"], id="two-chains-from-owner"),
    pytest.param(ALL, ["delta"], ["delta", "foxtrot", "golf"], id="two-chains-from-child"),
    pytest.param(ALL, ["delta", "charlie"], list(ALL), id="two-chains-choose-both"),
])
def test_uid_filter_shows_neighbourhood(names: tuple[str, ...], uids: list[str],
                                        vertices: list[str]) -> None:
    dot = to_dot(graph(*names), uids=uids)
    shown = [line.strip()[1:-3] for line in dot.splitlines() if line.endswith('" [')]
    assert shown == vertices


@pytest.mark.parametrize(("names", "golden"), [
    pytest.param((), "empty.dot", id="empty"),
    pytest.param(ALL, "simple.dot", id="simple"),
])
def test_golden_files(names: tuple[str, ...], golden: str) -> None:
    assert to_dot(graph(*names)) == (TESTDATA / golden).read_text(encoding="utf-8")


def test_golden_escaping() -> None:
    i18n = "Iñtërnâtiônàlizætiøn,🐹"
    ref1 = Node(ObjectReference("ref1group/version", f"ref1kind-{i18n}", f"ref1name-{i18n}",
                                f'ref1-[]"\\{i18n}', "ref1ns"),
                owners=(OwnerRef("ref2group/version", "ref2kind-", "ref2name-", "ref2-"),))
    ref2 = Node(ObjectReference("ref2group/version", "ref2kind-", "ref2name-", "ref2-", "ref2ns"))
    ref2.add_dependent(ref1)
    got = to_dot({ref1.identity.uid: ref1, "ref2-": ref2})
    assert got == (TESTDATA / "escaping.dot").read_text(encoding="utf-8")


def test_virtual_and_deleting_flags_in_label() -> None:
    owner = Node(ObjectReference("apps/v1", "Deployment", "web", "d1", "ns"), virtual=True)
    child = Node(ObjectReference("apps/v1", "ReplicaSet", "web-1", "r1", "ns"),
                 owners=(OwnerRef("apps/v1", "Deployment", "web", "d1"),),
                 being_deleted=True, deleting_dependents=True)
    owner.add_dependent(child)
    dot = to_dot({"d1": owner, "r1": child})
    assert 'label="uid=d1\\nnamespace=ns\\nDeployment.v1.apps/web\\nvirtual\\n"' in dot
    assert "beingDeleted,deletingDependents\\n" in dot
    assert '"r1" -> "d1";' in dot
