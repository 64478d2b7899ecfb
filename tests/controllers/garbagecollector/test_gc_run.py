"""The whole GC running (informers, graph builder, workers, sync) against a FakeClient with
API-server deletion semantics: upstream's test/integration/garbagecollector scenarios and two
of its e2e tests in miniature. Waits are on conditions with deadlines, never fixed sleeps."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from kubegc.api import errors
from kubegc.api.clock import RealClock
from kubegc.api.resources import GroupVersionResource
from kubegc.client.cache import SharedInformerFactory
from kubegc.client.fake import Action, FakeClient, client_go_string
from kubegc.client.interface import DeleteOptions, PatchType
from kubegc.controllers.garbagecollector import (
    DecisionReason,
    GarbageCollector,
    InMemoryDecisionSink,
    RecordAction,
)

from .steps import (
    DEFAULT_RESOURCES,
    FakeRecorder,
    api_resource,
    fake_client,
    make_id,
    make_obj,
    ref_of,
)

PODS = GroupVersionResource("", "v1", "pods")
RCS = GroupVersionResource("", "v1", "replicationcontrollers")
SECRETS = GroupVersionResource("", "v1", "secrets")
WIDGETS = GroupVersionResource("example.com", "v1", "widgets")
CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")
GADGETS = GroupVersionResource("example.com", "v1", "gadgets")
DEADLINE = 5.0


async def eventually(condition: Callable[[], bool], *, timeout: float = DEADLINE,
                     what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


@dataclass
class Running:
    gc: GarbageCollector
    client: FakeClient
    decisions: InMemoryDecisionSink

    def exists(self, gvr: GroupVersionResource, name: str, ns: str = "ns1") -> bool:
        return self.client.stored(gvr, name, namespace=ns) is not None

    def get(self, gvr: GroupVersionResource, name: str, ns: str = "ns1") -> dict[str, Any]:
        obj = self.client.stored(gvr, name, namespace=ns)
        assert obj is not None, f"{name} is gone"
        return obj

    async def observed(self, *objs: dict[str, Any]) -> None:
        uids = [o["metadata"]["uid"] for o in objs]
        await eventually(lambda: all(self.gc.graph_has_uid(u) for u in uids),
                         what=f"graph to hold {uids}")

    async def delete(self, gvr: GroupVersionResource, name: str, policy: str,
                     ns: str = "ns1") -> None:
        await self.client.delete(gvr, name, namespace=ns,
                                 options=DeleteOptions(propagation_policy=policy))

    async def settle(self) -> None:
        await eventually(self.gc.is_idle, what="GC to be idle")


@pytest.fixture
async def running() -> AsyncIterator[Running]:
    clock = RealClock()
    client = fake_client(clock=clock)
    decisions = InMemoryDecisionSink()
    factory = SharedInformerFactory(client, clock=clock)
    gc = GarbageCollector(client, informer_factory=factory, recorder=FakeRecorder(), clock=clock,
                          decisions=decisions, workers=3, sync_period=3600,
                          initial_sync_timeout=DEADLINE)
    gc.start()
    try:
        await eventually(gc.is_synced, what="GC monitors to sync")
        yield Running(gc, client, decisions)
    finally:
        await gc.stop()
        await factory.stop()  # the informers' owner stops them, not the GC


def rc(name: str) -> dict[str, Any]:
    return make_obj(make_id("v1", "ReplicationController", "ns1", name, f"uid-{name}"))


def pod(name: str, *owners: Any, finalizers: tuple[str, ...] = ()) -> dict[str, Any]:
    return make_obj(make_id("v1", "Pod", "ns1", name, f"uid-{name}"), *owners,
                    finalizers=finalizers)


def ref(obj: dict[str, Any], **flags: Any) -> Any:
    return ref_of(make_id(obj["apiVersion"], obj["kind"], obj["metadata"].get("namespace", ""),
                          obj["metadata"]["name"], obj["metadata"]["uid"]), **flags)


# upstream: TestCascadingDeletion
async def test_cascading_background_deletion(running: Running) -> None:
    rc1, rc2 = running.client.add_object(RCS, rc("rc1")), running.client.add_object(RCS, rc("rc2"))
    pods = [running.client.add_object(PODS, p) for p in (
        pod("pod1", ref(rc1)), pod("pod2"), pod("pod3", ref(rc1), ref(rc2)))]
    await running.observed(rc1, rc2, *pods)

    await running.delete(RCS, "rc1", "Background")

    await eventually(lambda: not running.exists(PODS, "pod1"), what="pod1 deleted")
    await eventually(lambda: len(running.get(PODS, "pod3")["metadata"]["ownerReferences"]) == 1)
    await running.settle()
    assert running.exists(PODS, "pod2")
    assert running.get(PODS, "pod3")["metadata"]["ownerReferences"][0]["uid"] == "uid-rc2"
    assert not running.gc.graph_has_uid("uid-rc1")
    by_object = {r.object.name: r for r in running.decisions}
    assert by_object["pod1"].action is RecordAction.DELETE
    assert by_object["pod3"].action is RecordAction.REMOVE_DANGLING_REFS


# upstream: TestCreateWithNonExistentOwner
async def test_create_with_non_existent_owner_is_collected(running: Running) -> None:
    ghost = make_id("v1", "ReplicationController", "ns1", "test.rc.1", "doesn't matter")
    running.client.add_object(PODS, pod("test.pod.1", ghost))
    await eventually(lambda: not running.exists(PODS, "test.pod.1"), what="pod deleted")
    [record] = [r for r in running.decisions if r.action is RecordAction.DELETE]
    assert record.reason is DecisionReason.OWNER_ABSENT


# upstream: TestOrphaning
async def test_orphaning_strips_references_and_keeps_dependents(running: Running) -> None:
    owner = running.client.add_object(RCS, rc("test.rc.1"))
    pods = [running.client.add_object(PODS, pod(f"pod{i}", ref(owner))) for i in range(3)]
    await running.observed(owner, *pods)

    await running.delete(RCS, "test.rc.1", "Orphan")

    await eventually(lambda: not running.exists(RCS, "test.rc.1"), what="RC gone")
    await running.settle()
    for i in range(3):
        assert "ownerReferences" not in running.get(PODS, f"pod{i}")["metadata"]
    actions = [r.action for r in running.decisions]
    assert actions.count(RecordAction.ORPHAN_PATCH) == 3
    assert actions[-1] is RecordAction.REMOVE_FINALIZER


async def test_foreground_owner_outlives_its_blocking_dependents(running: Running) -> None:
    """e2e "should keep the rc around until all its pods are deleted if the deleteOptions
    says so"."""
    owner = running.client.add_object(RCS, rc("rc"))
    pods = [running.client.add_object(PODS, pod(f"p{i}", ref(owner, controller=True,
                                                                  block_owner_deletion=True)))
            for i in range(5)]
    await running.observed(owner, *pods)

    await running.delete(RCS, "rc", "Foreground")

    await eventually(lambda: not running.exists(RCS, "rc"), what="RC gone")
    assert not any(running.exists(PODS, f"p{i}") for i in range(5))
    last = running.decisions.records[-1]
    assert (last.object.name, last.reason) == ("rc", DecisionReason.NO_BLOCKING_DEPENDENTS)


