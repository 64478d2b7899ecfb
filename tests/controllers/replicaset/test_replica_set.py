"""The ReplicaSet / ReplicationController controller against FakeClient: pods created with
controller references, scaling both ways, adoption and release, status, events."""

from __future__ import annotations

import pytest

from kubegc.api import errors
from kubegc.api.meta import controller_ref_of
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.fake import FakeClient
from kubegc.client.interface import DeleteOptions
from kubegc.controllers.replicaset import ReplicaSetController
from kubegc.controllers.replication import ReplicationManager
from kubegc.testing import Cluster

from ..workload_harness import (
    PODS,
    event_messages,
    eventually,
    objects,
    pod_template,
    quiet,
    running,
    set_pod_phase,
    wait_for,
)

RS = GroupVersionResource("apps", "v1", "replicasets")
RC = GroupVersionResource("", "v1", "replicationcontrollers")
LABELS = {"app": "web"}


def replica_set(replicas: int, name: str = "web") -> Obj:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": "ns", "generation": 1},
            "spec": {"replicas": replicas, "selector": {"matchLabels": LABELS},
                     "template": pod_template(LABELS)}}


def replication_controller(replicas: int) -> Obj:
    return {"apiVersion": "v1", "kind": "ReplicationController",
            "metadata": {"name": "rc", "namespace": "ns", "generation": 1},
            "spec": {"replicas": replicas, "selector": LABELS, "template": pod_template(LABELS)}}


