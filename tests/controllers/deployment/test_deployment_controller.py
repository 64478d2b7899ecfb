"""The Deployment controller with the ReplicaSet controller against FakeClient: the new
ReplicaSet and its name, scaling, rolling update and Recreate, adoption of an orphaned
ReplicaSet, status and events. A background task stands in for the kubelet."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from kubegc.api.meta import controller_ref_of
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.fake import FakeClient
from kubegc.client.interface import DeleteOptions
from kubegc.controllers.controller_utils import compute_hash
from kubegc.controllers.deployment.deployment_controller import DeploymentController
from kubegc.controllers.replicaset.replica_set import ReplicaSetController
from kubegc.testing import Cluster

from ..workload_harness import (
    PODS,
    event_messages,
    eventually,
    fake_kubelet,
    objects,
    pod_template,
    quiet,
    running_all,
    wait_for,
)

DEPLOY = GroupVersionResource("apps", "v1", "deployments")
RS = GroupVersionResource("apps", "v1", "replicasets")
LABELS = {"app": "web"}
CONTROLLERS = [DeploymentController, ReplicaSetController]


def deployment(replicas: int, *, strategy: str = "RollingUpdate", name: str = "web") -> Obj:
    spec: Obj = {"replicas": replicas, "selector": {"matchLabels": LABELS},
                 "template": pod_template(LABELS), "revisionHistoryLimit": 10,
                 "progressDeadlineSeconds": 600, "strategy": {"type": strategy}}
    if strategy == "RollingUpdate":
        spec["strategy"]["rollingUpdate"] = {"maxSurge": "25%", "maxUnavailable": "25%"}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "ns", "generation": 1}, "spec": spec}


def stored(client: FakeClient, gvr: GroupVersionResource, name: str) -> Obj:
    obj = client.stored(gvr, name, namespace="ns")
    assert obj is not None, name
    return obj


async def bump(client: FakeClient, gvr: GroupVersionResource, name: str, **spec: object) -> None:
    """Change the spec as ``kubectl`` would (the fake does not bump generation itself)."""
    obj = stored(client, gvr, name)
    obj["spec"].update(spec)
    obj["metadata"]["generation"] = obj["metadata"].get("generation", 1) + 1
    await client.update(gvr, obj, namespace="ns")


def rs_by_image(client: FakeClient) -> dict[str, Obj]:
    return {rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs
            for rs in objects(client, RS)}


def available(client: FakeClient, name: str = "web") -> bool:
    status = stored(client, DEPLOY, name).get("status", {})
    return any(c["type"] == "Available" and c["status"] == "True"
               for c in status.get("conditions", []))


async def test_creates_replicaset_named_with_pod_template_hash() -> None:
    client = FakeClient()
    d = client.add_object(DEPLOY, deployment(3))
    async with running_all(CONTROLLERS, client) as controllers:
        await eventually(lambda: len(objects(client, PODS)) == 3)
        await quiet(controllers)
    [rs] = objects(client, RS)
    template_hash = compute_hash(d["spec"]["template"], None)
    assert rs["metadata"]["name"] == f"web-{template_hash}"
    assert rs["metadata"]["labels"] == {**LABELS, "pod-template-hash": template_hash}
    assert rs["spec"]["selector"]["matchLabels"] == {**LABELS, "pod-template-hash": template_hash}
    assert rs["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] == template_hash
    assert rs["metadata"]["ownerReferences"] == [{
        "apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
        "uid": d["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    assert rs["metadata"]["annotations"] == {
        "deployment.kubernetes.io/revision": "1",
        "deployment.kubernetes.io/desired-replicas": "3",
        "deployment.kubernetes.io/max-replicas": "4"}
    assert stored(client, DEPLOY, "web")["metadata"]["annotations"] == {
        "deployment.kubernetes.io/revision": "1"}
    for pod in objects(client, PODS):
        assert controller_ref_of(pod)["uid"] == rs["metadata"]["uid"]  # type: ignore[index]
    assert event_messages(client, "ScalingReplicaSet") == [
        f"Scaled up replica set web-{template_hash} from 0 to 3"]


async def test_status_reports_availability_and_progress() -> None:
    client = FakeClient()
    client.add_object(DEPLOY, deployment(2))
    async with running_all(CONTROLLERS, client) as controllers, fake_kubelet(client):
        await eventually(lambda: stored(client, DEPLOY, "web").get("status", {})
                         .get("availableReplicas") == 2)
        await quiet(controllers)
    status = stored(client, DEPLOY, "web")["status"]
    rs_name = objects(client, RS)[0]["metadata"]["name"]
    assert {k: status[k] for k in ("replicas", "updatedReplicas", "readyReplicas",
                                   "availableReplicas", "observedGeneration")} == {
        "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2,
        "observedGeneration": 1}
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["Available"]["reason"] == "MinimumReplicasAvailable"
    assert conditions["Available"]["message"] == "Deployment has minimum availability."
    assert conditions["Progressing"]["reason"] == "NewReplicaSetAvailable"
    assert conditions["Progressing"]["message"] == (
        f'ReplicaSet "{rs_name}" has successfully progressed.')


@pytest.mark.parametrize(("start", "target", "verb"), [
    pytest.param(3, 5, "up", id="scale-up"),
    pytest.param(5, 1, "down", id="scale-down"),
])
async def test_scaling_scales_the_replicaset(start: int, target: int, verb: str) -> None:
    client = FakeClient()
    client.add_object(DEPLOY, deployment(start))
    async with running_all(CONTROLLERS, client) as controllers, fake_kubelet(client):
        await eventually(lambda: available(client) and len(objects(client, PODS)) == start)
        await quiet(controllers)
        await bump(client, DEPLOY, "web", replicas=target)
        await eventually(lambda: len(objects(client, PODS)) == target
                         and stored(client, DEPLOY, "web")["status"].get("replicas") == target)
        await quiet(controllers)
    [rs] = objects(client, RS)
    assert rs["spec"]["replicas"] == target
    assert rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] == str(target)
    assert (f"Scaled {verb} replica set {rs['metadata']['name']} from {start} to {target}"
            in event_messages(client, "ScalingReplicaSet"))


@pytest.mark.parametrize("strategy", ["RollingUpdate", "Recreate"])
async def test_template_change_rolls_out_a_new_replicaset(strategy: str) -> None:
    client = FakeClient()
    client.add_object(DEPLOY, deployment(3, strategy=strategy))
    async with running_all(CONTROLLERS, client) as controllers, fake_kubelet(client):
        await eventually(lambda: available(client) and len(objects(client, PODS)) == 3)
        await quiet(controllers)
        template = copy.deepcopy(stored(client, DEPLOY, "web")["spec"]["template"])
        template["spec"]["containers"][0]["image"] = "nginx:2"
        await bump(client, DEPLOY, "web", template=template)

        def rolled_out() -> bool:
            by_image = rs_by_image(client)
            return ("nginx:2" in by_image and by_image["nginx:2"]["spec"]["replicas"] == 3
                    and by_image["nginx"]["spec"]["replicas"] == 0
                    and len(objects(client, PODS)) == 3
                    and stored(client, DEPLOY, "web")["status"].get("updatedReplicas") == 3)

        await eventually(rolled_out, timeout=10)
        await quiet(controllers)
    by_image = rs_by_image(client)
    old, new = by_image["nginx"], by_image["nginx:2"]
    assert old["metadata"]["name"] != new["metadata"]["name"]
    assert new["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert old["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert stored(client, DEPLOY, "web")["metadata"]["annotations"][
        "deployment.kubernetes.io/revision"] == "2"
    new_uid = new["metadata"]["uid"]
    assert all(controller_ref_of(p)["uid"] == new_uid  # type: ignore[index]
               for p in objects(client, PODS))
    scaling = event_messages(client, "ScalingReplicaSet")
    assert f"Scaled down replica set {old['metadata']['name']} from 3 to 0" in scaling or any(
        m.startswith(f"Scaled down replica set {old['metadata']['name']}") for m in scaling)


async def test_recreate_waits_for_old_pods_before_scaling_up() -> None:
    client = FakeClient()
    client.add_object(DEPLOY, deployment(2, strategy="Recreate"))
    async with running_all(CONTROLLERS, client) as controllers:
        await eventually(lambda: len(objects(client, PODS)) == 2)
        await quiet(controllers)
        # old pods linger (a finalizer holds them), so the new ReplicaSet must not start
        for pod in objects(client, PODS):
            pod["metadata"]["finalizers"] = ["test/hold"]
            await client.update(PODS, pod, namespace="ns")
        template = copy.deepcopy(stored(client, DEPLOY, "web")["spec"]["template"])
        template["spec"]["containers"][0]["image"] = "nginx:2"
        await bump(client, DEPLOY, "web", template=template)
        await eventually(lambda: rs_by_image(client)["nginx"]["spec"]["replicas"] == 0)
        await quiet(controllers)
        assert "nginx:2" not in rs_by_image(client)
        for pod in objects(client, PODS):
            pod["metadata"]["finalizers"] = []
            await client.update(PODS, pod, namespace="ns")
        await eventually(lambda: "nginx:2" in rs_by_image(client)
                         and len(objects(client, PODS)) == 2)


async def test_new_deployment_adopts_orphaned_replicaset() -> None:
    """The second half of upstream's e2e "should orphan RS created by deployment when
    deleteOptions.PropagationPolicy is Orphan": the ReplicaSet an orphan-deleted Deployment
    left behind is adopted by a new Deployment with the same selector and template; nothing
    new is made."""
    client = FakeClient()
    client.add_object(DEPLOY, deployment(2, name="old"))
    async with running_all(CONTROLLERS, client) as controllers:
        await eventually(lambda: len(objects(client, PODS)) == 2)
        await quiet(controllers)
        # what the GC does for --cascade=orphan: strip the owner reference, delete the owner
        [rs] = objects(client, RS)
        rs["metadata"]["ownerReferences"] = []
        await client.update(RS, rs, namespace="ns")
        await client.delete(DEPLOY, "old", namespace="ns")
        await quiet(controllers)
        assert len(objects(client, RS)) == 1 and len(objects(client, PODS)) == 2
        assert controller_ref_of(objects(client, RS)[0]) is None
        new = client.add_object(DEPLOY, deployment(2, name="new"))
        await eventually(lambda: controller_ref_of(objects(client, RS)[0]) is not None)
        await quiet(controllers)
    [rs] = objects(client, RS)
    assert controller_ref_of(rs)["uid"] == new["metadata"]["uid"]  # type: ignore[index]
    assert len(objects(client, PODS)) == 2


async def test_releases_replicaset_whose_labels_stop_matching() -> None:
    client = FakeClient()
    client.add_object(DEPLOY, deployment(1))
    async with running_all(CONTROLLERS, client) as controllers:
        await eventually(lambda: len(objects(client, RS)) == 1)
        await quiet(controllers)
        [rs] = objects(client, RS)
        rs["metadata"]["labels"] = {"app": "elsewhere"}
        await client.update(RS, rs, namespace="ns")
        await eventually(lambda: len(objects(client, RS)) == 2)
        await quiet(controllers)
    released = stored(client, RS, rs["metadata"]["name"])
    assert controller_ref_of(released) is None


async def test_deleting_deployment_only_updates_status() -> None:
    client = FakeClient()
    d = deployment(2)
    d["metadata"].update(deletionTimestamp="2026-01-01T00:00:00Z",
                         finalizers=["foregroundDeletion"])
    client.add_object(DEPLOY, d)
    async with running_all(CONTROLLERS, client) as controllers:
        await eventually(lambda: stored(client, DEPLOY, "web").get("status", {})
                         .get("observedGeneration") == 1)
        await quiet(controllers)
    assert objects(client, RS) == []


# -- against a running kubegc (registry, GC, kubelet and scheduler) ---------------------------

CLUSTER_CONTROLLERS = ["garbagecollector", "replicaset", "deployment", "kubelet", "scheduler"]
NAMESPACES = GroupVersionResource("", "v1", "namespaces")



async def _setup(c: Cluster, replicas: int, name: str = "web") -> None:
    await c.client.create(NAMESPACES, {"metadata": {"name": "ns"}})
    body = deployment(replicas, name=name)
    del body["metadata"]["generation"]
    await c.client.create(DEPLOY, body, namespace="ns")


async def _list(c: Cluster, gvr: GroupVersionResource) -> list[Obj]:
    items: list[Obj] = (await c.client.list(gvr, namespace="ns"))["items"]
    return [i for i in items if not i["metadata"].get("deletionTimestamp")]


async def _rolled_out(c: Cluster, replicas: int, name: str = "web") -> bool:
    d = await c.client.get(DEPLOY, name, namespace="ns")
    status = d.get("status") or {}
    return (status.get("observedGeneration") == d["metadata"]["generation"]
            and status.get("availableReplicas", 0) == replicas
            and status.get("updatedReplicas", 0) == replicas
            and status.get("replicas", 0) == replicas
            and len(await _list(c, PODS)) == replicas)


async def test_cluster_deployment_scales_and_rolls_out() -> None:
    async with Cluster(controllers=CLUSTER_CONTROLLERS) as c:
        await _setup(c, 3)
        await wait_for(lambda: _rolled_out(c, 3), what="3 pods")
        [rs] = await _list(c, RS)
        d = await c.client.get(DEPLOY, "web", namespace="ns")
        assert controller_ref_of(rs)["uid"] == d["metadata"]["uid"]  # type: ignore[index]
        for pod in await _list(c, PODS):
            ref = controller_ref_of(pod)
            assert ref is not None and ref["uid"] == rs["metadata"]["uid"]
            assert ref["controller"] is True and ref["blockOwnerDeletion"] is True
        for replicas in (5, 1):
            await c.client.patch(DEPLOY, "web", {"spec": {"replicas": replicas}},
                                 namespace="ns")
            await wait_for(lambda r=replicas: _rolled_out(c, r), what=f"{replicas} pods")
        await c.client.patch(DEPLOY, "web", {"spec": {"replicas": 3, "template": {"spec": {
            "containers": [{"name": "c", "image": "nginx:2"}]}}}}, namespace="ns")
        await wait_for(lambda: _rolled_out(c, 3), what="rollout")
        rss = await _list(c, RS)
        assert sorted(rs["spec"]["replicas"] for rs in rss) == [0, 3]
        images = {p["spec"]["containers"][0]["image"] for p in await _list(c, PODS)}
        assert images == {"nginx:2"}
        d = await c.client.get(DEPLOY, "web", namespace="ns")
        assert d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"


async def test_e2e_04_background_delete_removes_replicasets_and_pods() -> None:
    async with Cluster(controllers=CLUSTER_CONTROLLERS) as c:
        await _setup(c, 2)
        await wait_for(lambda: _rolled_out(c, 2))
        d = await c.client.get(DEPLOY, "web", namespace="ns")
        await c.client.delete(DEPLOY, "web", namespace="ns", options=DeleteOptions(
            propagation_policy="Background", preconditions_uid=d["metadata"]["uid"]))

        async def all_gone() -> bool:
            lists = [(await c.client.list(g, namespace="ns"))["items"]
                     for g in (DEPLOY, RS, PODS)]
            return not any(lists)

        await wait_for(all_gone, what="deployment, replicasets and pods gone")


async def test_e2e_05_orphan_delete_keeps_replicaset_for_adoption() -> None:
    async with Cluster(controllers=CLUSTER_CONTROLLERS) as c:
        await _setup(c, 2)
        await wait_for(lambda: _rolled_out(c, 2))
        d = await c.client.get(DEPLOY, "web", namespace="ns")
        await c.client.delete(DEPLOY, "web", namespace="ns", options=DeleteOptions(
            propagation_policy="Orphan", preconditions_uid=d["metadata"]["uid"]))

        async def deployment_gone() -> bool:
            return not (await c.client.list(DEPLOY, namespace="ns"))["items"]

        await wait_for(deployment_gone)
        await c.asettle()
        [rs] = (await c.client.list(RS, namespace="ns"))["items"]
        assert controller_ref_of(rs) is None
        assert len((await c.client.list(PODS, namespace="ns"))["items"]) == 2
        # a new Deployment with the same selector and template adopts the ReplicaSet
        body = deployment(2, name="web2")
        del body["metadata"]["generation"]
        new = await c.client.create(DEPLOY, body, namespace="ns")

        async def adopted() -> bool:
            rss = (await c.client.list(RS, namespace="ns"))["items"]
            ref = controller_ref_of(rss[0]) if len(rss) == 1 else None
            return ref is not None and ref["uid"] == new["metadata"]["uid"]

        await wait_for(adopted, what="the orphaned ReplicaSet adopted")
        await wait_for(lambda: _rolled_out(c, 2, name="web2"))
        assert len((await c.client.list(RS, namespace="ns"))["items"]) == 1


@pytest.mark.kubectl
def test_kubectl_orphan_delete_then_new_deployment_adopts(tmp_path: Path) -> None:
    """Upstream's e2e "should orphan RS created by deployment ..." as a user types it:
    ``kubectl delete deploy --cascade=orphan``."""
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not installed")
    manifest = tmp_path / "web.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\n"
        "spec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n"
        "    metadata: {labels: {app: web}}\n"
        "    spec: {containers: [{name: c, image: nginx}]}\n")
    with Cluster(controllers=CLUSTER_CONTROLLERS) as c:

        def kubectl(*args: str) -> str:
            proc = subprocess.run(["kubectl", "--kubeconfig", str(c.kubeconfig), "--cache-dir",
                                   str(tmp_path / "cache"), *args], capture_output=True,
                                  text=True, timeout=60, check=True)
            return proc.stdout

        kubectl("apply", "-f", str(manifest))
        kubectl("rollout", "status", "deployment/web", "--timeout=30s")
        kubectl("delete", "deploy", "web", "--cascade=orphan")
        c.settle()
        rs = json.loads(kubectl("get", "rs", "-o", "json"))["items"]
        pods = json.loads(kubectl("get", "pods", "-o", "json"))["items"]
        assert len(rs) == 1 and len(pods) == 2
        assert controller_ref_of(rs[0]) is None
        kubectl("apply", "-f", str(manifest))
        kubectl("rollout", "status", "deployment/web", "--timeout=30s")
        c.settle()
        rs = json.loads(kubectl("get", "rs", "-o", "json"))["items"]
        d = json.loads(kubectl("get", "deploy", "web", "-o", "json"))
        assert len(rs) == 1
        assert controller_ref_of(rs[0])["uid"] == d["metadata"]["uid"]  # type: ignore[index]
        assert len(json.loads(kubectl("get", "pods", "-o", "json"))["items"]) == 2
