"""The StatefulSet controller against FakeClient: ordinal pod names, ordered creation and
removal, Parallel management, claims from volumeClaimTemplates, ownership, status."""

from __future__ import annotations

import pytest

from kubegc.api.meta import controller_ref_of
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.fake import FakeClient
from kubegc.client.interface import DeleteOptions
from kubegc.controllers.statefulset.stateful_set import StatefulSetController
from kubegc.testing import Cluster

from ..workload_harness import (
    PODS,
    event_messages,
    eventually,
    fake_kubelet,
    objects,
    pod_template,
    quiet,
    running,
    wait_for,
)

STS = GroupVersionResource("apps", "v1", "statefulsets")
PVCS = GroupVersionResource("", "v1", "persistentvolumeclaims")
LABELS = {"app": "db"}


def stateful_set(replicas: int, **spec: object) -> Obj:
    body: Obj = {"replicas": replicas, "serviceName": "db", "selector": {"matchLabels": LABELS},
                 "template": pod_template(LABELS), "podManagementPolicy": "OrderedReady",
                 "updateStrategy": {"type": "RollingUpdate",
                                    "rollingUpdate": {"partition": 0}}}
    body.update(spec)
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "ns", "generation": 1}, "spec": body}


def pod_names(client: FakeClient) -> list[str]:
    return sorted(p["metadata"]["name"] for p in objects(client, PODS))


async def test_ordered_ready_creates_one_pod_at_a_time() -> None:
    client = FakeClient()
    sts = client.add_object(STS, stateful_set(3))
    async with running(StatefulSetController, client) as ssc:
        await eventually(lambda: pod_names(client) == ["web-0"])
        await quiet(ssc)
        assert pod_names(client) == ["web-0"]  # web-0 is not Running and Ready yet
        async with fake_kubelet(client):
            await eventually(lambda: pod_names(client) == ["web-0", "web-1", "web-2"])
            await eventually(lambda: (client.stored(STS, "web", namespace="ns") or {})
                             .get("status", {}).get("readyReplicas") == 3)
            await quiet(ssc)
    pod = client.stored(PODS, "web-1", namespace="ns")
    assert pod is not None
    assert pod["spec"]["hostname"] == "web-1" and pod["spec"]["subdomain"] == "db"
    labels = pod["metadata"]["labels"]
    assert labels["statefulset.kubernetes.io/pod-name"] == "web-1"
    assert labels["apps.kubernetes.io/pod-index"] == "1"
    assert labels["controller-revision-hash"].startswith("web-")
    assert controller_ref_of(pod) == {"apiVersion": "apps/v1", "kind": "StatefulSet",
                                      "name": "web", "uid": sts["metadata"]["uid"],
                                      "controller": True, "blockOwnerDeletion": True}
    assert event_messages(client, "SuccessfulCreate") == [
        f"create Pod web-{i} in StatefulSet web successful" for i in range(3)]
    status = (client.stored(STS, "web", namespace="ns") or {})["status"]
    assert status["replicas"] == 3 and status["updatedReplicas"] == 3
    assert status["currentRevision"] == status["updateRevision"] == labels[
        "controller-revision-hash"]


async def test_parallel_creates_all_pods_at_once() -> None:
    client = FakeClient()
    client.add_object(STS, stateful_set(3, podManagementPolicy="Parallel"))
    async with running(StatefulSetController, client) as ssc:
        await eventually(lambda: len(pod_names(client)) == 3)
        await quiet(ssc)
    assert pod_names(client) == ["web-0", "web-1", "web-2"]


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"])
async def test_scale_down_removes_highest_ordinals(policy: str) -> None:
    client = FakeClient()
    client.add_object(STS, stateful_set(3, podManagementPolicy=policy))
    async with running(StatefulSetController, client) as ssc, fake_kubelet(client):
        await eventually(lambda: len(pod_names(client)) == 3)
        await quiet(ssc)
        stored = client.stored(STS, "web", namespace="ns")
        assert stored is not None
        stored["spec"]["replicas"] = 1
        await client.update(STS, stored, namespace="ns")
        await eventually(lambda: pod_names(client) == ["web-0"])
        await quiet(ssc)
    deletes = [a.name for a in client.action_log if a.verb == "delete" and a.gvr == PODS]
    assert deletes == ["web-2", "web-1"]
    assert event_messages(client, "SuccessfulDelete") == [
        "delete Pod web-1 in StatefulSet web successful",
        "delete Pod web-2 in StatefulSet web successful"]


