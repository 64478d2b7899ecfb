"""The DaemonSet controller against FakeClient: one pod per eligible Node, following the
nodes as they come, go and change, ownership and status."""

from __future__ import annotations

from kubegc.api.meta import controller_ref_of
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.fake import FakeClient
from kubegc.client.interface import DeleteOptions
from kubegc.controllers.daemon.daemon_controller import DaemonSetsController
from kubegc.testing import Cluster

from ..workload_harness import (
    NODES,
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

DS = GroupVersionResource("apps", "v1", "daemonsets")
LABELS = {"app": "agent"}


def node(name: str, labels: dict[str, str] | None = None, taints: list[Obj] | None = None,
         ) -> Obj:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name,
                                                  **(labels or {})}},
            "spec": {"taints": taints or []}}


def daemon_set(node_selector: dict[str, str] | None = None) -> Obj:
    template = pod_template(LABELS)
    if node_selector:
        template["spec"]["nodeSelector"] = node_selector
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": "ns", "generation": 1},
            "spec": {"selector": {"matchLabels": LABELS}, "template": template}}


def pods_by_node(client: FakeClient) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for pod in objects(client, PODS):
        out.setdefault(pod["spec"].get("nodeName", ""), []).append(pod["metadata"]["name"])
    return out


def ds_status(client: FakeClient) -> Obj:
    return dict((client.stored(DS, "agent", namespace="ns") or {}).get("status") or {})


async def test_one_pod_per_eligible_node() -> None:
    client = FakeClient()
    for name, labels in (("n1", {"role": "worker"}), ("n2", {"role": "worker"}),
                         ("n3", {"role": "control"})):
        client.add_object(NODES, node(name, labels))
    ds = client.add_object(DS, daemon_set({"role": "worker"}))
    async with running(DaemonSetsController, client) as dsc:
        await eventually(lambda: sorted(pods_by_node(client)) == ["n1", "n2"])
        await eventually(lambda: ds_status(client).get("currentNumberScheduled") == 2)
        await quiet(dsc)
    assert all(len(names) == 1 for names in pods_by_node(client).values())
    pod = objects(client, PODS)[0]
    assert pod["metadata"]["generateName"] == "agent-"
    assert controller_ref_of(pod) == {"apiVersion": "apps/v1", "kind": "DaemonSet",
                                      "name": "agent", "uid": ds["metadata"]["uid"],
                                      "controller": True, "blockOwnerDeletion": True}
    terms = pod["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                       "values": [pod["spec"]["nodeName"]]}]}]
    assert {"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
            "effect": "NoSchedule"} in pod["spec"]["tolerations"]
    status = ds_status(client)
    assert (status["desiredNumberScheduled"], status["numberMisscheduled"],
            status["numberReady"], status["numberUnavailable"]) == (2, 0, 0, 2)
    assert len(event_messages(client, "SuccessfulCreate")) == 2


async def test_follows_nodes_as_they_change() -> None:
    client = FakeClient()
    client.add_object(NODES, node("n1"))
    client.add_object(DS, daemon_set())
    async with running(DaemonSetsController, client) as dsc:
        await eventually(lambda: sorted(pods_by_node(client)) == ["n1"])
        client.add_object(NODES, node("n2"))
        await eventually(lambda: sorted(pods_by_node(client)) == ["n1", "n2"])
        n2 = client.stored(NODES, "n2")
        assert n2 is not None
        n2["spec"]["taints"] = [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]
        await client.update(NODES, n2)
        await eventually(lambda: sorted(pods_by_node(client)) == ["n1"])
        await quiet(dsc)
    assert len(event_messages(client, "SuccessfulDelete")) == 1


async def test_failed_daemon_pod_is_replaced() -> None:
    client = FakeClient()
    client.add_object(NODES, node("n1"))
    client.add_object(DS, daemon_set())
    async with running(DaemonSetsController, client) as dsc:
        await eventually(lambda: len(objects(client, PODS)) == 1)
        [failed] = objects(client, PODS)
        set_pod_phase(client, failed, "Failed")
        await eventually(lambda: len(objects(client, PODS)) == 1
                         and objects(client, PODS)[0]["metadata"]["name"]
                         != failed["metadata"]["name"])
        await quiet(dsc)
    assert event_messages(client, "FailedDaemonPod") == [
        f"Found failed daemon pod ns/{failed['metadata']['name']} on node n1, will try to "
        "kill it"]


# -- against a running kubegc (registry, GC, kubelet with 2 simulated nodes) -------------------

NAMESPACES = GroupVersionResource("", "v1", "namespaces")



async def test_cluster_daemonset_runs_on_every_node_and_cascades() -> None:
    controllers = ["garbagecollector", "daemonset", "kubelet", "scheduler"]
    async with Cluster(controllers=controllers, nodes=2) as c:
        await c.client.create(NAMESPACES, {"metadata": {"name": "ns"}})
        body = daemon_set()
        del body["metadata"]["generation"]
        await c.client.create(DS, body, namespace="ns")

        async def ready() -> bool:
            got = await c.client.get(DS, "agent", namespace="ns")
            status = got.get("status") or {}
            return status.get("numberReady") == 2 and status.get("desiredNumberScheduled") == 2

        await wait_for(ready, what="a ready pod on each of the 2 nodes")
        pods = (await c.client.list(PODS, namespace="ns"))["items"]
        nodes = sorted(p["spec"]["nodeName"] for p in pods)
        assert len(pods) == 2 and len(set(nodes)) == 2
        await c.client.delete(DS, "agent", namespace="ns",
                              options=DeleteOptions(propagation_policy="Background"))

        async def gone() -> bool:
            lists = [(await c.client.list(g, namespace="ns"))["items"] for g in (DS, PODS)]
            return not any(lists)

        await wait_for(gone, what="daemonset and pods gone")
