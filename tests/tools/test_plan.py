"""kubegc plan delete, checked against what really happens: each scenario is built on a
running kubegc, planned (read-only, through a RestClient as the CLI does), then the same
delete is run for real, recorded, and compared: same deletions, the plan's order
constraints hold in the real order, same survivors, same objects left hanging."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from kubegc.api.clock import RealClock
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import Client, DeleteOptions, PatchType
from kubegc.client.kubeconfig import load_kubeconfig
from kubegc.client.rest import RestClient
from kubegc.planner_cluster import ClusterSimulationFactory
from kubegc.testing import Cluster
from kubegc.tools.inventory import read_inventory
from kubegc.tools.plan import PlanReport, Recorder, Timeline, order_violations, plan_delete
from kubegc.tools.resolve import resolve_kind

CM = GroupVersionResource("", "v1", "configmaps")
SECRETS = GroupVersionResource("", "v1", "secrets")
PODS = GroupVersionResource("", "v1", "pods")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")
DEPLOYMENTS = GroupVersionResource("apps", "v1", "deployments")
NS = "plan"


def ref(owner: Obj, *, block: bool = False, controller: bool = False) -> dict[str, Any]:
    out = {"apiVersion": owner["apiVersion"], "kind": owner["kind"],
           "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"]}
    if block:
        out["blockOwnerDeletion"] = True
    if controller:
        out["controller"] = True
    return out


async def make(c: Client, gvr: GroupVersionResource, kind: str, name: str, *owners: Any,
               finalizers: tuple[str, ...] = (), **body: Any) -> Obj:
    meta: dict[str, Any] = {"name": name, "ownerReferences": list(owners)}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    api = "apps/v1" if gvr.group == "apps" else "v1"
    return await c.create(gvr, {"apiVersion": api, "kind": kind, "metadata": meta, **body},
                          namespace=NS)


def pod_body() -> dict[str, Any]:
    return {"spec": {"nodeName": "kubegc-node-1", "terminationGracePeriodSeconds": 30,
                     "containers": [{"name": "c", "image": "fake"}]}}


async def chain(c: Client) -> Obj:
    root = await make(c, CM, "ConfigMap", "root")
    mid = await make(c, SECRETS, "Secret", "mid", ref(root, block=True))
    await make(c, CM, "ConfigMap", "leaf", ref(mid, block=True))
    return root


async def shared(c: Client) -> Obj:
    root = await make(c, CM, "ConfigMap", "root")
    other = await make(c, CM, "ConfigMap", "other")
    await make(c, SECRETS, "Secret", "only-root", ref(root, block=True))
    await make(c, SECRETS, "Secret", "shared", ref(root, block=True), ref(other))
    return root


async def held(c: Client) -> Obj:
    root = await make(c, CM, "ConfigMap", "root")
    await make(c, CM, "ConfigMap", "hold", ref(root, block=True), finalizers=("x.io/hold",))
    await make(c, CM, "ConfigMap", "free", ref(root, block=True))
    return root


async def non_blocking(c: Client) -> Obj:
    root = await make(c, CM, "ConfigMap", "root")
    await make(c, CM, "ConfigMap", "hold", ref(root), finalizers=("x.io/hold",))
    return root


async def pods(c: Client) -> Obj:
    root = await make(c, CM, "ConfigMap", "root")
    for i in range(2):
        await make(c, PODS, "Pod", f"pod-{i}", ref(root, block=True), **pod_body())
    return root


async def namespace(c: Client) -> Obj:
    await chain(c)
    await make(c, PODS, "Pod", "lonely", **pod_body())
    return await c.get(NAMESPACES, NS)


async def deployment(c: Client) -> Obj:
    return await make(c, DEPLOYMENTS, "Deployment", "web", spec={
        "replicas": 2, "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": [{"name": "c", "image": "fake"}]}}})


async def cycle(c: Client) -> Obj:
    """a → c → b → a (→: owned by), every reference blocking, as the pods of upstream's e2e "should
    not be blocked by dependency circle"."""
    a = await make(c, CM, "ConfigMap", "cyc-a")
    b = await make(c, CM, "ConfigMap", "cyc-b", ref(a, block=True, controller=True))
    last = await make(c, CM, "ConfigMap", "cyc-c", ref(b, block=True, controller=True))
    return await c.patch(CM, "cyc-a", {"metadata": {"ownerReferences": [
        ref(last, block=True, controller=True)]}}, namespace=NS, patch_type=PatchType.MERGE)