# upstream: TestSolidOwnerDoesNotBlockWaitingOwner
async def test_solid_owner_does_not_block_waiting_owner(running: Running) -> None:
    rc1, rc2 = running.client.add_object(RCS, rc("rc1")), running.client.add_object(RCS, rc("rc2"))
    p = running.client.add_object(PODS, pod("pod", ref(rc1, block_owner_deletion=True), ref(rc2)))
    await running.observed(rc1, rc2, p)

    await running.delete(RCS, "rc1", "Foreground")

    await eventually(lambda: not running.exists(RCS, "rc1"), what="rc1 gone")
    refs = running.get(PODS, "pod")["metadata"]["ownerReferences"]
    assert [r["uid"] for r in refs] == ["uid-rc2"]


# upstream: TestNonBlockingOwnerRefDoesNotBlock
async def test_non_blocking_references_do_not_block(running: Running) -> None:
    owner = running.client.add_object(RCS, rc("rc"))
    p1 = running.client.add_object(PODS, pod("pod1", ref(owner), finalizers=("x/y",)))
    p2 = running.client.add_object(PODS, pod("pod2", ref(owner, block_owner_deletion=False),
                                             finalizers=("x/y",)))
    await running.observed(owner, p1, p2)

    await running.delete(RCS, "rc", "Foreground")

    await eventually(lambda: not running.exists(RCS, "rc"), what="RC gone")
    assert running.exists(PODS, "pod1") and running.exists(PODS, "pod2")


# upstream: TestBlockingOwnerRefDoesBlock
async def test_blocking_reference_that_cannot_go_away_blocks(running: Running) -> None:
    owner = running.client.add_object(RCS, rc("rc"))
    p = running.client.add_object(PODS, pod("pod", ref(owner, block_owner_deletion=True),
                                            finalizers=("x/y",)))
    await running.observed(owner, p)

    await running.delete(RCS, "rc", "Foreground")

    await eventually(lambda: bool(running.get(PODS, "pod")["metadata"].get("deletionTimestamp")))
    await running.settle()
    assert running.get(RCS, "rc")["metadata"]["finalizers"] == ["foregroundDeletion"]