def orphan_pod(name: str, labels: dict[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ns", "labels": labels},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


@pytest.mark.parametrize(("factory", "gvr", "owner", "kind", "api_version"), [
    pytest.param(ReplicaSetController, RS, replica_set(3), "ReplicaSet", "apps/v1", id="rs"),
    pytest.param(ReplicationManager, RC, replication_controller(3), "ReplicationController",
                 "v1", id="rc"),
])
async def test_creates_pods_with_controller_refs(factory, gvr, owner, kind, api_version) -> None:
    client = FakeClient()
    created = client.add_object(gvr, owner)
    async with running(factory, client):
        await eventually(lambda: len(objects(client, PODS)) == 3)
        await eventually(lambda: (client.stored(gvr, created["metadata"]["name"], namespace="ns")
                                  or {}).get("status", {}).get("replicas") == 3)
        await eventually(lambda: len(event_messages(client, "SuccessfulCreate")) == 3)
    for pod in objects(client, PODS):
        assert pod["metadata"]["generateName"] == f"{created['metadata']['name']}-"
        assert pod["metadata"]["labels"] == LABELS
        assert pod["metadata"]["ownerReferences"] == [{
            "apiVersion": api_version, "kind": kind, "name": created["metadata"]["name"],
            "uid": created["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    names = sorted(p["metadata"]["name"] for p in objects(client, PODS))
    assert event_messages(client, "SuccessfulCreate") == [f"Created pod: {n}" for n in names]


@pytest.mark.parametrize(("start", "target"), [
    pytest.param(3, 5, id="scale-up"),
    pytest.param(5, 1, id="scale-down"),
    pytest.param(2, 0, id="scale-to-zero"),
])
async def test_scaling(start: int, target: int) -> None:
    client = FakeClient()
    client.add_object(RS, replica_set(start))
    async with running(ReplicaSetController, client) as rsc:
        await eventually(lambda: len(objects(client, PODS)) == start)
        await quiet(rsc)
        stored = client.stored(RS, "web", namespace="ns")
        assert stored is not None
        stored["spec"]["replicas"] = target
        await client.update(RS, stored, namespace="ns")
        await eventually(lambda: len(objects(client, PODS)) == target)
        await quiet(rsc)
        assert len(objects(client, PODS)) == target
        status = (client.stored(RS, "web", namespace="ns") or {}).get("status", {})
        assert status["replicas"] == target
    if target < start:
        assert len(event_messages(client, "SuccessfulDelete")) == start - target


async def test_prefers_deleting_not_ready_pods() -> None:
    client = FakeClient()
    client.add_object(RS, replica_set(3))
    async with running(ReplicaSetController, client) as rsc:
        await eventually(lambda: len(objects(client, PODS)) == 3)
        await quiet(rsc)
        pods = objects(client, PODS)
        set_pod_phase(client, pods[0], "Running", ready=True)
        set_pod_phase(client, pods[1], "Running", ready=True)
        await eventually(lambda: (client.stored(RS, "web", namespace="ns") or {})
                         .get("status", {}).get("readyReplicas") == 2)
        stored = client.stored(RS, "web", namespace="ns")
        assert stored is not None
        stored["spec"]["replicas"] = 2
        await client.update(RS, stored, namespace="ns")
        await eventually(lambda: len(objects(client, PODS)) == 2)
    survivors = {p["metadata"]["name"] for p in objects(client, PODS)}
    assert survivors == {pods[0]["metadata"]["name"], pods[1]["metadata"]["name"]}


async def test_adopts_matching_orphans_and_ignores_others() -> None:
    client = FakeClient()
    client.add_object(PODS, orphan_pod("orphan", LABELS), namespace="ns")
    client.add_object(PODS, orphan_pod("other", {"app": "db"}), namespace="ns")
    rs = client.add_object(RS, replica_set(2))
    async with running(ReplicaSetController, client) as rsc:
        await eventually(lambda: len(objects(client, PODS)) == 3)
        await quiet(rsc)
    adopted = client.stored(PODS, "orphan", namespace="ns")
    other = client.stored(PODS, "other", namespace="ns")
    assert adopted is not None and other is not None
    ref = controller_ref_of(adopted)
    assert ref is not None and ref["uid"] == rs["metadata"]["uid"]
    assert ref["blockOwnerDeletion"] is True
    assert controller_ref_of(other) is None
    # the adoption patch carries the pod's uid as a precondition, as upstream's does
    adopt = [a for a in client.action_log if a.verb == "patch" and a.name == "orphan"]
    assert adopt[0].body["metadata"]["uid"] == adopted["metadata"]["uid"]


async def test_releases_pods_that_stop_matching() -> None:
    client = FakeClient()
    client.add_object(RS, replica_set(1))
    async with running(ReplicaSetController, client) as rsc:
        await eventually(lambda: len(objects(client, PODS)) == 1)
        await quiet(rsc)
        pod = objects(client, PODS)[0]
        pod["metadata"]["labels"] = {"app": "debug"}
        await client.update(PODS, pod, namespace="ns")
        # released, and a replacement created
        await eventually(lambda: len(objects(client, PODS)) == 2)
        await quiet(rsc)
    released = client.stored(PODS, pod["metadata"]["name"], namespace="ns")
    assert released is not None and not released["metadata"].get("ownerReferences")


async def test_does_not_adopt_terminating_orphans_or_count_terminating_pods() -> None:
    client = FakeClient()
    doomed = orphan_pod("doomed", LABELS)
    doomed["metadata"].update(deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["x/y"])
    client.add_object(PODS, doomed, namespace="ns")
    client.add_object(RS, replica_set(1))
    async with running(ReplicaSetController, client) as rsc:
        await eventually(lambda: len(objects(client, PODS)) == 2)
        await quiet(rsc)
    stored = client.stored(PODS, "doomed", namespace="ns")
    assert stored is not None and controller_ref_of(stored) is None


async def test_deleting_replicaset_creates_nothing() -> None:
    client = FakeClient()
    rs = replica_set(3)
    rs["metadata"].update(deletionTimestamp="2026-01-01T00:00:00Z",
                          finalizers=["foregroundDeletion"])
    client.add_object(RS, rs)
    async with running(ReplicaSetController, client) as rsc:
        await quiet(rsc)
        await eventually(lambda: (client.stored(RS, "web", namespace="ns") or {})
                         .get("status", {}).get("observedGeneration") == 1)
    assert objects(client, PODS) == []


async def test_create_failure_sets_replica_failure_condition() -> None:
    client = FakeClient()
    client.add_object(RS, replica_set(2))
    client.fail_next("create", errors.forbidden(errors.GroupResource("", "pods"), "",
                                                "exceeded quota"), gvr=PODS)
    async with running(ReplicaSetController, client):
        await eventually(lambda: any(
            c.get("type") == "ReplicaFailure"
            for c in (client.stored(RS, "web", namespace="ns") or {}).get("status", {})
            .get("conditions", [])) or len(objects(client, PODS)) == 2)
        await eventually(lambda: len(objects(client, PODS)) == 2)
        await eventually(lambda: not (client.stored(RS, "web", namespace="ns") or {})
                         .get("status", {}).get("conditions"))
    assert any(m.startswith("Error creating: ") for m in event_messages(client, "FailedCreate"))


# -- against a running kubegc (registry, GC, kubelet and scheduler) ---------------------------

NAMESPACES = GroupVersionResource("", "v1", "namespaces")



async def _rc_cluster_setup(c: Cluster, replicas: int) -> Obj:
    await c.client.create(NAMESPACES, {"metadata": {"name": "ns"}})
    body = replication_controller(replicas)
    del body["metadata"]["generation"]
    rc = await c.client.create(RC, body, namespace="ns")

    async def stable() -> bool:
        got = await c.client.get(RC, "rc", namespace="ns")
        return (got.get("status") or {}).get("replicas") == replicas

    await wait_for(stable)
    return rc


@pytest.mark.parametrize(("policy", "pods_left"), [
    pytest.param("Background", 0, id="e2e-01-background"),
    pytest.param("Orphan", 10, id="e2e-02-orphan"),
    pytest.param(None, 10, id="e2e-03-default-orphans"),
    pytest.param("Foreground", 0, id="e2e-06-foreground"),
])
async def test_cluster_rc_deletion(policy: str | None, pods_left: int) -> None:
    async with Cluster(controllers=["garbagecollector", "replicationcontroller", "kubelet",
                                    "scheduler"]) as c:
        rc = await _rc_cluster_setup(c, 10)
        pods = (await c.client.list(PODS, namespace="ns"))["items"]
        assert all(controller_ref_of(p)["uid"] == rc["metadata"]["uid"]  # type: ignore[index]
                   for p in pods)
        await c.client.delete(RC, "rc", namespace="ns", options=DeleteOptions(
            propagation_policy=policy, preconditions_uid=rc["metadata"]["uid"]))

        async def done() -> bool:
            rcs = (await c.client.list(RC, namespace="ns"))["items"]
            left = [p for p in (await c.client.list(PODS, namespace="ns"))["items"]
                    if not p["metadata"].get("deletionTimestamp")]
            return not rcs and len(left) == pods_left

        await wait_for(done, what=f"rc gone, {pods_left} pods left")
        await c.asettle()
        left = (await c.client.list(PODS, namespace="ns"))["items"]
        assert len(left) == pods_left
        assert all(not p["metadata"].get("ownerReferences") for p in left)
