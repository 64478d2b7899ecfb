"""kubegc plan against reality, on random ownership graphs.

Each graph is built on one running kubegc (all controllers, in its own namespaces),
planned read-only through a RestClient as the CLI does, then the same delete is run for
real; the objects the plan says are deleted, orphaned or kept by another owner
(survivors) and left deleting (hanging) must be exactly those kubegc then deletes, keeps
and leaves deleting, and the plan's order constraints must hold in the real order.

The graphs (seeded, so a failure names the seed that reproduces it): ConfigMaps, Secrets,
ReplicaSets (of no pods), Pods on the simulated node (some with grace periods and slow
exits) and a cluster-scoped custom resource; 1-3 owners each with mixed blockOwnerDeletion
and controller; invalid references (an owner in another namespace, a namespaced owner of a
cluster-scoped object); finalizers, some removed by a live controller that publishes them
(a fresh Lease annotated ``kubegc.io/removes-finalizers``), some by nobody; sometimes an
earlier delete still under way; the target and the propagation policy at random. What the
plan says depends on the order the garbage collector takes dependents in
(``PlanReport.order_dependent``) is not compared.

``KUBEGC_PLAN_GRAPHS=N`` runs N graphs per batch (default 10, 5 batches);
``KUBEGC_PLAN_SEED=S`` runs the one graph of seed S.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest

from kubegc.api.clock import RealClock, format_time
from kubegc.api.errors import StatusError
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.cli import ClusterSimulationFactory
from kubegc.client.interface import Client, DeleteOptions, ListOptions, PatchType, WatchOptions
from kubegc.client.kubeconfig import load_kubeconfig
from kubegc.client.rest import RestClient
from kubegc.controllers.deletionrecords import DELETION_RECORDS
from kubegc.testing import Cluster
from kubegc.tools.inventory import read_inventory
from kubegc.tools.plan import PlanReport, Recorder, Timeline, order_violations, plan_delete
from kubegc.tools.resolve import resolve_kind

GROUP = "gc.test.kubegc.io"
CLEANUP = "test.kubegc.io/cleanup"  # removed by the live controller below
STUCK = "test.kubegc.io/stuck"  # removed by nobody
CM = GroupVersionResource("", "v1", "configmaps")
SECRETS = GroupVersionResource("", "v1", "secrets")
PODS = GroupVersionResource("", "v1", "pods")
OWNERS = GroupVersionResource(GROUP, "v1", "clusterowners")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")
LEASES = GroupVersionResource("coordination.k8s.io", "v1", "leases")
CRDS = GroupVersionResource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
RS = GroupVersionResource("apps", "v1", "replicasets")
GVR = {"ConfigMap": CM, "Secret": SECRETS, "Pod": PODS, "ClusterOwner": OWNERS,
       "ReplicaSet": RS}
API = {"ConfigMap": "v1", "Secret": "v1", "Pod": "v1", "ClusterOwner": f"{GROUP}/v1",
       "ReplicaSet": "apps/v1"}
POLICIES = ("Background", "Foreground", "Orphan")
BATCHES = 5
GRAPHS = int(os.environ.get("KUBEGC_PLAN_GRAPHS", "10"))
QUIET_TIMEOUT = 20.0


# -- the graphs ------------------------------------------------------------------------------


@dataclass
class Node:
    name: str
    kind: str
    namespace: str  # "" for the cluster-scoped kind
    owners: list[tuple[int, bool, bool]] = field(default_factory=list)  # (index, block, ctl)
    finalizer: str = ""
    pod: dict[str, Any] = field(default_factory=dict)  # grace, exit delay

    def describe(self, nodes: list[Node]) -> str:
        refs = ", ".join(f"{nodes[i].name}{'!' if b else ''}{'*' if c else ''}"
                         for i, b, c in self.owners)
        where = f"{self.namespace}/" if self.namespace else ""
        return (f"{self.kind} {where}{self.name}" + (f" <- [{refs}]" if refs else "")
                + (f" fin={self.finalizer}" if self.finalizer else "")
                + (f" pod={self.pod}" if self.pod else ""))


@dataclass
class Graph:
    seed: int
    nodes: list[Node]
    pre_delete: tuple[int, str] | None  # (index, policy) deleted before the plan
    target: int
    policy: str

    @property
    def namespaces(self) -> tuple[str, str]:
        return f"g{self.seed}-a", f"g{self.seed}-b"

    def describe(self) -> str:
        lines = [f"seed {self.seed}: delete {self.nodes[self.target].name} "
                 f"--cascade={self.policy.lower()}"
                 + (f" after deleting {self.nodes[self.pre_delete[0]].name} "
                    f"({self.pre_delete[1]})" if self.pre_delete else ""),
                 "  (owner! = blockOwnerDeletion, owner* = controller)"]
        lines += [f"  {i}: {n.describe(self.nodes)}" for i, n in enumerate(self.nodes)]
        return "\n".join(lines)


def random_graph(seed: int) -> Graph:
    rng = random.Random(seed)
    ns_a, ns_b = f"g{seed}-a", f"g{seed}-b"
    nodes: list[Node] = []
    for i in range(rng.randint(3, 8)):
        kind = rng.choices(["ConfigMap", "Secret", "Pod", "ClusterOwner", "ReplicaSet"],
                           [5, 2, 2, 1.5, 1])[0]
        namespace = "" if kind == "ClusterOwner" else rng.choices([ns_a, ns_b], [6, 1])[0]
        node = Node(f"g{seed}-{i}-{kind.lower()}", kind, namespace)
        candidates = list(range(i))
        rng.shuffle(candidates)
        controller_taken = False
        for j in candidates[:rng.choice([0, 1, 1, 1, 2, 2, 3])]:
            owner = nodes[j]
            if owner.kind == "Pod" or (not namespace and owner.namespace and rng.random() < .7):
                continue  # pods own nothing here; mostly valid cluster-scoped refs
            controller = not controller_taken and rng.random() < 0.4
            controller_taken |= controller
            node.owners.append((j, rng.random() < 0.6, controller))
        node.finalizer = rng.choices(["", CLEANUP, STUCK], [6, 2, 1])[0]
        if kind == "Pod":
            node.pod = {"grace": rng.choice([0, 1, 2]),
                        "exit": rng.choice(["0", "0", "0.3"]), "ignore_term": rng.random() < .1}
        nodes.append(node)
    pre = None
    if rng.random() < 0.3:
        pre = (rng.randrange(len(nodes)), rng.choice(POLICIES))
    owners = sorted({j for n in nodes for j, _, _ in n.owners})
    target = rng.choice(owners) if owners and rng.random() < 0.8 else rng.randrange(len(nodes))
    return Graph(seed, nodes, pre, target, rng.choice(POLICIES))


def body(graph: Graph, node: Node, uids: dict[int, str]) -> Obj:
    meta: dict[str, Any] = {"name": node.name, "labels": {"plan-graph": str(graph.seed)}}
    refs = []
    for j, block, controller in node.owners:
        owner = graph.nodes[j]
        ref: dict[str, Any] = {"apiVersion": API[owner.kind], "kind": owner.kind,
                               "name": owner.name, "uid": uids[j]}
        if block:
            ref["blockOwnerDeletion"] = True
        if controller:
            ref["controller"] = True
        refs.append(ref)
    if refs:
        meta["ownerReferences"] = refs
    if node.finalizer:
        meta["finalizers"] = [node.finalizer]
    obj: Obj = {"apiVersion": API[node.kind], "kind": node.kind, "metadata": meta}
    if node.kind == "ReplicaSet":  # of no pods: a typed object its updates validate whole
        labels = {"rs": node.name}
        obj["spec"] = {"replicas": 0, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c",
                                                                     "image": "fake"}]}}}
    if node.kind == "Pod":
        meta["annotations"] = {"kubegc.io/exit-delay-seconds": node.pod["exit"]}
        if node.pod["ignore_term"]:
            meta["annotations"]["kubegc.io/ignore-term"] = "true"
        obj["spec"] = {"nodeName": "kubegc-node-1",
                       "terminationGracePeriodSeconds": node.pod["grace"],
                       "containers": [{"name": "c", "image": "fake"}]}
    return obj


# -- the cluster: a kubegc, a controller that removes CLEANUP, and its Lease -------------------


def crd() -> Obj:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"clusterowners.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Cluster",
                     "names": {"kind": "ClusterOwner", "plural": "clusterowners",
                               "singular": "clusterowner", "listKind": "ClusterOwnerList"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                         "openAPIV3Schema": {"type": "object",
                                             "x-kubernetes-preserve-unknown-fields": True}}}]}}


async def remove_cleanup_finalizers(client: Client) -> None:
    """The live controller that publishes CLEANUP: removes it from whatever is deleting."""
    async def one(gvr: GroupVersionResource) -> None:
        while True:
            listed = await client.list(gvr, options=ListOptions())
            for item in listed["items"]:
                await _release(client, gvr, item)
            rv = listed["metadata"]["resourceVersion"]
            with contextlib.suppress(StatusError):
                async for event in client.watch(gvr, options=WatchOptions(resource_version=rv)):
                    if event.type in ("ADDED", "MODIFIED"):
                        await _release(client, gvr, event.object)

    await asyncio.gather(*(one(gvr) for gvr in GVR.values()))


async def _release(client: Client, gvr: GroupVersionResource, obj: Obj) -> None:
    meta = obj["metadata"]
    fins = list(meta.get("finalizers") or [])
    if not meta.get("deletionTimestamp") or CLEANUP not in fins:
        return
    index = fins.index(CLEANUP)
    with contextlib.suppress(StatusError):  # gone, or changed meanwhile: the next event
        await client.patch(gvr, meta["name"], [
            {"op": "test", "path": f"/metadata/finalizers/{index}", "value": CLEANUP},
            {"op": "remove", "path": f"/metadata/finalizers/{index}"}],
            namespace=meta.get("namespace", ""), patch_type=PatchType.JSON)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster() as c:
        async def start() -> asyncio.Task[None]:
            await c.client.create(CRDS, crd())
            now = format_time(datetime.now(UTC))
            await c.client.create(LEASES, {"metadata": {
                "name": "cleanup-controller", "annotations": {
                    "kubegc.io/removes-finalizers": CLEANUP}},
                "spec": {"holderIdentity": "cleanup-1", "leaseDurationSeconds": 3600,
                         "renewTime": now, "acquireTime": now}}, namespace="kube-system")
            await c.asettle(30)
            return asyncio.create_task(remove_cleanup_finalizers(c.client))

        task = c.run(start())
        yield c

        async def stop() -> None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

        c.run(stop())


@contextlib.asynccontextmanager
async def rest(cluster: Cluster) -> AsyncIterator[RestClient]:
    client = RestClient(load_kubeconfig(str(cluster.kubeconfig)))
    try:
        yield client
    finally:
        await client.close()


# -- quiet: nothing left for anyone to do ----------------------------------------------------


async def _graph_objects(client: Client, graph: Graph) -> list[Obj]:
    out = []
    for gvr in GVR.values():
        listed = await client.list(gvr, options=ListOptions(
            label_selector=f"plan-graph={graph.seed}"))
        out.extend(listed["items"])
    return out


def _busy(objects: list[Obj]) -> list[str]:
    """Objects someone still works on: the live controller (CLEANUP on a deleting object)
    or the kubelet (a pod starting, or terminating: until its containers have stopped and,
    without finalizers, it is removed)."""
    out = []
    for obj in objects:
        meta = obj["metadata"]
        fins = meta.get("finalizers") or []
        phase = (obj.get("status") or {}).get("phase")
        pod = obj["kind"] == "Pod"
        if not meta.get("deletionTimestamp"):
            if pod and phase != "Running":
                out.append(meta["name"])
        elif CLEANUP in fins or (pod and (not fins or phase not in ("Succeeded", "Failed"))):
            out.append(meta["name"])
    return out


async def quiet(cluster: Cluster, client: Client, graph: Graph) -> None:
    """Wait (with a deadline) until kubegc has settled and nothing is left to do."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + QUIET_TIMEOUT
    async with aiohttp.ClientSession() as http:
        while True:
            async with http.get(f"{cluster.url}/debug/kubegc/settle?timeout=10") as resp:
                settled = resp.status == 200
            busy = _busy(await _graph_objects(client, graph))
            if settled and not busy:
                return
            if loop.time() > deadline:
                raise AssertionError(f"not quiet after {QUIET_TIMEOUT}s: {busy}\n"
                                     + graph.describe())
            await asyncio.sleep(0.02)


