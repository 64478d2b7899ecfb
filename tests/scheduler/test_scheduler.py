"""The scheduler: node filtering (pure), binding with events against FakeClient, and
unschedulable pods that get scheduled once room appears."""

from __future__ import annotations

from collections import Counter

import pytest

from kubegc.api.clock import ManualClock
from kubegc.api.volumes import PVCS
from kubegc.client.fake import FakeClient
from kubegc.kubelet.nodes import NODES, build_node
from kubegc.scheduler.scheduler import Scheduler, filter_node, unschedulable_message
from tests.controllers.workload_harness import PODS, event_messages, eventually, quiet, running


def node(name: str = "kubegc-node-1", *, max_pods: int = 110, ready: bool = True,
         unschedulable: bool = False, taints: list[dict] | None = None) -> dict:
    obj = build_node(name, nodes=3, now=ManualClock().now(), max_pods=max_pods)
    if not ready:
        for c in obj["status"]["conditions"]:
            if c["type"] == "Ready":
                c["status"] = "False"
    if unschedulable:
        obj["spec"]["unschedulable"] = True
    if taints:
        obj["spec"]["taints"] = taints
    return obj


def pod(name: str = "p", **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


NO_SCHEDULE = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}


@pytest.mark.parametrize(("the_pod", "the_node", "load", "reason"), [
    pytest.param(pod(), node(), 0, None, id="fits"),
    pytest.param(pod(), node(ready=False), 0, "node(s) were not ready", id="not-ready"),
    pytest.param(pod(), node(unschedulable=True), 0, "node(s) were unschedulable",
                 id="cordoned"),
    pytest.param(pod(), node(max_pods=2), 2, "Too many pods", id="full"),
    pytest.param(pod(), node(max_pods=2), 1, None, id="one-slot-left"),
    pytest.param(pod(nodeSelector={"kubernetes.io/hostname": "kubegc-node-2"}), node(), 0,
                 "node(s) didn't match Pod's node affinity/selector", id="selector"),
    pytest.param(pod(), node(taints=[NO_SCHEDULE]), 0,
                 "node(s) had untolerated taint {dedicated: gpu}", id="taint"),
    pytest.param(pod(tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu"}]),
                 node(taints=[NO_SCHEDULE]), 0, None, id="tolerated-equal"),
    pytest.param(pod(tolerations=[{"operator": "Exists"}]), node(taints=[NO_SCHEDULE]), 0,
                 None, id="tolerate-everything"),
    pytest.param(pod(tolerations=[{"key": "dedicated", "operator": "Equal", "value": "cpu"}]),
                 node(taints=[NO_SCHEDULE]), 0,
                 "node(s) had untolerated taint {dedicated: gpu}", id="wrong-value"),
    pytest.param(pod(), node(taints=[{"key": "k", "effect": "PreferNoSchedule"}]), 0, None,
                 id="prefer-no-schedule-is-soft"),
])
def test_filter_node(the_pod, the_node, load, reason) -> None:
    assert filter_node(the_pod, the_node, load) == reason


def test_unschedulable_message() -> None:
    assert unschedulable_message(0, Counter()) == "no nodes available to schedule pods"
    reasons = Counter({"Too many pods": 2, "node(s) were unschedulable": 1})
    assert unschedulable_message(3, reasons) == (
        "0/3 nodes are available: 2 Too many pods, 1 node(s) were unschedulable.")


def node_of(client: FakeClient, name: str) -> str | None:
    stored = client.stored(PODS, name, namespace="ns")
    return (stored or {}).get("spec", {}).get("nodeName")


async def test_spreads_pods_over_the_least_loaded_nodes() -> None:
    client = FakeClient()
    for name in ("kubegc-node-1", "kubegc-node-2"):
        client.add_object(NODES, node(name))
    client.add_object(PODS, pod("already", nodeName="kubegc-node-1"))
    async with running(Scheduler, client) as scheduler:
        for i in range(3):
            client.add_object(PODS, pod(f"p{i}"))
        await eventually(lambda: all(node_of(client, f"p{i}") for i in range(3)))
        await quiet(scheduler)
        placed = Counter(node_of(client, f"p{i}") for i in range(3))
        assert placed == Counter({"kubegc-node-2": 2, "kubegc-node-1": 1})
        assert event_messages(client, "Scheduled") == sorted(
            f"Successfully assigned ns/p{i} to {node_of(client, f'p{i}')}" for i in range(3))


async def test_leaves_other_schedulers_and_bound_pods_alone() -> None:
    client = FakeClient()
    client.add_object(NODES, node())
    client.add_object(PODS, pod("other", schedulerName="my-scheduler"))
    async with running(Scheduler, client) as scheduler:
        await quiet(scheduler)
        assert node_of(client, "other") is None
        assert [a for a in client.actions if a.startswith("patch")] == []


async def test_unschedulable_pod_waits_for_room() -> None:
    client = FakeClient()
    client.add_object(NODES, node(max_pods=1))
    client.add_object(PODS, pod("first", nodeName="kubegc-node-1"))
    async with running(Scheduler, client) as scheduler:
        client.add_object(PODS, pod("second"))
        await eventually(lambda: (client.stored(PODS, "second", namespace="ns").get("status")
                                  or {}).get("conditions"), what="unschedulable condition")
        await quiet(scheduler)
        condition = client.stored(PODS, "second", namespace="ns")["status"]["conditions"][0]
        assert (condition["type"], condition["status"], condition["reason"]) == (
            "PodScheduled", "False", "Unschedulable")
        assert condition["message"] == "0/1 nodes are available: 1 Too many pods."
        assert event_messages(client, "FailedScheduling") == [condition["message"]]
        await client.delete(PODS, "first", namespace="ns")
        await eventually(lambda: node_of(client, "second") == "kubegc-node-1",
                         what="scheduled after the first pod left")


def _claim(name: str, **meta: object) -> dict:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "ns", **meta}, "spec": {}}


