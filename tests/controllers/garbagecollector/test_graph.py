"""Graph nodes: lazy dependents, blocking dependents, memory budget (bench/bench_gc.py's
``TARGET_NODE_BYTES``)."""

from __future__ import annotations

import sys
import tracemalloc

from kubegc.api.meta import ObjectReference
from kubegc.api.sparse import MIN_ROOM
from kubegc.controllers.garbagecollector import ConcurrentUIDToNode, Node, OwnerRef


def test_dependents_set_is_created_lazily_and_dropped_when_empty() -> None:
    owner = Node(ObjectReference("v1", "RC", "rc", "o"))
    child = Node(ObjectReference("v1", "Pod", "p", "c"), owners=(OwnerRef("v1", "RC", "rc", "o"),))
    assert owner._dependents is None
    owner.add_dependent(child)
    assert owner.get_dependents() == [child] and owner.has_dependent(child)
    owner.delete_dependent(child)
    assert owner._dependents is None and owner.dependents_length() == 0


def test_blocking_dependents_only_counts_block_owner_deletion_true() -> None:
    owner = Node(ObjectReference("v1", "RC", "rc", "o"))
    kids = {
        flag: Node(ObjectReference("v1", "Pod", f"p{flag}", f"c{flag}"),
                   owners=(OwnerRef("v1", "RC", "rc", "o", block_owner_deletion=flag),))
        for flag in (True, False, None)
    }
    for kid in kids.values():
        owner.add_dependent(kid)
    assert owner.blocking_dependents() == [kids[True]]


def test_clone_copies_dependents_and_is_a_different_item() -> None:
    owner = Node(ObjectReference("v1", "RC", "rc", "o"), virtual=True)
    child = Node(ObjectReference("v1", "Pod", "p", "c"))
    owner.add_dependent(child)
    copy = owner.clone()
    assert copy is not owner and copy != owner
    assert copy.get_dependents() == [child] and copy.virtual


def test_memory_per_node_stays_within_budget() -> None:
    """At most ~1 KB per node including strings; the structure itself (the
    strings are shared with the informer cache) must stay well below that."""
    count = 20_000
    inputs = [(f"ns-{i % 50}", f"pod-{i}", f"uid-{i}", f"rs-{(i - 1) // 10}",
               f"uid-{(i - 1) // 10}") for i in range(count)]
    graph = ConcurrentUIDToNode()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for ns, name, uid, owner_name, owner_uid in inputs:
        node = Node(ObjectReference("v1", "Pod", name, uid, ns),
                    owners=(OwnerRef("apps/v1", "ReplicaSet", owner_name, owner_uid),))
        graph.write(node)
        owner = graph.read(owner_uid)
        if owner is not None:
            owner.add_dependent(node)
    per_node = (tracemalloc.get_traced_memory()[0] - before) / count
    tracemalloc.stop()
    assert per_node < 700, f"{per_node:.0f} B/node"


def test_a_shared_owner_references_list_is_parsed_once() -> None:
    from kubegc.controllers.garbagecollector.graph import SharedOwnerRefs, parse_owner_refs

    parse = SharedOwnerRefs(limit=2)
    refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u"}]
    first, malformed = parse({"metadata": {"ownerReferences": refs}})
    assert malformed == [] and first == parse_owner_refs({"metadata": {"ownerReferences": refs}})[0]
    assert parse({"metadata": {"ownerReferences": refs}})[0] is first
    copy = [dict(refs[0])]  # an equal list of its own: parsed (equal, not the same tuple)
    assert parse({"metadata": {"ownerReferences": copy}})[0] == first
    bad = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o"}]  # no uid
    assert parse({"metadata": {"ownerReferences": bad}}) == ((), [(0, bad[0])])
    assert parse({"metadata": {}}) == ((), [])


def test_the_graph_gives_its_room_back_once_the_objects_are_deleted() -> None:
    """Issue 27: ``uid_to_node`` and an owner's dependents, once most of 20,000 nodes are
    deleted, hold tables sized for what is left, not for the peak."""
    graph = ConcurrentUIDToNode()
    owner = Node(ObjectReference("v1", "ConfigMap", "owner", "uid-owner", "ns"))
    graph.write(owner)
    ref = (OwnerRef("v1", "ConfigMap", "owner", "uid-owner"),)
    nodes = [Node(ObjectReference("v1", "ConfigMap", f"cm-{i}", f"uid-{i}", "ns"), owners=ref)
             for i in range(20_000)]
    for node in nodes:
        graph.write(node)
        owner.add_dependent(node)
    peak = sys.getsizeof(graph._nodes), sys.getsizeof(owner._dependents)
    for node in nodes[10:]:
        graph.delete(node.identity.uid)
        owner.delete_dependent(node)
    assert len(graph) == 11 and owner.get_dependents() == nodes[:10]
    assert min(peak) > 4 * MIN_ROOM
    assert sys.getsizeof(graph._nodes) <= MIN_ROOM
    assert sys.getsizeof(owner._dependents) <= MIN_ROOM
