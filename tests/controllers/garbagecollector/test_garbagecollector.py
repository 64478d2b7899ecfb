"""GarbageCollector decisions (attempt_to_delete_item, orphaning, foreground finalizer
removal) against a FakeClient, one work item at a time (upstream's
``attemptToDeleteItem``, ``orphanDependents``, ``processDeletingDependentsItem``)."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api import errors
from kubegc.api.resources import GroupVersionResource
from kubegc.controllers.garbagecollector import (
    Classification,
    DecisionReason,
    Node,
    RecordAction,
    WorkItemAction,
)
from kubegc.controllers.garbagecollector.garbagecollector import DeleteItemOutcome
from kubegc.controllers.garbagecollector.orphan import orphan_dependents

from .steps import Harness, add_event, make_id, make_obj, ref_of

PODS = GroupVersionResource("", "v1", "pods")
RCS = GroupVersionResource("", "v1", "replicationcontrollers")
PVS = GroupVersionResource("", "v1", "persistentvolumes")
WIDGETS = GroupVersionResource("example.com", "v1", "widgets")

pod = make_id("v1", "Pod", "ns1", "ToBeDeletedPod", "456")
rc1 = make_id("v1", "ReplicationController", "ns1", "owner1", "123")
rc2 = make_id("v1", "ReplicationController", "ns1", "owner2", "124")
pv = make_id("v1", "PersistentVolume", "", "pv1", "pvuid")
widget = make_id("example.com/v1", "Widget", "ns1", "w1", "wuid")


def _pod_node(h: Harness) -> Node:
    """A node for ``pod`` with no owners: attempt_to_delete_item reads them live."""
    return Node(pod, virtual=True)


async def test_attempt_to_delete_item_deletes_pod_whose_owner_is_absent() -> None:
    h = Harness.create()
    h.client.add_object(PODS, make_obj(pod, rc1))
    item = _pod_node(h)

    await h.gc.attempt_to_delete_item(item)

    assert sorted(h.client.take_actions()) == sorted([
        "get /v1, Resource=pods ns=ns1 name=ToBeDeletedPod",
        "get /v1, Resource=replicationcontrollers ns=ns1 name=owner1",
        "delete /v1, Resource=pods ns=ns1 name=ToBeDeletedPod",
    ])
    assert item.virtual, "attempt_to_delete_item must not change virtual"
    # Background: gone at once
    assert h.client.stored(PODS, "ToBeDeletedPod", namespace="ns1") is None
    [record] = h.decisions.records
    assert (record.action, record.reason, record.propagation_policy) == (
        RecordAction.DELETE, DecisionReason.OWNER_ABSENT, "Background")
    assert record.object == pod
    assert [(o.uid, o.classification, o.detail) for o in record.owners] == [
        ("123", Classification.DANGLING, "NotFound")]


async def test_absent_owner_cache_skips_lookups_and_evicts_lru() -> None:
    h = Harness.create(absent_cache_size=2)
    pods = {}
    for name, owner_name, uid in [("rc1Pod1", "rc1", "1"), ("rc1Pod2", "rc1", "1"),
                                  ("rc2Pod1", "rc2", "2"), ("rc3Pod1", "rc3", "3")]:
        owner = make_id("v1", "ReplicationController", "ns1", owner_name, uid)
        identity = make_id("v1", "Pod", "ns1", name, f"pod-{name}")
        h.client.add_object(PODS, make_obj(identity, owner))
        pods[name] = Node(identity)

    for name in ("rc1Pod1", "rc2Pod1", "rc1Pod2", "rc3Pod1"):  # rc1 hit promotes it
        await h.gc.attempt_to_delete_item(pods[name])

    cache = h.gc.graph_builder.absent_owner_cache
    assert cache.has(make_id("v1", "ReplicationController", "ns1", "rc1", "1"))
    assert not cache.has(make_id("v1", "ReplicationController", "ns1", "rc2", "2"))
    assert cache.has(make_id("v1", "ReplicationController", "ns1", "rc3", "3"))
    gets = [a for a in h.client.take_actions()
            if a.endswith("replicationcontrollers ns=ns1 name=rc1")]
    assert gets == ["get /v1, Resource=replicationcontrollers ns=ns1 name=rc1"]


async def test_solid_owner_keeps_dependent_and_removes_dangling_reference() -> None:
    h = Harness.create()
    h.client.add_object(RCS, make_obj(rc2))
    h.client.add_object(PODS, make_obj(pod, rc1, rc2))

    await h.gc.attempt_to_delete_item(_pod_node(h))

    live = h.client.stored(PODS, pod.name, namespace="ns1")
    assert live is not None
    assert [r["uid"] for r in live["metadata"]["ownerReferences"]] == [rc2.uid]
    assert h.client.take_actions()[-1] == "patch /v1, Resource=pods ns=ns1 name=ToBeDeletedPod"
    [record] = h.decisions.records
    assert (record.action, record.reason) == (RecordAction.REMOVE_DANGLING_REFS,
                                              DecisionReason.SOLID_OWNER_REMAINS)
    assert {o.uid: o.classification for o in record.owners} == {
        rc1.uid: Classification.DANGLING, rc2.uid: Classification.SOLID}


async def test_custom_resource_falls_back_to_json_merge_patch() -> None:
    h = Harness.create()
    h.client.add_object(RCS, make_obj(rc2))
    h.client.add_object(WIDGETS, make_obj(widget, rc1, rc2))

    await h.gc.attempt_to_delete_item(Node(widget))

    live = h.client.stored(WIDGETS, "w1", namespace="ns1")
    assert live is not None and [r["uid"] for r in live["metadata"]["ownerReferences"]] == [rc2.uid]
    patches = [a for a in h.client.take_actions() if a.startswith("patch")]
    assert len(patches) == 2  # strategic (415), then JSON merge


def _rc(identity: Any, *, finalizers: tuple[str, ...] = (),
        deleting: bool = False) -> dict[str, Any]:
    return make_obj(identity, finalizers=finalizers, deleting=deleting)


@pytest.mark.parametrize(("pod_finalizers", "expected_policy"), [
    pytest.param((), "Background", id="no-gc-finalizer-background"),
    pytest.param(("orphan",), "Orphan", id="orphan-finalizer-honoured"),
    pytest.param(("foregroundDeletion",), "Foreground", id="foreground-finalizer-honoured"),
])
async def test_delete_policy_follows_the_victims_own_finalizers(
    pod_finalizers: tuple[str, ...], expected_policy: str,
) -> None:
    h = Harness.create()
    h.client.add_object(PODS, make_obj(pod, rc1, finalizers=(*pod_finalizers, "x/y")))

    await h.gc.attempt_to_delete_item(_pod_node(h))

    [record] = h.decisions.records
    assert record.propagation_policy == expected_policy
    live = h.client.stored(PODS, pod.name, namespace="ns1")
    assert live is not None and live["metadata"]["deletionTimestamp"]


@pytest.mark.parametrize(("seen", "reason", "detail"), [
    pytest.param(False, DecisionReason.OWNER_ABSENT, "UIDMismatch", id="uid-never-seen"),
    pytest.param(True, DecisionReason.OWNER_RECREATED, "Recreated", id="owner-seen-deleted"),
])
async def test_owner_name_held_by_another_uid_is_dangling(
    seen: bool, reason: DecisionReason, detail: str,
) -> None:
    """The name is held by another uid: dangling either way, but "recreated" only when
    the GC saw an object with the referenced uid (here: observed it deleted)."""
    h = Harness.create()
    h.client.add_object(RCS, make_obj(make_id("v1", "ReplicationController", "ns1", "owner1",
                                              "new")))
    h.client.add_object(PODS, make_obj(pod, rc1))
    if seen:
        h.gc.graph_builder.deleted_uids.add(rc1.uid)

    await h.gc.attempt_to_delete_item(_pod_node(h))

    assert h.client.stored(PODS, pod.name, namespace="ns1") is None
    [record] = h.decisions.records
    assert record.reason is reason
    assert [o.detail for o in record.owners] == [detail]
    if not seen:
        assert "no object with the referenced uid" in record.message


async def test_cluster_scoped_owner_is_looked_up_without_namespace() -> None:
    h = Harness.create()
    h.client.add_object(PVS, make_obj(pv))
    h.client.add_object(PODS, make_obj(pod, pv))

    await h.gc.attempt_to_delete_item(_pod_node(h))

    assert "get /v1, Resource=persistentvolumes name=pv1" in h.client.take_actions()
    assert h.client.stored(PODS, pod.name, namespace="ns1") is not None


async def test_unresolvable_owner_kind_is_retried_and_never_deleted() -> None:
    h = Harness.create()
    unknown = make_id("unknown.group/v1", "UnknownType", "ns1", "invalid-name", "x")
    h.client.add_object(PODS, make_obj(pod, unknown))
    item = Node(pod)

    action = await h.gc.attempt_to_delete_worker(item)

    assert action is WorkItemAction.REQUEUE
    assert h.client.stored(PODS, pod.name, namespace="ns1") is not None
    assert not h.decisions.records


async def test_waiting_owner_and_dependents_means_foreground_delete() -> None:
    h = Harness.create()
    h.client.add_object(RCS, _rc(rc1, finalizers=("foregroundDeletion",), deleting=True))
    h.client.add_object(PODS, make_obj(pod, rc1))
    child = make_id("v1", "Pod", "ns1", "child", "childuid")
    await _observe(h, add_event(pod, rc1), add_event(child, pod))
    item = h.gc.graph_builder.uid_to_node.read(pod.uid)
    assert item is not None

    await h.gc.attempt_to_delete_item(item)

    live = h.client.stored(PODS, pod.name, namespace="ns1")
    assert live is not None and live["metadata"]["finalizers"] == ["foregroundDeletion"]
    [record] = h.decisions.records
    assert (record.reason, record.propagation_policy) == (
        DecisionReason.OWNER_WAITING_FOREGROUND, "Foreground")


async def test_possible_cycle_unblocks_owner_references_before_foreground_delete() -> None:
    h = Harness.create()
    h.client.add_object(RCS, _rc(rc1, finalizers=("foregroundDeletion",), deleting=True))
    h.client.add_object(PODS, make_obj(pod, ref_of(rc1, block_owner_deletion=True)))
    child = make_id("v1", "Pod", "ns1", "child", "childuid")
    await _observe(h, add_event(pod, ref_of(rc1, block_owner_deletion=True)),
                   add_event(child, pod, finalizers=("foregroundDeletion",), deleting=True))
    item = h.gc.graph_builder.uid_to_node.read(pod.uid)
    assert item is not None

    await h.gc.attempt_to_delete_item(item)

    live = h.client.stored(PODS, pod.name, namespace="ns1")
    assert live is not None
    assert live["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] is False
    assert [r.action for r in h.decisions.records] == [RecordAction.UNBLOCK_PATCH,
                                                       RecordAction.DELETE]


async def _observe(h: Harness, *events: Any) -> None:
    for event in events:
        h.graph_changes.add(event)
        await h.gc.graph_builder.process_graph_changes()


async def test_deleting_dependents_item_keeps_finalizer_while_blocking_dependent_exists() -> None:
    h = Harness.create()
    h.client.add_object(RCS, _rc(rc1, finalizers=("foregroundDeletion",), deleting=True))
    await _observe(h, add_event(rc1, finalizers=("foregroundDeletion",), deleting=True),
                   add_event(pod, ref_of(rc1, block_owner_deletion=True)))
    owner = h.gc.graph_builder.uid_to_node.read(rc1.uid)
    assert owner is not None and owner.is_deleting_dependents()
    h.attempt_to_delete.pending.clear()

    await h.gc.process_deleting_dependents_item(owner)

    assert [n.identity for n in h.attempt_to_delete.pending] == [pod]
    live = h.client.stored(RCS, rc1.name, namespace="ns1")
    assert live is not None and live["metadata"]["finalizers"] == ["foregroundDeletion"]


async def test_deleting_dependents_item_removes_finalizer_when_only_non_blocking_left() -> None:
    h = Harness.create()
    h.client.add_object(RCS, _rc(rc1, finalizers=("foregroundDeletion", "x/y"), deleting=True))
    await _observe(h, add_event(rc1, finalizers=("foregroundDeletion", "x/y"), deleting=True),
                   add_event(pod, ref_of(rc1, block_owner_deletion=False)))
    owner = h.gc.graph_builder.uid_to_node.read(rc1.uid)
    assert owner is not None

    await h.gc.attempt_to_delete_item(owner)

    live = h.client.stored(RCS, rc1.name, namespace="ns1")
    assert live is not None and live["metadata"]["finalizers"] == ["x/y"]
    [record] = h.decisions.records
    assert (record.action, record.reason) == (RecordAction.REMOVE_FINALIZER,
                                              DecisionReason.NO_BLOCKING_DEPENDENTS)


async def test_orphan_worker_strips_owner_reference_then_removes_orphan_finalizer() -> None:
    h = Harness.create()
    h.client.add_object(RCS, _rc(rc1, finalizers=("orphan",), deleting=True))
    gone = make_id("v1", "Pod", "ns1", "gone", "goneuid")  # 404 on its patch is ignored
    h.client.add_object(PODS, make_obj(pod, rc1, rc2))
    await _observe(h, add_event(pod, rc1, rc2), add_event(gone, rc1),
                   add_event(rc1, finalizers=("orphan",), deleting=True))
    assert [n.identity for n in h.attempt_to_orphan.pending] == [rc1]

    await h.gc.process_attempt_to_orphan_worker()

    live = h.client.stored(PODS, pod.name, namespace="ns1")
    assert live is not None and [r["uid"] for r in live["metadata"]["ownerReferences"]] == [rc2.uid]
    assert h.client.stored(RCS, rc1.name, namespace="ns1") is None  # finalizer removed: RC gone
    assert [(r.action, r.object) for r in h.decisions.records] == [
        (RecordAction.ORPHAN_PATCH, pod), (RecordAction.REMOVE_FINALIZER, rc1)]


async def test_orphan_dependents_failure_reports_the_conflict() -> None:
    h = Harness.create()
    dependent = make_id("v1", "Pod", "ns1", "pod", "poduid")
    h.client.add_object(PODS, make_obj(dependent, rc1))
    h.client.fail_matching({"patch /v1, Resource=pods ns=ns1 name=pod": errors.conflict(
        errors.GroupResource("", "pods"), "pod", "the server reported a conflict")})

    with pytest.raises(Exception, match="the server reported a conflict"):
        await orphan_dependents(h.gc.actions, rc1, [Node(dependent)])


async def test_virtual_node_not_found_enqueues_virtual_delete() -> None:
    h = Harness.create()
    await _observe(h, add_event(pod, rc1))
    virtual_owner = h.gc.graph_builder.uid_to_node.read(rc1.uid)
    assert virtual_owner is not None and virtual_owner.virtual

    action = await h.gc.attempt_to_delete_worker(virtual_owner)

    assert action is WorkItemAction.FORGET
    [event] = h.graph_changes.pending
    assert event.virtual and event.obj["metadata"]["uid"] == rc1.uid


async def test_item_gone_between_get_and_delete_enqueues_virtual_delete() -> None:
    h = Harness.create()
    h.client.add_object(PODS, make_obj(pod, rc1))  # its owner rc1 is absent: dangling
    h.client.fail_matching({f"delete /v1, Resource=pods ns=ns1 name={pod.name}": (
        errors.not_found(errors.GroupResource("", "pods"), pod.name))})
    await _observe(h, add_event(pod, rc1))
    node = h.gc.graph_builder.uid_to_node.read(pod.uid)
    assert node is not None

    outcome = await h.gc.attempt_to_delete_item(node)

    assert outcome is DeleteItemOutcome.ENQUEUED_VIRTUAL_DELETE
    assert [e.obj["metadata"]["uid"] for e in h.graph_changes.pending if e.virtual] == [
        pod.uid]
    assert h.decisions.records == []


# -- deletes decided on the monitor cache (docs/architecture.md) --------------------------


async def _cached(h: Harness, gvr: GroupVersionResource, obj: dict[str, Any]) -> None:
    """Put ``obj`` into the monitor informer's cache for ``gvr``, as its watch would."""
    await h.gc.graph_builder.monitors.sync([gvr])
    monitor = h.gc.graph_builder.monitors.get(gvr)
    assert monitor is not None
    monitor.informer.indexer.add(obj)


