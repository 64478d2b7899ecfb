"""kubegc plan reads everything its simulated cascade can touch, whatever ``-n`` says.

The case a user saw: ``plan delete … -n shop`` reported a Deployment of another namespace,
held by a pod finalizer, as "ALREADY PENDING … deleted (NoBlockingDependents)" — the
Deployments had been read cluster-wide but their ReplicaSets and Pods only in ``shop``, so
the simulated garbage collector found no blocking dependent left. ``doctor`` and ``tree``
show that Deployment stuck. The same through ``--from dump.json``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubegc.api.clock import RealClock
from kubegc.api.resources import GroupVersionResource
from kubegc.client.interface import DeleteOptions, PatchType
from kubegc.client.kubeconfig import load_kubeconfig
from kubegc.client.rest import RestClient
from kubegc.testing import Cluster
from kubegc.tools.inventory import read_inventory

from .lab import eventually, kubegc_json

NAMESPACES = GroupVersionResource("", "v1", "namespaces")
CM = GroupVersionResource("", "v1", "configmaps")
PODS = GroupVersionResource("", "v1", "pods")
DEPLOYMENTS = GroupVersionResource("apps", "v1", "deployments")
HOLD = "example.com/hold"


def _deployment(name: str) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": "fake"}]}}}}


@pytest.fixture(scope="module")
def stuck_elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, Path]]:
    """``other/web`` deleted in the foreground, held by its pod's finalizer; ``shop/app``
    an unrelated ConfigMap. Yields the cluster and a dump of it."""
    with Cluster() as cluster:
        async def build() -> None:
            c = cluster.client
            for ns in ("shop", "other"):
                await c.create(NAMESPACES, {"metadata": {"name": ns}})
            await c.create(CM, {"metadata": {"name": "app"}}, namespace="shop")
            await c.create(DEPLOYMENTS, _deployment("web"), namespace="other")

        cluster.run(build())
        pods = eventually(lambda: cluster.run(cluster.client.list(PODS, namespace="other"))[
            "items"], what="the Deployment's pod")
        cluster.run(cluster.client.patch(PODS, pods[0]["metadata"]["name"], {
            "metadata": {"finalizers": [HOLD]}}, namespace="other", patch_type=PatchType.MERGE))
        cluster.run(cluster.client.delete(DEPLOYMENTS, "web", namespace="other", options=(
            DeleteOptions(propagation_policy="Foreground"))))
        eventually(lambda: cluster.run(cluster.client.get(PODS, pods[0]["metadata"]["name"],
                                                          namespace="other"))["metadata"].get(
            "deletionTimestamp"), what="the pod terminating")
        cluster.settle()
        dump = tmp_path_factory.mktemp("dump") / "dump.json"
        dump.write_text(json.dumps(cluster.run(_dump(cluster))))
        yield cluster, dump


async def _dump(cluster: Cluster) -> dict[str, Any]:
    client = RestClient(load_kubeconfig(str(cluster.kubeconfig)))
    try:
        inv = await read_inventory(client, clock=RealClock())
    finally:
        await client.close()
    return {"apiVersion": "v1", "kind": "List", "items": inv.objects}


def _where(cluster: Cluster, dump: Path, source: str) -> tuple[str, str]:
    """Where the tools read: the live kubegc, or its dump."""
    return ("--kubeconfig", str(cluster.kubeconfig)) if source == "live" else (
        "--from", str(dump))


def _deleted_names(steps: list[dict[str, Any]]) -> set[str]:
    return {s["object"]["name"] for s in steps if s["action"] == "deleted"}


@pytest.mark.parametrize("source", ["live", "dump"])
def test_a_deployment_stuck_in_another_namespace_is_not_pending(
        stuck_elsewhere: tuple[Cluster, Path], source: str) -> None:
    where = _where(*stuck_elsewhere, source)
    report = kubegc_json("plan", "delete", "configmap/app", "-n", "shop", *where)
    assert _deleted_names(report["pendingBeforeDelete"]) == set()
    assert [d["name"] for d in report["deleted"]] == ["app"]
    assert report["hanging"] == []
    # the doctor agrees: web is stuck, not about to go
    doctor = kubegc_json("doctor", "--stuck-after", "0", *where)
    stuck = {f["object"]["name"] for f in doctor["findings"] if f["kind"] == "StuckDeletion"}
    assert "web" in stuck


@pytest.fixture(scope="module")
def held_across(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, Path]]:
    """``shop/app`` and ``other/held``, a ConfigMap of another namespace that names it as
    owner with blockOwnerDeletion=true (an invalid cross-namespace reference: the garbage
    collector found that owner absent and deleted it, but its finalizer holds it). The
    garbage collector's graph still counts it as app's blocking dependent."""
    with Cluster() as cluster:
        async def build() -> None:
            c = cluster.client
            for ns in ("shop", "other"):
                await c.create(NAMESPACES, {"metadata": {"name": ns}})
            app = await c.create(CM, {"metadata": {"name": "app"}}, namespace="shop")
            owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "app",
                     "uid": app["metadata"]["uid"], "blockOwnerDeletion": True}
            await c.create(CM, {"metadata": {"name": "held", "finalizers": [HOLD],
                                             "ownerReferences": [owner]}}, namespace="other")

        cluster.run(build())
        eventually(lambda: cluster.run(cluster.client.get(CM, "held", namespace="other"))[
            "metadata"].get("deletionTimestamp"), what="other/held collected")
        cluster.settle()
        dump = tmp_path_factory.mktemp("dump") / "dump.json"
        dump.write_text(json.dumps(cluster.run(_dump(cluster))))
        yield cluster, dump


@pytest.mark.parametrize("source", ["live", "dump"])
def test_a_blocking_dependent_in_another_namespace_holds_the_target(
        held_across: tuple[Cluster, Path], source: str) -> None:
    where = _where(*held_across, source)
    report = kubegc_json("plan", "delete", "configmap/app", "-n", "shop",
                         "--cascade", "foreground", *where)
    assert report["deleted"] == []
    (hang,) = report["hanging"]
    assert hang["object"]["name"] == "app"
    assert [b["object"]["name"] for b in hang["blockingDependents"]] == ["held"]


def test_the_blocking_dependent_in_another_namespace_holds_it_for_real(
        held_across: tuple[Cluster, Path]) -> None:
    cluster, _ = held_across
    cluster.run(cluster.client.delete(CM, "app", namespace="shop", options=DeleteOptions(
        propagation_policy="Foreground")))
    cluster.settle()
    app = cluster.run(cluster.client.get(CM, "app", namespace="shop"))
    assert app["metadata"]["deletionTimestamp"] and app["metadata"]["finalizers"] == [
        "foregroundDeletion"]


def test_plan_prints_nothing_but_its_report(tmp_path: Path) -> None:
    """No internal logging on the user's terminal. This dump holds no kube-system, where the
    simulation's controller manager keeps its Lease: the simulation used to print a
    leader-election warning on stderr every few milliseconds."""
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "uid": "ns"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "app", "namespace": "shop", "uid": "app"}}]}))
    done = subprocess.run([sys.executable, "-m", "kubegc", "plan", "delete", "configmap/app",
                           "-n", "shop", "--from", str(dump)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == ""
    assert "ConfigMap/app -n shop" in done.stdout and "None" not in done.stdout
