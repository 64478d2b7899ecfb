"""GraphBuilder: events -> graph -> queues (upstream TestProcessEvent, graph_builder_test.go,
processGraphChanges' transitions, virtual nodes, and TestDoubleDeletionWithFinalizer)."""

from __future__ import annotations

import pytest

from kubegc.api.meta import ObjectReference
from kubegc.api.resources import GroupVersionKind
from kubegc.controllers.garbagecollector import Event, EventType, Node
from kubegc.controllers.garbagecollector.references import (
    get_alternate_owner_identity,
    references_diffs,
    unblocked_owner_uids,
)

from .steps import (
    Harness,
    add_event,
    delete_event,
    make_id,
    make_obj,
    ref_of,
    update_event,
)


def pod_event(event_type: EventType, uid: str, owners: list[str]) -> Event:
    """Upstream ``createEvent``: a Pod with bare-uid owner references."""
    meta: dict[str, object] = {"uid": uid, "name": uid, "namespace": "ns"}
    if owners:
        meta["ownerReferences"] = [{"uid": o} for o in owners]
    return Event(event_type, {"metadata": meta}, _pod_gvk())


def _pod_gvk() -> GroupVersionKind:
    return GroupVersionKind("", "v1", "Pod")


ADD, UPDATE, DELETE = EventType.ADD, EventType.UPDATE, EventType.DELETE


@pytest.mark.parametrize("events", [
    pytest.param([(ADD, "1", []), (ADD, "2", ["1"]), (ADD, "3", ["1", "2"])], id="test1"),
    pytest.param([(ADD, "1", []), (ADD, "2", ["1"]), (ADD, "3", ["1", "2"]), (ADD, "4", ["2"]),
                  (DELETE, "2", ["doesn't matter"])], id="test2"),
    pytest.param([(ADD, "1", []), (ADD, "2", ["1"]), (ADD, "3", ["1", "2"]), (ADD, "4", ["3"]),
                  (UPDATE, "2", ["4"])], id="test3"),
    pytest.param([(ADD, "4", ["2"]), (ADD, "3", ["1", "2"]), (ADD, "2", ["1"]), (ADD, "1", []),
                  (DELETE, "2", ["doesn't matter"])], id="reverse-test2"),
])
async def test_process_event_keeps_graph_invariants(
    events: list[tuple[EventType, str, list[str]]],
) -> None:
    h = Harness.create()
    for event_type, uid, owners in events:
        h.graph_changes.add(pod_event(event_type, uid, owners))
        await h.gc.graph_builder.process_graph_changes()
        h.verify_graph_invariants()


rc = make_id("v1", "ReplicationController", "ns1", "rc", "rcuid")
pod = make_id("v1", "Pod", "ns1", "pod", "poduid")


async def _process(h: Harness, *events: Event) -> None:
    for event in events:
        h.graph_changes.add(event)
        await h.gc.graph_builder.process_graph_changes()


def _pending_delete(h: Harness) -> list[ObjectReference]:
    return [n.identity for n in h.attempt_to_delete.pending]


async def test_foreground_deletion_start_marks_node_and_queues_dependents_then_node() -> None:
    h = Harness.create()
    await _process(h, add_event(rc), add_event(pod, rc))
    old = make_obj(rc)
    await _process(h, update_event(rc, old, finalizers=("foregroundDeletion",), deleting=True))

    node = h.gc.graph_builder.uid_to_node.read(rc.uid)
    assert node is not None and node.is_deleting_dependents() and node.is_being_deleted()
    assert _pending_delete(h) == [pod, rc]


async def test_orphan_deletion_start_queues_owner_for_orphaning_only() -> None:
    h = Harness.create()
    await _process(h, add_event(rc), add_event(pod, rc))
    await _process(h, update_event(rc, make_obj(rc), finalizers=("orphan",), deleting=True))

    assert [n.identity for n in h.attempt_to_orphan.pending] == [rc]
    assert _pending_delete(h) == []