async def _observed_and_cached_pod(h: Harness) -> Node:
    """The pod owned by rc1, stored, in its monitor's cache and in the graph."""
    stored = h.client.add_object(PODS, make_obj(pod, rc1))
    await _cached(h, PODS, stored)
    await _observe(h, add_event(pod, rc1))
    item = h.gc.graph_builder.uid_to_node.read(pod.uid)
    assert item is not None
    return item


async def test_delete_decided_on_the_cached_copy_skips_the_live_get() -> None:
    h = Harness.create()
    item = await _observed_and_cached_pod(h)
    h.client.take_actions()

    assert await h.gc.attempt_to_delete_worker(item) is WorkItemAction.FORGET

    assert h.client.take_actions() == [
        "get /v1, Resource=replicationcontrollers ns=ns1 name=owner1",  # owners: live, as upstream
        "delete /v1, Resource=pods ns=ns1 name=ToBeDeletedPod",
    ]
    assert h.client.stored(PODS, pod.name, namespace="ns1") is None
    [record] = h.decisions.records
    assert (record.action, record.reason, record.propagation_policy) == (
        RecordAction.DELETE, DecisionReason.OWNER_ABSENT, "Background")


async def test_a_cached_copys_references_are_parsed_once_per_list() -> None:
    """The worker reads a cached copy's owner references through the builder's memo
    (``GraphBuilder.cached_owner_refs``): the same parse for every item sharing the list."""
    from kubegc.controllers.garbagecollector.graph import owner_refs_of

    h = Harness.create()
    await _observed_and_cached_pod(h)
    cached = h.gc.graph_builder.monitors.cached(PODS, "ns1", pod.name)
    assert cached is not None
    refs = h.gc.graph_builder.cached_owner_refs(cached)
    assert refs == owner_refs_of(cached) and refs
    assert h.gc.graph_builder.cached_owner_refs(cached) is refs