# upstream e2e: "should not be blocked by dependency circle"
async def test_dependency_cycle_does_not_block_deletion(running: Running) -> None:
    ids = {n: make_id("v1", "Pod", "ns1", n, f"uid-{n}") for n in ("pod1", "pod2", "pod3")}
    flags = {"controller": True, "block_owner_deletion": True}
    for name, owner in (("pod1", "pod3"), ("pod2", "pod1"), ("pod3", "pod2")):
        running.client.add_object(PODS, make_obj(ids[name], ref_of(ids[owner], **flags)))
    await eventually(lambda: all(running.gc.graph_has_uid(i.uid) for i in ids.values()))

    await running.delete(PODS, "pod1", "Foreground")

    await eventually(lambda: not any(running.exists(PODS, n) for n in ids), what="all pods gone")
    assert RecordAction.UNBLOCK_PATCH in [r.action for r in running.decisions]


# upstream: TestDoubleDeletionWithFinalizer
async def test_double_foreground_deletion_with_finalizer(running: Running) -> None:
    lucy = running.client.add_object(PODS, pod("lucy", finalizers=("x/y",)))
    await running.observed(lucy)

    def finalizers() -> list[str]:
        return list(running.get(PODS, "lucy")["metadata"].get("finalizers") or [])

    for _ in range(2):
        await running.delete(PODS, "lucy", "Foreground")
        await eventually(lambda: finalizers() == ["x/y"], what="foregroundDeletion removed")
    await running.client.patch(PODS, "lucy", {"metadata": {"finalizers": None}}, namespace="ns1",
                               patch_type=PatchType.MERGE)
    assert not running.exists(PODS, "lucy")


# upstream: TestMixedRelationships
async def test_custom_resource_owner_cascades_to_core_dependent(running: Running) -> None:
    owner = running.client.add_object(WIDGETS, make_obj(make_id("example.com/v1", "Widget", "ns1",
                                                                "owner", "uid-widget")))
    cm = running.client.add_object(CONFIGMAPS, make_obj(
        make_id("v1", "ConfigMap", "ns1", "cm", "uid-cm"), ref(owner)))
    await running.observed(owner, cm)

    await running.delete(WIDGETS, "owner", "Foreground")

    await eventually(lambda: not running.exists(WIDGETS, "owner"), what="owner gone")
    assert not running.exists(CONFIGMAPS, "cm")


# upstream: TestCRDDeletionCascading
async def test_resync_starts_and_stops_monitors(running: Running) -> None:
    gadgets = api_resource("example.com", "v1", "gadgets", "Gadget")
    assert GADGETS not in running.gc.graph_builder.monitors
    running.client.register(gadgets)

    result = await running.gc.resync()

    assert result.changed and GADGETS in running.gc.graph_builder.monitors
    gadget = make_id("example.com/v1", "Gadget", "ns1", "g", "uid-g")
    g = running.client.add_object(GADGETS, make_obj(gadget))
    await running.observed(g)
    running.client.unregister(GADGETS)
    await running.gc.resync()
    assert GADGETS not in running.gc.graph_builder.monitors


# upstream: TestGarbageCollectorSync
async def test_discovery_failure_keeps_monitors(running: Running) -> None:
    before = running.gc.graph_builder.monitors.resources()

    def discovery_down(action: Action) -> None:
        raise RuntimeError("discovery down")

    running.client.prepend_reactor("discover", discovery_down)
    result = await running.gc.resync()
    assert not result.changed and result.errors
    assert running.gc.graph_builder.monitors.resources() == before


# upstream: DefaultIgnoredResources
async def test_events_are_never_monitored(running: Running) -> None:
    assert GroupVersionResource("", "v1", "events") not in running.gc.graph_builder.monitors
    assert PODS in running.gc.graph_builder.monitors


# upstream: TestCascadingDeleteOnCRDConversionFailure
async def test_unsyncable_resource_does_not_stop_collection() -> None:
    clock = RealClock()
    client = fake_client(clock=clock)
    client.fail_matching({"list /v1, Resource=secrets": errors.internal_error(
        f"cannot list {SECRETS}")})
    factory = SharedInformerFactory(client, clock=clock)
    gc = GarbageCollector(client, informer_factory=factory, recorder=FakeRecorder(), clock=clock,
                          workers=2, sync_period=3600, initial_sync_timeout=0)
    gc.start()
    try:
        owner = client.add_object(RCS, rc("rc"))
        p = client.add_object(PODS, pod("pod", ref(owner)))
        await eventually(lambda: gc.graph_has_uid(p["metadata"]["uid"]))
        await client.delete(RCS, "rc", namespace="ns1",
                            options=DeleteOptions(propagation_policy="Background"))
        await eventually(lambda: client.stored(PODS, "pod", namespace="ns1") is None,
                         what="pod deleted")
        assert not gc.is_synced()
    finally:
        await gc.stop()
        await factory.stop()