_EPHEMERAL = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}


@pytest.mark.parametrize(("volumes", "claims", "message"), [
    pytest.param([{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}], [],
                 'persistentvolumeclaim "data" not found', id="missing"),
    pytest.param([_EPHEMERAL], [],
                 'waiting for ephemeral volume controller to create the persistentvolumeclaim '
                 '"p-scratch"', id="ephemeral-not-yet"),
    pytest.param([{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}],
                 [_claim("data", deletionTimestamp="2026-01-01T00:00:00Z")],
                 'persistentvolumeclaim "data" is being deleted', id="being-deleted"),
    pytest.param([_EPHEMERAL], [_claim("p-scratch")],
                 "PVC ns/p-scratch was not created for pod ns/p (pod is not owner)",
                 id="ephemeral-namesake"),
])
async def test_a_pod_waits_for_its_claims(volumes, claims, message) -> None:
    """VolumeBinding's PreFilter: unschedulable with its message until the claim is there."""
    client = FakeClient()
    client.add_object(NODES, node())
    for c in claims:
        client.add_object(PVCS, c)
    async with running(Scheduler, client) as scheduler:
        client.add_object(PODS, pod("p", volumes=volumes))
        await eventually(lambda: event_messages(client, "FailedScheduling"))
        await quiet(scheduler)
        assert event_messages(client, "FailedScheduling") == [
            f"0/1 nodes are available: {message}."]
        assert node_of(client, "p") is None
        if not claims:
            claim = volumes[0].get("persistentVolumeClaim", {}).get("claimName", "p-scratch")
            owner = client.stored(PODS, "p", namespace="ns")
            meta = {"ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p",
                                         "uid": owner["metadata"]["uid"], "controller": True}]}
            client.add_object(PVCS, _claim(claim, **meta))
            await eventually(lambda: node_of(client, "p") == "kubegc-node-1",
                             what="scheduled once its claim exists")