async def test_stale_cached_copy_never_deletes_an_object_that_gained_a_solid_owner() -> None:
    """The cache still shows only the absent owner; the live object has gained a solid one.
    The delete carries the cached resourceVersion, so it conflicts and the live path keeps
    the object (upstream's GET-then-DELETE, decided on the live object, keeps it too)."""
    h = Harness.create()
    h.client.add_object(RCS, make_obj(rc2))
    stale = h.client.add_object(PODS, make_obj(pod, rc1))
    await _cached(h, PODS, stale)
    await _observe(h, add_event(pod, rc1))
    item = h.gc.graph_builder.uid_to_node.read(pod.uid)
    assert item is not None
    await h.client.patch(PODS, pod.name, {"metadata": {"ownerReferences": [
        ref_of(rc1).to_dict(), ref_of(rc2).to_dict()]}}, namespace="ns1")
    h.client.take_actions()

    assert await h.gc.attempt_to_delete_worker(item) is WorkItemAction.FORGET

    assert h.client.take_actions() == [
        "get /v1, Resource=replicationcontrollers ns=ns1 name=owner1",
        "delete /v1, Resource=pods ns=ns1 name=ToBeDeletedPod",  # 409: resourceVersion
        "get /v1, Resource=pods ns=ns1 name=ToBeDeletedPod",  # upstream's live path
        "get /v1, Resource=replicationcontrollers ns=ns1 name=owner2",  # owner1: cached absent
        "patch /v1, Resource=pods ns=ns1 name=ToBeDeletedPod",
    ]
    live = h.client.stored(PODS, pod.name, namespace="ns1")
    assert live is not None
    assert [r["uid"] for r in live["metadata"]["ownerReferences"]] == [rc2.uid]
    assert [r.action for r in h.decisions.records] == [RecordAction.REMOVE_DANGLING_REFS]