async def test_readded_foreground_finalizer_is_a_new_transition() -> None:
    """TestDoubleDeletionWithFinalizer: DELETE Foreground again after the GC removed
    ``foregroundDeletion``."""
    h = Harness.create()
    deleting_plain = make_obj(pod, finalizers=("x/y",), deleting=True)
    await _process(h, add_event(pod, finalizers=("x/y", "foregroundDeletion"), deleting=True))
    assert _pending_delete(h) == [pod]
    h.attempt_to_delete.pending.clear()  # (the tracked view only: items stay queued)
    deleting_foreground = make_obj(pod, finalizers=("x/y", "foregroundDeletion"), deleting=True)
    await _process(h, update_event(pod, deleting_foreground, finalizers=("x/y",), deleting=True))
    assert _pending_delete(h) == []
    await _process(h, update_event(pod, deleting_plain, finalizers=("x/y", "foregroundDeletion"),
                                   deleting=True))
    assert _pending_delete(h) == [pod]


async def test_removing_blocking_reference_requeues_the_owner() -> None:
    h = Harness.create()
    blocking = ref_of(rc, block_owner_deletion=True)
    await _process(h, add_event(rc), add_event(pod, blocking))
    unblocked = ref_of(rc, block_owner_deletion=False)
    await _process(h, update_event(pod, make_obj(pod, blocking), unblocked))
    assert _pending_delete(h) == [rc]


async def test_observed_delete_caches_absence_and_requeues_dependents_and_waiting_owners() -> None:
    h = Harness.create()
    waiting = make_id("v1", "ReplicationController", "ns1", "waiting", "waitinguid")
    child = make_id("v1", "Pod", "ns1", "child", "childuid")
    await _process(h, add_event(waiting, finalizers=("foregroundDeletion",), deleting=True),
                   add_event(pod, waiting), add_event(child, pod))
    h.attempt_to_delete.pending.clear()

    await _process(h, delete_event(pod, waiting))

    assert pod.uid not in h.gc.graph_builder.uid_to_node
    assert h.gc.graph_builder.absent_owner_cache.keys() == [pod]
    assert _pending_delete(h) == [child, waiting]


async def test_virtual_owner_gets_dependent_namespace_and_is_queued() -> None:
    h = Harness.create()
    await _process(h, add_event(pod, rc))
    virtual = h.gc.graph_builder.uid_to_node.read(rc.uid)
    assert virtual is not None and virtual.virtual and virtual.identity == rc
    assert _pending_delete(h) == [rc]


ns1child1 = make_id("v1", "Child", "ns1", "child1", "childuid11")
ns1child2 = make_id("v1", "Child", "ns1", "child2", "childuid12")
ns2child1 = make_id("v1", "Child", "ns2", "child1", "childuid21")
clusterchild1 = make_id("v1", "Child", "", "child1", "childuidc1")
nsabsentparentns1 = make_id("v1", "NSParent", "ns1", "parentname", "parentuid")
nsabsentparentns2 = make_id("v1", "NSParent", "ns2", "parentname", "parentuid")
nsabsentparent_version = make_id("xx", "NSParent", "ns1", "parentname", "parentuid")
nsabsentparent_kind = make_id("v1", "xxxxxxxx", "ns1", "parentname", "parentuid")
nsabsentparent_name = make_id("v1", "NSParent", "ns1", "xxxxxxxxxx", "parentuid")
clusterabsentparent = make_id("v1", "ClusterParent", "", "parentname", "parentuid")
clusterabsentparent_version = make_id("xx", "ClusterParent", "", "parentname", "parentuid")
clusterabsentparent_kind = make_id("v1", "xxxxxxxxxxxxx", "", "parentname", "parentuid")
clusterabsentparent_name = make_id("v1", "ClusterParent", "", "xxxxxxxxxx", "parentuid")
clusterabsentparent_ns1_version = make_id("xx", "ClusterParent", "ns1", "parentname", "parentuid")
clusterabsentparent_ns1_kind = make_id("v1", "xxxxxxxxxxxxx", "ns1", "parentname", "parentuid")
ordered_ns = [make_id(f"v{i}", "kind", "ns1", "name", "uid") for i in range(1, 6)]
ordered_cluster = [make_id(f"v{i}", "kind", "", "name", "uid") for i in range(1, 6)]


