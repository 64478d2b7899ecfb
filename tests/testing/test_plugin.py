"""``kubegc.testing``: the pytest fixture and the Cluster an operator's test suite uses."""

from __future__ import annotations

import subprocess
import tempfile

import pytest

from kubegc.testing import Cluster

KUBECTL = "kubectl"


def _kubectl(cluster: Cluster, *args: str) -> str:
    with tempfile.TemporaryDirectory() as cache:
        return subprocess.run([KUBECTL, "--kubeconfig", str(cluster.kubeconfig), "--cache-dir",
                               cache, *args], capture_output=True, text=True, check=True,
                              timeout=60).stdout


def test_fixture_gives_a_cluster_with_cascading_deletion(kubegc_cluster: Cluster) -> None:
    _kubectl(kubegc_cluster, "create", "configmap", "owner")
    uid = _kubectl(kubegc_cluster, "get", "cm", "owner", "-o", "jsonpath={.metadata.uid}")
    manifest = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: child\n  ownerReferences:\n"
        f"  - {{apiVersion: v1, kind: ConfigMap, name: owner, uid: {uid}}}\n")
    subprocess.run([KUBECTL, "--kubeconfig", str(kubegc_cluster.kubeconfig), "apply", "-f", "-",
                    "--validate=false"], input=manifest, text=True, check=True,
                   capture_output=True, timeout=60)
    kubegc_cluster.settle()
    _kubectl(kubegc_cluster, "delete", "cm", "owner")
    kubegc_cluster.settle()
    assert _kubectl(kubegc_cluster, "get", "cm", "-o", "name").split() == [
        "configmap/kube-root-ca.crt"]  # the root CA publisher's


def test_official_client_from_the_cluster(kubegc_cluster: Cluster) -> None:
    from kubernetes import client

    api = kubegc_cluster.kubernetes_client()
    try:
        names = [n.metadata.name for n in client.CoreV1Api(api).list_namespace().items]
    finally:
        api.close()
    assert "default" in names


async def test_async_cluster_with_local_client() -> None:
    from kubegc.api.resources import GroupVersionResource

    cms = GroupVersionResource("", "v1", "configmaps")
    async with Cluster(controllers=["garbagecollector"]) as cluster:
        owner = await cluster.client.create(cms, {"metadata": {"name": "o"}},
                                            namespace="default")
        await cluster.client.create(cms, {"metadata": {"name": "d", "ownerReferences": [{
            "apiVersion": "v1", "kind": "ConfigMap", "name": "o",
            "uid": owner["metadata"]["uid"]}]}}, namespace="default")
        await cluster.asettle()
        await cluster.client.delete(cms, "o", namespace="default")
        await cluster.asettle()
        listed = await cluster.client.list(cms, namespace="default")
        assert listed["items"] == []


def test_run_outside_context_fails_clearly() -> None:
    cluster = Cluster()
    with pytest.raises(RuntimeError):
        cluster.settle()


def test_a_manual_clock_moves_only_with_advance() -> None:
    """A pod whose processes ignore TERM, deleted with a 30 s grace period, stays
    Terminating until the test advances the cluster's ManualClock past it (the recipe of
    docs/testing.md)."""
    from kubegc.api.clock import ManualClock

    with Cluster(clock=ManualClock()) as cluster:
        _kubectl(cluster, "run", "web", "--image=nginx",
                 "--annotations=kubegc.io/ignore-term=true")
        cluster.settle()
        _kubectl(cluster, "delete", "pod", "web", "--grace-period=30", "--wait=false")
        cluster.settle()
        assert _kubectl(cluster, "get", "pods", "-o", "name").split() == ["pod/web"]
        cluster.advance(31)
        cluster.settle()
        assert _kubectl(cluster, "get", "pods", "-o", "name").split() == []


def test_advance_needs_a_manual_clock(kubegc_cluster: Cluster) -> None:
    with pytest.raises(TypeError, match="ManualClock"):
        kubegc_cluster.advance(1)