async def caught_up(recorder: Recorder, client: Client, graph: Graph) -> None:
    """Wait (with a deadline) until the recorder's watches delivered what a list shows."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + QUIET_TIMEOUT
    listed = {o["metadata"]["uid"]: o["metadata"]["resourceVersion"]
              for o in await _graph_objects(client, graph)}
    while True:
        seen = {u: o["metadata"]["resourceVersion"] for u, o in recorder.current.items()
                if o["metadata"].get("labels", {}).get("plan-graph") == str(graph.seed)}
        if seen == listed:
            return
        if loop.time() > deadline:
            raise AssertionError(f"the recorder saw {seen}, a list {listed}")
        await asyncio.sleep(0.01)


# -- one graph: build, plan, run, compare -----------------------------------------------------


async def build(client: Client, graph: Graph) -> dict[int, str]:
    for ns in graph.namespaces:
        await client.create(NAMESPACES, {"metadata": {"name": ns}})
    uids: dict[int, str] = {}
    for i, node in enumerate(graph.nodes):
        created = await client.create(GVR[node.kind], body(graph, node, uids),
                                      namespace=node.namespace)
        uids[i] = created["metadata"]["uid"]
    return uids


async def _delete(client: Client, node: Node, policy: str) -> None:
    await client.delete(GVR[node.kind], node.name, namespace=node.namespace,
                        options=DeleteOptions(propagation_policy=policy))


async def plan(client: Client, target: Obj, policy: str) -> PlanReport:
    resource = resolve_kind(await client.discover(), f"{target['kind']}")
    inv = await read_inventory(client, clock=RealClock(), source="test")
    return await plan_delete(inv, target, resource, factory=ClusterSimulationFactory(),
                             propagation=policy)


def _deletion_state(obj: Obj) -> str:
    meta = obj["metadata"]
    return repr([meta["uid"], meta.get("deletionTimestamp"), meta.get("finalizers"),
                 meta.get("ownerReferences")])


def _names(uids: set[str], by_uid: dict[str, Obj]) -> list[str]:
    return sorted(by_uid[u]["metadata"]["name"] if u in by_uid else u for u in uids)


async def run_graph(cluster: Cluster, seed: int) -> None:
    graph = random_graph(seed)
    async with rest(cluster) as client:
        await build(client, graph)
        await quiet(cluster, client, graph)
        if graph.pre_delete is not None:
            with contextlib.suppress(StatusError):  # already collected
                await _delete(client, graph.nodes[graph.pre_delete[0]], graph.pre_delete[1])
            await quiet(cluster, client, graph)
        alive = {o["metadata"]["name"]: o for o in await _graph_objects(client, graph)}
        if not alive:
            return  # everything was collected before the plan (invalid references)
        node = graph.nodes[graph.target]
        if node.name not in alive:
            node = next(n for n in graph.nodes if n.name in alive)
        target = alive[node.name]
        state = sorted(_deletion_state(o) for o in alive.values())
        report = await plan(client, target, graph.policy)
        after = sorted(_deletion_state(o) for o in await _graph_objects(client, graph))
        assert after == state, "the plan wrote to the cluster\n" + graph.describe()

        recorder = Recorder(client, RealClock())
        await recorder.start()
        _, before = recorder.checkpoint()
        await _delete(client, node, graph.policy)
        await quiet(cluster, client, graph)
        await caught_up(recorder, client, graph)
        await recorder.stop()
        records = await _records_about(client, graph)
        try:
            compare(graph, node, report, recorder, before, records)
        finally:
            await clean_up(client, graph)


async def clean_up(client: Client, graph: Graph) -> None:
    """Release and delete what is left of the graph (its pods hold the node's pod IPs)."""
    for obj in await _graph_objects(client, graph):
        meta = obj["metadata"]
        gvr = GVR[obj["kind"]]
        with contextlib.suppress(StatusError):
            if meta.get("finalizers"):
                await client.patch(gvr, meta["name"], {"metadata": {"finalizers": None}},
                                   namespace=meta.get("namespace", ""),
                                   patch_type=PatchType.MERGE)
            await client.delete(gvr, meta["name"], namespace=meta.get("namespace", ""),
                                options=DeleteOptions(grace_period_seconds=0))


async def _records_about(client: Client, graph: Graph) -> list[str]:
    """The garbage collector's DeletionRecords about the graph's objects, in order."""
    listed = await client.list(DELETION_RECORDS, options=ListOptions())
    ours = [r for r in listed["items"] if r["object"]["name"].startswith(f"g{graph.seed}-")]
    ours.sort(key=lambda r: int(r["metadata"]["resourceVersion"]))
    return [f"  {r['action']} {r['object']['name']}: {r['reason']}: {r['message']}"
            for r in ours]


def compare(graph: Graph, node: Node, report: PlanReport, recorder: Recorder,
            before: dict[str, Obj], records: list[str]) -> None:
    # what the plan says depends on the order the GC takes dependents in is not compared
    uncertain = {o.object.uid for o in report.order_dependent}
    ours = {u for u, o in before.items() if o["metadata"].get("labels", {}).get(
        "plan-graph") == str(graph.seed)} - uncertain
    target_uid = next(u for u, o in before.items() if o["metadata"]["name"] == node.name)
    real = Timeline([c for c in recorder.ordered() if c.after["metadata"]["uid"] in ours],
                    before, target_uid=target_uid, records=[])
    context = (f"\n{graph.describe()}\n(target: {node.name})\nplan steps:\n"
               + "\n".join(f"  {s.seq} {s.action.value} {s.object} {s.detail} {s.by}"
                           for s in report.steps)
               + "\nreal changes:\n" + "\n".join(
                   f"  {c.type} {c.after['metadata']['name']}" for c in recorder.ordered()
                   if c.after["metadata"]["uid"] in ours)
               + "\nreal DeletionRecords (since the graph was made):\n" + "\n".join(records))
    assert report.error == "", report.error + context
    planned = {r.uid for r in report.deleted} - uncertain
    happened = {r.uid for r in real.deleted()}
    assert planned == happened, (f"deleted: plan {_names(planned, before)}, real "
                                 f"{_names(happened, before)}" + context)
    plan_survivors = {(s.object.uid, tuple(sorted(r.uid for r in s.kept_by)))
                      for s in report.survivors if s.object.uid not in uncertain}
    real_survivors = {(s.object.uid, tuple(sorted(r.uid for r in s.kept_by)))
                      for s in real.survivors(recorder.current) if s.object.uid in ours}
    assert plan_survivors == real_survivors, (
        f"survivors: plan {sorted(plan_survivors)}, real {sorted(real_survivors)}" + context)
    plan_hanging = {f.object.uid for f in report.hanging} - uncertain
    real_hanging = {u for u in ours if u in recorder.current
                    and recorder.current[u]["metadata"].get("deletionTimestamp")
                    and (u == target_uid or not before[u]["metadata"].get("deletionTimestamp"))}
    assert plan_hanging == real_hanging, (f"hanging: plan {_names(plan_hanging, before)}, real "
                                          f"{_names(real_hanging, before)}" + context)
    ordered = [c for c in recorder.ordered() if c.after["metadata"]["uid"] in ours]
    constraints = [c for c in report.constraints
                   if c.first.uid not in uncertain and c.then.uid not in uncertain]
    assert order_violations(constraints, ordered) == [], context


def _seeds(batch: int) -> list[int]:
    only = os.environ.get("KUBEGC_PLAN_SEED")
    if only:
        return [int(only)] if batch == 0 else []
    return [batch * 1000 + i for i in range(GRAPHS)]


@pytest.mark.parametrize("batch", range(BATCHES))
async def test_plan_matches_reality_on_random_graphs(cluster: Cluster, batch: int) -> None:
    for seed in _seeds(batch):
        await run_graph(cluster, seed)