@dataclass
class Scenario:
    build: Callable[[Client], Awaitable[Obj]]
    cascade: str
    deleted: set[str]  # names
    survivors: set[str] = frozenset()  # type: ignore[assignment]
    hanging: set[str] = frozenset()  # type: ignore[assignment]


SCENARIOS = [
    pytest.param(Scenario(chain, "Background", {"root", "mid", "leaf"}), id="background-chain"),
    pytest.param(Scenario(chain, "Foreground", {"root", "mid", "leaf"}), id="foreground-chain"),
    pytest.param(Scenario(chain, "Orphan", {"root"}, survivors={"mid"}), id="orphan"),
    pytest.param(Scenario(shared, "Background", {"root", "only-root"}, survivors={"shared"}),
                 id="background-shared-child-survives"),
    pytest.param(Scenario(shared, "Foreground", {"root", "only-root"}, survivors={"shared"}),
                 id="foreground-shared-child-survives"),
    pytest.param(Scenario(held, "Foreground", {"free"}, hanging={"root", "hold"}),
                 id="foreground-held-by-blocking-child"),
    pytest.param(Scenario(non_blocking, "Foreground", {"root"}, hanging={"hold"}),
                 id="non-blocking-child-does-not-hold"),
    pytest.param(Scenario(pods, "Foreground", {"root", "pod-0", "pod-1"}),
                 id="foreground-graceful-pods"),
    # (with the namespace's default ServiceAccount and kube-root-ca.crt)
    pytest.param(Scenario(namespace, "Background", {NS, "root", "mid", "leaf", "lonely",
                                                    "default", "kube-root-ca.crt"}),
                 id="namespace"),
    pytest.param(Scenario(cycle, "Foreground", {"cyc-a", "cyc-b", "cyc-c"}),
                 id="foreground-cycle"),
    pytest.param(Scenario(cycle, "Background", {"cyc-a", "cyc-b", "cyc-c"}),
                 id="background-cycle"),
]


async def run_for_real(cluster: Cluster, target: Obj, gvr: GroupVersionResource,
                       cascade: str) -> tuple[Recorder, dict[str, Obj]]:
    recorder = Recorder(cluster.client, RealClock())
    await recorder.start()
    _, before = recorder.checkpoint()
    ns = target["metadata"].get("namespace", "")
    await cluster.client.delete(gvr, target["metadata"]["name"], namespace=ns,
                                options=DeleteOptions(propagation_policy=cascade))
    await cluster.asettle(60)
    await recorder.stop()
    return recorder, before


def names(refs: Any) -> set[str]:
    return {r.name for r in refs}


async def plan(cluster: Cluster, target: Obj, cascade: str) -> PlanReport:
    client = RestClient(load_kubeconfig(str(cluster.kubeconfig)))
    try:
        resources = await client.discover()
        resource = resolve_kind(resources, target["kind"])
        inv = await read_inventory(client, clock=RealClock(), source="test")  # as the CLI
        return await plan_delete(inv, target, resource, factory=ClusterSimulationFactory(),
                                 propagation=cascade)
    finally:
        await client.close()


@pytest.mark.parametrize("scenario", SCENARIOS)
async def test_plan_matches_reality(scenario: Scenario) -> None:
    async with Cluster() as cluster:
        await cluster.client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": NS}})
        target = await scenario.build(cluster.client)
        await cluster.asettle(30)
        uids_before = await _deletion_state(cluster.client)
        report = await plan(cluster, target, scenario.cascade)
        assert await _deletion_state(cluster.client) == uids_before, "the plan wrote"
        assert report.error == ""
        assert names(report.deleted) == scenario.deleted
        assert names(s.object for s in report.survivors) == scenario.survivors
        assert names(f.object for f in report.hanging) == scenario.hanging

        gvr = resolve_kind(await cluster.client.discover(), target["kind"]).gvr
        recorder, before = await run_for_real(cluster, target, gvr, scenario.cascade)
        real = Timeline(recorder.ordered(), before, target_uid=target["metadata"]["uid"],
                        records=[])
        assert {r.uid for r in real.deleted()} == {r.uid for r in report.deleted}
        assert order_violations(report.constraints, recorder.ordered()) == []
        real_survivors = {(s.object.uid, frozenset(names(s.kept_by))) for s in
                          real.survivors(recorder.current)}
        assert real_survivors == {(s.object.uid, frozenset(names(s.kept_by)))
                                  for s in report.survivors}
        still = {o["metadata"]["name"] for uid, o in recorder.current.items()
                 if uid in before and o["metadata"].get("deletionTimestamp")}
        assert still == scenario.hanging