async def test_dot_shows_the_neighbourhood_of_a_uid(running: Running) -> None:
    owner = running.client.add_object(RCS, rc("rc"))
    p = running.client.add_object(PODS, pod("pod", ref(owner)))
    rc2 = running.client.add_object(RCS, rc("rc2"))
    other = running.client.add_object(PODS, pod("other", ref(rc2)))
    await running.observed(owner, p, other)

    dot = running.gc.dot(uid="uid-pod")

    assert '"uid-pod" -> "uid-rc";' in dot and "uid-other" not in dot
    assert "uid-other" in running.gc.dot()


async def test_stop_leaves_shared_informers_to_their_owner() -> None:
    clock = RealClock()
    client = fake_client(clock=clock)
    factory = SharedInformerFactory(client, clock=clock)
    gc = GarbageCollector(client, informer_factory=factory, recorder=FakeRecorder(), clock=clock,
                          workers=1, sync_period=3600, initial_sync_timeout=0)
    gc.start()
    try:
        await eventually(gc.is_synced)
        await gc.stop()
        pods = factory.for_resource(PODS, metadata_only=True)
        assert pods.is_started()  # still serving other controllers
        count = len(client.objects(PODS))
        client.add_object(PODS, pod("late", make_id("v1", "ReplicationController", "ns1", "x",
                                                    "x")))
        await eventually(lambda: pods.indexer.get_by_key("ns1/late") is not None)
        assert len(client.objects(PODS)) == count + 1 and not gc.graph_has_uid("uid-late")
    finally:
        await factory.stop()


async def test_unresolvable_kind_is_parked_and_gc_still_settles(running: Running) -> None:
    """As in TestCrossNamespaceReferences and TestClusterScopedOwners: a reference to a kind the
    server does not serve is retried with backoff, never deleted, and does not keep the GC from
    being idle."""
    unknown = make_id("unknown.group/v1", "UnknownType", "ns1", "invalid-name", "uid-unknown")
    running.client.add_object(PODS, pod("cm-invalid", unknown))

    await eventually(lambda: bool(running.gc.parked()), what="dependent parked")
    await running.settle()

    assert running.exists(PODS, "cm-invalid")
    assert running.gc.parked() == [unknown]  # the virtual owner: its GET cannot be mapped
    assert running.gc.attempt_to_delete.waiting_count() == 1


class _SlowDeleteClient(FakeClient):
    """Deletes happen at once; their responses wait for ``respond`` (a slow network)."""

    def __init__(self, *, clock: RealClock) -> None:
        super().__init__(resources=DEFAULT_RESOURCES, clock=clock,
                         action_format=client_go_string)
        self.deleted = asyncio.Event()
        self.respond = asyncio.Event()

    async def delete(self, gvr: GroupVersionResource, name: str, *, namespace: str = "",
                     options: DeleteOptions | None = None) -> dict[str, Any]:
        done = await super().delete(gvr, name, namespace=namespace, options=options)
        self.deleted.set()
        await self.respond.wait()
        return done


async def test_stop_lets_a_worker_record_the_delete_it_has_in_hand() -> None:
    """A clean shutdown loses no decision record: a delete already sent when ``stop`` is
    called is answered, recorded, and only then are the workers cancelled."""
    clock = RealClock()
    client = _SlowDeleteClient(clock=clock)
    decisions = InMemoryDecisionSink()
    factory = SharedInformerFactory(client, clock=clock)
    gc = GarbageCollector(client, informer_factory=factory, recorder=FakeRecorder(), clock=clock,
                          decisions=decisions, workers=2, sync_period=3600,
                          initial_sync_timeout=DEADLINE)
    gc.start()
    try:
        await eventually(gc.is_synced, what="GC monitors to sync")
        ghost = make_id("v1", "ReplicationController", "ns1", "gone", "uid-gone")
        client.add_object(PODS, pod("orphan", ghost))
        await asyncio.wait_for(client.deleted.wait(), DEADLINE)
        stopping = asyncio.create_task(gc.stop())
        await eventually(gc.attempt_to_delete.shutting_down, what="queues shut down")
        assert not stopping.done()  # waiting for the item in hand
        client.respond.set()
        await stopping
    finally:
        client.respond.set()
        await gc.stop()
        await factory.stop()
    assert [(r.object.name, r.action) for r in decisions] == [("orphan", RecordAction.DELETE)]