@pytest.mark.parametrize(("when_deleted", "owned"), [("Retain", False), ("Delete", True)])
async def test_claims_from_volume_claim_templates(when_deleted: str, owned: bool) -> None:
    client = FakeClient()
    template = {"metadata": {"name": "www"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    sts = client.add_object(STS, stateful_set(
        1, volumeClaimTemplates=[template],
        persistentVolumeClaimRetentionPolicy={"whenDeleted": when_deleted,
                                              "whenScaled": "Retain"}))
    async with running(StatefulSetController, client) as ssc:
        await eventually(lambda: pod_names(client) == ["web-0"])
        await quiet(ssc)
    [claim] = objects(client, PVCS)
    assert claim["metadata"]["name"] == "www-web-0"
    assert claim["metadata"]["labels"] == LABELS
    refs = claim["metadata"].get("ownerReferences") or []
    assert [r["uid"] for r in refs] == ([sts["metadata"]["uid"]] if owned else [])
    pod = client.stored(PODS, "web-0", namespace="ns")
    assert pod is not None
    assert {"name": "www", "persistentVolumeClaim": {"claimName": "www-web-0"}} in pod[
        "spec"]["volumes"]


async def test_template_change_replaces_pods_from_the_highest_ordinal() -> None:
    client = FakeClient()
    client.add_object(STS, stateful_set(2))
    async with running(StatefulSetController, client) as ssc, fake_kubelet(client):
        await eventually(lambda: len(pod_names(client)) == 2)
        await quiet(ssc)
        stored = client.stored(STS, "web", namespace="ns")
        assert stored is not None
        stored["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
        await client.update(STS, stored, namespace="ns")

        def updated() -> bool:
            pods = objects(client, PODS)
            return len(pods) == 2 and all(
                p["spec"]["containers"][0]["image"] == "nginx:2" for p in pods)

        await eventually(updated)
        await quiet(ssc)
    deletes = [a.name for a in client.action_log if a.verb == "delete" and a.gvr == PODS]
    assert deletes == ["web-1", "web-0"]


# -- against a running kubegc (registry, GC, kubelet and scheduler) ---------------------------

NAMESPACES = GroupVersionResource("", "v1", "namespaces")



async def test_cluster_statefulset_orders_scales_and_cascades() -> None:
    controllers = ["garbagecollector", "statefulset", "kubelet", "scheduler"]
    async with Cluster(controllers=controllers) as c:
        await c.client.create(NAMESPACES, {"metadata": {"name": "ns"}})
        body = stateful_set(3)
        del body["metadata"]["generation"]
        await c.client.create(STS, body, namespace="ns")

        async def ready(n: int) -> bool:
            got = await c.client.get(STS, "web", namespace="ns")
            pods = (await c.client.list(PODS, namespace="ns"))["items"]
            return (got.get("status") or {}).get("readyReplicas") == n and len(pods) == n

        await wait_for(lambda: ready(3), what="3 ready pods")
        names = sorted(p["metadata"]["name"] for p in
                       (await c.client.list(PODS, namespace="ns"))["items"])
        assert names == ["web-0", "web-1", "web-2"]
        await c.client.patch(STS, "web", {"spec": {"replicas": 1}}, namespace="ns")
        await wait_for(lambda: ready(1), what="scaled to 1")
        await c.client.delete(STS, "web", namespace="ns",
                              options=DeleteOptions(propagation_policy="Foreground"))

        async def gone() -> bool:
            lists = [(await c.client.list(g, namespace="ns"))["items"] for g in (STS, PODS)]
            return not any(lists)

        await wait_for(gone, what="set and pods gone")