async def test_cached_copy_of_an_object_already_gone_leads_to_a_virtual_delete() -> None:
    h = Harness.create()
    item = await _observed_and_cached_pod(h)
    h.client.remove_object(PODS, pod.name, namespace="ns1")
    h.client.take_actions()

    assert await h.gc.attempt_to_delete_worker(item) is WorkItemAction.FORGET

    assert h.client.take_actions()[-2:] == [
        "delete /v1, Resource=pods ns=ns1 name=ToBeDeletedPod",  # 404
        "get /v1, Resource=pods ns=ns1 name=ToBeDeletedPod",  # 404: as upstream
    ]
    [event] = h.graph_changes.pending
    assert event.virtual and event.obj["metadata"]["uid"] == pod.uid
    assert h.decisions.records == []


async def test_solid_owner_seen_in_the_cached_copy_is_decided_on_the_live_object() -> None:
    h = Harness.create()
    h.client.add_object(RCS, make_obj(rc2))
    stored = h.client.add_object(PODS, make_obj(pod, rc1, rc2))
    await _cached(h, PODS, stored)
    await _observe(h, add_event(pod, rc1, rc2))
    item = h.gc.graph_builder.uid_to_node.read(pod.uid)
    assert item is not None
    h.client.take_actions()

    await h.gc.attempt_to_delete_item(item)

    # a patch is decided on the live object; the owners looked up for the cached copy
    # (same references) are not looked up again: no more calls than upstream's
    assert h.client.take_actions() == [
        "get /v1, Resource=replicationcontrollers ns=ns1 name=owner1",
        "get /v1, Resource=replicationcontrollers ns=ns1 name=owner2",
        "get /v1, Resource=pods ns=ns1 name=ToBeDeletedPod",
        "patch /v1, Resource=pods ns=ns1 name=ToBeDeletedPod",
    ]
    assert [r.action for r in h.decisions.records] == [RecordAction.REMOVE_DANGLING_REFS]


async def test_solid_owners_only_in_the_cached_copy_need_no_live_get() -> None:
    """Nothing to write: the decision on the cached copy is final (upstream reads the item
    and its owner; kubegc only its owner)."""
    h = Harness.create()
    h.client.add_object(RCS, make_obj(rc2))
    stored = h.client.add_object(PODS, make_obj(pod, rc2))
    await _cached(h, PODS, stored)
    await _observe(h, add_event(pod, rc2))
    item = h.gc.graph_builder.uid_to_node.read(pod.uid)
    assert item is not None
    h.client.take_actions()

    assert await h.gc.attempt_to_delete_worker(item) is WorkItemAction.FORGET

    assert h.client.take_actions() == [
        "get /v1, Resource=replicationcontrollers ns=ns1 name=owner2"]
    assert h.decisions.records == []