def dep(identity: ObjectReference, *owners: ObjectReference) -> Node:
    return Node(identity, owners=tuple(ref_of(o) for o in owners))


@pytest.mark.parametrize(("deps", "absent", "expected"), [
    pytest.param([dep(ns1child1, nsabsentparentns1), dep(ns1child2, nsabsentparent_version)],
                 nsabsentparentns1, nsabsentparent_version, id="namespaced-alternate-version"),
    pytest.param([dep(ns1child1, nsabsentparentns1), dep(ns1child2, nsabsentparent_kind)],
                 nsabsentparentns1, nsabsentparent_kind, id="namespaced-alternate-kind"),
    pytest.param([dep(ns1child1, nsabsentparentns1), dep(ns2child1, nsabsentparentns2)],
                 nsabsentparentns1, nsabsentparentns2, id="namespaced-alternate-namespace"),
    pytest.param([dep(ns1child1, nsabsentparentns1), dep(ns1child1, nsabsentparent_name)],
                 nsabsentparentns1, nsabsentparent_name, id="namespaced-alternate-name"),
    pytest.param([dep(ns1child1, clusterabsentparent), dep(ns1child2, clusterabsentparent_version)],
                 clusterabsentparent, clusterabsentparent_ns1_version,
                 id="cluster-alternate-version"),
    pytest.param([dep(ns1child1, clusterabsentparent), dep(ns1child2, clusterabsentparent_kind)],
                 clusterabsentparent, clusterabsentparent_ns1_kind, id="cluster-alternate-kind"),
    pytest.param([dep(ns1child1, clusterabsentparent), dep(ns2child1, clusterabsentparent)],
                 clusterabsentparent, None, id="cluster-alternate-namespace-ignored"),
    pytest.param([dep(ns1child1, clusterabsentparent), dep(ns1child1, clusterabsentparent_name)],
                 clusterabsentparent, clusterabsentparent_name, id="cluster-alternate-name"),
    pytest.param([dep(ns1child1, *ordered_ns)], ordered_ns[-1], ordered_ns[0],
                 id="namespaced-first-if-absent-sorted-last"),
    pytest.param([dep(ns1child1, *ordered_ns)], ordered_ns[-2], ordered_ns[-1],
                 id="namespaced-next-after-absent"),
    pytest.param([dep(clusterchild1, *ordered_cluster)], ordered_cluster[-1], ordered_cluster[0],
                 id="cluster-first-if-absent-sorted-last"),
    pytest.param([dep(clusterchild1, *ordered_cluster)], ordered_cluster[-2], ordered_cluster[-1],
                 id="cluster-next-after-absent"),
    pytest.param([dep(ns1child1, clusterabsentparent,
                      make_id("v1", "Parent", "ns1", "name", "anotheruid"))],
                 clusterabsentparent, None, id="ignore-unrelated"),
    pytest.param([dep(ns1child1, clusterabsentparent, clusterabsentparent)],
                 clusterabsentparent, None, id="ignore-matches"),
    pytest.param([dep(clusterchild1, clusterabsentparent, clusterabsentparent_kind,
                      clusterabsentparent_kind)],
                 clusterabsentparent, clusterabsentparent_kind, id="collapse-duplicates"),
])
def test_get_alternate_owner_identity(
    deps: list[Node], absent: ObjectReference, expected: ObjectReference | None,
) -> None:
    assert get_alternate_owner_identity(deps, absent) == expected


def test_references_diffs_and_unblocked_owners() -> None:
    a, b, c = (ref_of(make_id("v1", "RC", "ns", n, n), block_owner_deletion=True) for n in "abc")
    b_unblocked = ref_of(make_id("v1", "RC", "ns", "b", "b"), block_owner_deletion=False)
    d = ref_of(make_id("v1", "RC", "ns", "d", "d"))

    diff = references_diffs([a, b, c], [b_unblocked, c, d])

    assert diff.added == (d,)
    assert diff.removed == (a,)
    assert [(p.old_ref, p.new_ref) for p in diff.changed] == [(b, b_unblocked)]
    assert unblocked_owner_uids(diff) == ["a", "b"]
    assert not references_diffs([a], [a])