async def test_foreground_constraints_name_the_blocking_order() -> None:
    async with Cluster() as cluster:
        await cluster.client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": NS}})
        target = await chain(cluster.client)
        await cluster.asettle(30)
        report = await plan(cluster, target, "Foreground")
    pairs = {(c.first.name, c.then.name) for c in report.constraints}
    assert pairs == {("mid", "root"), ("leaf", "mid")}
    assert [s.action.value for s in report.steps][:2] == ["delete requested",
                                                          "deletionTimestamp set"]
    assert any("OwnerWaitingForeground" in s.reason for s in report.steps)


async def test_deployment_cascade_through_replicaset_to_pods() -> None:
    async with Cluster() as cluster:
        await cluster.client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": NS}})
        target = await deployment(cluster.client)
        await cluster.asettle(30)
        report = await plan(cluster, target, "Foreground")
        kinds = sorted(r.kind for r in report.deleted)
        assert kinds == ["Deployment", "Pod", "Pod", "ReplicaSet"]
        assert report.deleted[-1].kind == "Deployment"
        recorder, before = await run_for_real(cluster, target, DEPLOYMENTS, "Foreground")
        real = Timeline(recorder.ordered(), before, target_uid=target["metadata"]["uid"],
                        records=[])
        assert {r.uid for r in real.deleted()} == {r.uid for r in report.deleted}
        assert order_violations(report.constraints, recorder.ordered()) == []


async def _deletion_state(c: Client) -> set[tuple[str, str, str]]:
    """(kind, uid, deletionTimestamp) of every object of the scenario's namespace."""
    out = set()
    for gvr in (CM, SECRETS, PODS, DEPLOYMENTS):
        for item in (await c.list(gvr, namespace=NS))["items"]:
            out.add((gvr.resource, item["metadata"]["uid"],
                     str(item["metadata"].get("deletionTimestamp"))))
    return out


def _order_is_acyclic(report: PlanReport) -> bool:
    after: dict[str, set[str]] = {}
    for c in report.constraints:
        after.setdefault(c.first.uid, set()).add(c.then.uid)
    done: set[str] = set()

    def visit(uid: str, path: frozenset[str]) -> bool:
        if uid in path:
            return False
        if uid in done:
            return True
        done.add(uid)
        return all(visit(n, path | {uid}) for n in after.get(uid, ()))

    return all(visit(uid, frozenset()) for uid in list(after))


@pytest.mark.parametrize("cascade", ["Foreground", "Background"])
async def test_cycle_plan_is_consistent_and_explained(cascade: str) -> None:
    async with Cluster() as cluster:
        await cluster.client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": NS}})
        target = await cycle(cluster.client)
        await cluster.asettle(30)
        report = await plan(cluster, target, cascade)
    assert _order_is_acyclic(report), [str(c) for c in report.constraints]
    positions = {r.uid: i for i, r in enumerate(report.deleted)}
    assert all(positions[c.first.uid] < positions[c.then.uid] for c in report.constraints)
    notes = " ".join(report.notes)
    if cascade == "Foreground":
        assert ("ConfigMap/cyc-c → ConfigMap/cyc-b → ConfigMap/cyc-a → ConfigMap/cyc-c (→: owned "
                "by) is an ownership cycle") in notes
        assert "set blockOwnerDeletion=false on ConfigMap/cyc-c's reference to ConfigMap/cyc-b" \
            in notes
        unblocked = [s for s in report.steps if s.action.value == "blockOwnerDeletion set to false"]
        assert len(unblocked) == 1 and f"(step {unblocked[0].seq})" in notes
    else:  # only the target is deleted by you; the others are collected in turn
        assert "ownership cycle" not in notes
        assert [c.first.name for c in report.constraints] == ["cyc-a", "cyc-b"]


async def test_plan_of_an_object_already_terminating() -> None:
    async with Cluster() as cluster:
        await cluster.client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": NS}})
        await make(cluster.client, CM, "ConfigMap", "stuck", finalizers=("x.io/hold",))
        await cluster.client.delete(CM, "stuck", namespace=NS)
        await cluster.asettle(30)
        target = await cluster.client.get(CM, "stuck", namespace=NS)
        report = await plan(cluster, target, "Background")
    (hanging,) = report.hanging
    assert "(already set before the plan): still Terminating at t+" in hanging.facts[0]
    assert "set in the simulation" not in " ".join(hanging.facts)
    assert report.notes[0].startswith("ConfigMap/stuck -n plan was already Terminating before "
                                      "this delete")
