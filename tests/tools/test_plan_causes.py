"""kubegc plan on the paths issue 24 found it wrong on, each planned then done for real on
a running kubegc: a CRD with an instance held by a finalizer, a delete already under way,
preStop hooks and grace periods (a bound, not t+0)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from kubegc.api.clock import RealClock
from kubegc.api.meta import DeletionPropagation
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import DeleteOptions
from kubegc.client.kubeconfig import load_kubeconfig
from kubegc.client.rest import RestClient
from kubegc.planner_cluster import ClusterSimulationFactory
from kubegc.testing import Cluster
from kubegc.tools.inventory import read_inventory
from kubegc.tools.plan import PlanReport, plan_delete
from kubegc.tools.resolve import resolve_kind

from .lab import kubegc_json
from .test_causes_live import CRDS, GADGET_CRD, GADGETS, HOLD

TESTDATA = Path(__file__).parent / "testdata"
PODS = GroupVersionResource("", "v1", "pods")
DEPLOYMENTS = GroupVersionResource("apps", "v1", "deployments")
REPLICASETS = GroupVersionResource("apps", "v1", "replicasets")


async def plan(cluster: Cluster, target: Obj, policy: str | None = None) -> PlanReport:
    client = RestClient(load_kubeconfig(str(cluster.kubeconfig)))
    try:
        resource = resolve_kind(await client.discover(), target["kind"])
        inv = await read_inventory(client, clock=RealClock(), source="test")
        return await plan_delete(inv, target, resource, factory=ClusterSimulationFactory(),
                                 propagation=DeletionPropagation(policy) if policy else None)
    finally:
        await client.close()


async def until(fn: object, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await fn():  # type: ignore[operator]
        if loop.time() > deadline:
            raise AssertionError(f"not true after {timeout}s: {fn}")
        await asyncio.sleep(0.05)


async def test_plan_delete_crd_waits_for_an_instance_finalizer() -> None:
    async with Cluster() as cluster:
        c = cluster.client
        await c.create(CRDS, GADGET_CRD)
        await cluster.asettle(30)
        await c.create(GADGETS, {"apiVersion": "example.com/v1", "kind": "Gadget",
                                 "metadata": {"name": "g1", "finalizers": [HOLD]}},
                       namespace="default")
        crd = await c.get(CRDS, "gadgets.example.com")
        report = await plan(cluster, crd)
        hanging = {(f.object.kind, f.object.name) for f in report.hanging}
        assert hanging == {("CustomResourceDefinition", "gadgets.example.com"),
                           ("Gadget", "g1")}, [s.to_dict() for s in report.steps]
        assert report.verdict is not None and not report.verdict.completes
        assert "held by Gadget/g1 -n default;" in report.verdict.text, report.verdict.text
        held = {h.object.kind: [(x.object.name, x.reason) for x in h.held_by]
                for h in report.verdict.hangs}
        assert [name for name, _ in held["CustomResourceDefinition"]] == ["g1"], held
        assert HOLD in held["Gadget"][0][1], held
        # and so it is
        await c.delete(CRDS, "gadgets.example.com")

        async def both_terminating() -> bool:
            crd = await c.get(CRDS, "gadgets.example.com")
            g1 = await c.get(GADGETS, "g1", namespace="default")
            return bool(crd["metadata"].get("deletionTimestamp")
                        and g1["metadata"].get("deletionTimestamp"))
        await until(both_terminating)
        await cluster.asettle(10)
        assert (await c.get(CRDS, "gadgets.example.com"))["metadata"]["deletionTimestamp"]


def _deployment(name: str, grace: int, annotations: dict[str, str]) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name},
                                               "annotations": annotations},
                                  "spec": {"terminationGracePeriodSeconds": grace,
                                           "containers": [{"name": "c", "image": "x"}]}}}}


async def _running(cluster: Cluster, app: str, n: int) -> list[Obj]:
    pods: list[Obj] = []

    async def ready() -> bool:
        nonlocal pods
        listed = await cluster.client.list(PODS, namespace="default")
        pods = [p for p in listed["items"] if p["metadata"].get("labels", {}).get("app") == app
                and (p.get("status") or {}).get("phase") == "Running"]
        return len(pods) == n
    await until(ready)
    return pods


async def test_plan_during_a_foreground_delete_in_progress_is_pending_not_refused() -> None:
    async with Cluster() as cluster:
        c = cluster.client
        await c.create(DEPLOYMENTS, _deployment("slow", 5, {"kubegc.io/ignore-term": "true"}),
                       namespace="default")
        await _running(cluster, "slow", 2)
        await c.delete(DEPLOYMENTS, "slow", namespace="default",
                       options=DeleteOptions(
                           propagation_policy=DeletionPropagation.FOREGROUND))

        async def pods_terminating() -> bool:
            listed = await c.list(PODS, namespace="default")
            return any(p["metadata"].get("deletionTimestamp") for p in listed["items"])
        await until(pods_terminating)
        target = await c.get(DEPLOYMENTS, "slow", namespace="default")
        report = await plan(cluster, target, "Foreground")
        assert "not found" not in report.error, report.error
        assert report.error == ""
        assert report.verdict is not None
        assert "refused" not in report.verdict.text, report.verdict.text
        deleted = {(r.kind, r.name) for r in report.deleted}
        assert ("Deployment", "slow") in deleted, report.to_dict()
        done = [s for s in report.steps if s.action.value == "deleted"
                and s.object.kind == "Deployment"]
        assert done and done[0].time > 0, [s.to_dict() for s in report.steps]
        # and so it goes, for real: everything the plan deletes is gone
        planned = {r.uid for r in report.deleted}

        async def gone() -> bool:
            left = set()
            for gvr in (PODS, DEPLOYMENTS, REPLICASETS):
                left |= {o["metadata"]["uid"] for o in
                         (await c.list(gvr, namespace="default"))["items"]}
            return not planned & left
        await until(gone)


async def test_prestop_hooks_give_a_bound_not_t0() -> None:
    async with Cluster() as cluster:
        c = cluster.client
        await c.create(PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "hooked", "annotations": {"kubegc.io/prestop-seconds": "20"}},
            "spec": {"terminationGracePeriodSeconds": 30, "containers": [{
                "name": "c", "image": "x",
                "lifecycle": {"preStop": {"exec": {"command": ["sleep", "20"]}}}}]}},
            namespace="default")

        async def running() -> bool:
            pod = await c.get(PODS, "hooked", namespace="default")
            return bool((pod.get("status") or {}).get("phase") == "Running")
        await until(running)
        target = await c.get(PODS, "hooked", namespace="default")
        report = await plan(cluster, target)
        gone = next(s for s in report.steps if s.action.value == "deleted")
        text = " ".join([gone.detail, report.verdict.text if report.verdict else ""])
        assert "up to t+30.0s, the end of its grace period" in text, (gone.to_dict(), text)
        assert gone.latest is not None and gone.time <= gone.latest
        assert gone.latest == pytest.approx(30.0, abs=1.0)


PV = GroupVersionResource("", "v1", "persistentvolumes")
CM = GroupVersionResource("", "v1", "configmaps")


async def test_a_cluster_scoped_dependent_of_a_namespaced_owner_stays_and_is_listed() -> None:
    async with Cluster() as cluster:
        c = cluster.client
        boss = await c.create(CM, {"metadata": {"name": "boss"}}, namespace="default")
        await c.create(PV, {"metadata": {"name": "pv", "ownerReferences": [{
            "apiVersion": "v1", "kind": "ConfigMap", "name": "boss",
            "uid": boss["metadata"]["uid"]}]},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     "hostPath": {"path": "/tmp"}}})
        await cluster.asettle(10)
        report = await plan(cluster, boss)
        (stays,) = report.survivors
        assert (stays.object.kind, stays.object.name) == ("PersistentVolume", "pv")
        assert [o.name for o in stays.dangling] == ["boss"]
        assert report.verdict is not None and "OwnerRefInvalidNamespace" in report.verdict.text
        assert "stays" in report.verdict.text, report.verdict.text
        # and so it does
        await c.delete(CM, "boss", namespace="default")
        await cluster.asettle(10)
        pv = await c.get(PV, "pv")
        assert not pv["metadata"].get("deletionTimestamp")


def _times(value: object) -> list[str]:
    """Every RFC 3339 time in a JSON document."""
    if isinstance(value, dict):
        return [t for v in value.values() for t in _times(v)]
    if isinstance(value, list):
        return [t for v in value for t in _times(v)]
    if isinstance(value, str):
        return re.findall(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", value)
    return []


def test_plan_json_of_a_dump_holds_no_time_after_the_reading(tmp_path: Path) -> None:
    """A foreground delete held by a blocker whose finalizer nobody removes never ends: the
    plan of a dump holds no absolute time after the dump's (it used to say "judged at"
    a minute into the future)."""
    dump = json.loads((TESTDATA / "plan-dump.json").read_text())
    leaf = next(o for o in dump["items"] if o["metadata"]["name"] == "leaf")
    leaf["metadata"]["finalizers"] = [HOLD]
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(dump))
    report = kubegc_json("plan", "delete", "configmap/root", "-n", "shop", "--from",
                         str(path), "--cascade", "foreground")
    assert report["hanging"], report["verdict"]
    read = report["time"]
    later = [t for t in _times(report) if t > read]
    assert later == [], (read, later)
    assert report["hangingJudgedAfterSeconds"] > 0
