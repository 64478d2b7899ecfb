"""The pod GC: orphaned pods after the node quarantine, unscheduled terminating pods and
the terminated-pod threshold (FakeClient + ManualClock), and a deleted node's pods in a
real kubegc."""

from __future__ import annotations

import asyncio
import contextlib

from kubegc.api.clock import ManualClock
from kubegc.api.resources import GroupVersionResource
from kubegc.client.fake import FakeClient
from kubegc.component.config import PodGCControllerConfiguration
from kubegc.controllers.podgc.gc_controller import PodGCController
from kubegc.kubelet.nodes import NODES, build_node
from kubegc.testing import Cluster

from ..workload_harness import PODS, eventually, running

NAMESPACES = GroupVersionResource("", "v1", "namespaces")


def pod(name: str, *, node: str = "", phase: str = "Running", created: str = "",
        deleting: bool = False) -> dict:
    meta: dict = {"name": name, "namespace": "ns"}
    if created:
        meta["creationTimestamp"] = created
    if deleting:
        meta.update(deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["example.com/x"])
    spec: dict = {"containers": [{"name": "c", "image": "nginx"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": {"phase": phase}}


@contextlib.asynccontextmanager
async def podgc(client: FakeClient, clock: ManualClock, **options):
    async with running(PodGCController, client, clock,
                       options=PodGCControllerConfiguration(**options)) as controller:
        await asyncio.gather(controller.pods.wait_for_sync(), controller.nodes.wait_for_sync())
        yield controller


def names(client: FakeClient) -> list[str]:
    return sorted(p["metadata"]["name"] for p in client.objects(PODS))


async def test_orphaned_pods_go_after_the_quarantine() -> None:
    client, clock = FakeClient(), ManualClock()
    client.add_object(NODES, build_node("kubegc-node-1", nodes=1, now=clock.now()))
    client.add_object(PODS, pod("kept", node="kubegc-node-1"), namespace="ns")
    client.add_object(PODS, pod("orphan", node="gone-node"), namespace="ns")
    async with podgc(client, clock) as controller:
        await controller.gc()  # first sight: the node goes into quarantine
        clock.advance(39)
        await controller.gc()
        assert names(client) == ["kept", "orphan"]
        clock.advance(1)
        await eventually(lambda: len(controller.node_queue) == 1, what="quarantine over")
        await controller.gc()
        assert names(client) == ["kept"]
    patch = next(a for a in client.action_log if a.verb == "patch")
    assert patch.subresource == "status" and patch.body["status"]["phase"] == "Failed"
    assert patch.body["status"]["conditions"][-1] | {"lastTransitionTime": None} == {
        "type": "DisruptionTarget", "status": "True", "reason": "DeletionByPodGC",
        "message": "PodGC: node no longer exists", "lastTransitionTime": None}
    delete = next(a for a in client.action_log if a.verb == "delete")
    assert delete.body.grace_period_seconds == 0


async def test_unscheduled_terminating_pods_are_force_deleted() -> None:
    client, clock = FakeClient(), ManualClock()
    client.add_object(PODS, pod("stuck", deleting=True), namespace="ns")
    client.add_object(PODS, pod("pending"), namespace="ns")
    async with podgc(client, clock) as controller:
        await controller.gc()
    deletes = [(a.name, a.body.grace_period_seconds) for a in client.action_log
               if a.verb == "delete"]
    assert deletes == [("stuck", 0)]


async def test_terminated_pods_beyond_the_threshold_go_oldest_first() -> None:
    client, clock = FakeClient(), ManualClock()
    client.add_object(NODES, build_node("kubegc-node-1", nodes=1, now=clock.now()))
    for i in range(4):
        client.add_object(PODS, pod(f"done{i}", node="kubegc-node-1", phase="Succeeded",
                                    created=f"2026-01-01T00:00:0{i}Z"), namespace="ns")
    client.add_object(PODS, pod("live", node="kubegc-node-1"), namespace="ns")
    async with podgc(client, clock, terminated_pod_gc_threshold=2) as controller:
        await controller.gc()
    assert names(client) == ["done2", "done3", "live"]


async def test_runs_every_period_on_the_clock() -> None:
    client, clock = FakeClient(), ManualClock()
    client.add_object(PODS, pod("stuck", deleting=True), namespace="ns")
    async with podgc(client, clock, gc_check_period=20.0) as controller:
        def deletes() -> int:
            return len([a for a in client.action_log if a.verb == "delete"])

        await asyncio.sleep(0.01)
        assert deletes() == 0
        clock.advance(20)
        await eventually(lambda: deletes() == 1, what="gc pass at 20 s")
        assert controller.is_idle()



async def test_pods_of_a_deleted_node_are_cleaned_up() -> None:
    clock = ManualClock()
    async with Cluster(controllers=["kubelet", "scheduler", "podgc"], clock=clock,
                       nodes=2) as c:
        client = c.client
        await client.create(NAMESPACES, {"metadata": {"name": "ns"}})
        for i in range(4):
            p = pod(f"p{i}")
            del p["status"]
            await client.create(PODS, p, namespace="ns")
        await asyncio.wait_for(c.asettle(), 30)
        by_node = {p["metadata"]["name"]: p["spec"]["nodeName"]
                   for p in (await client.list(PODS, namespace="ns"))["items"]}
        assert sorted(by_node.values()) == ["kubegc-node-1"] * 2 + ["kubegc-node-2"] * 2
        await client.delete(NODES, "kubegc-node-2")
        await asyncio.wait_for(c.asettle(), 30)
        for _ in range(4):  # gcCheckPeriod 20 s, quarantine 40 s
            clock.advance(20)
            await asyncio.wait_for(c.asettle(), 30)
        left = {p["metadata"]["name"] for p in (await client.list(PODS, namespace="ns"))["items"]}
        assert left == {n for n, node in by_node.items() if node == "kubegc-node-1"}
