"""The garbage collector's e2e scenarios (upstream's
test/e2e/apimachinery/garbage_collector.go) against a ``kubegc serve`` running every
controller — the RC, Deployment, Job and CronJob controllers build the owner chains, with
controller references, as in a real cluster."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from kubegc.api.meta import controller_ref_of
from kubegc.api.resources import GroupVersionResource
from kubegc.client.interface import PatchType
from kubegc.client.rest import RestClient

from .conftest import Server, start_server, stop_server
from .gc_helpers import (
    CRDS,
    NAMESPACES,
    PODS,
    RC,
    delete,
    eventually,
    exists,
    names,
    ref,
    rest_client,
    settle,
)

DEPLOYMENTS = GroupVersionResource("apps", "v1", "deployments")
REPLICASETS = GroupVersionResource("apps", "v1", "replicasets")
JOBS = GroupVersionResource("batch", "v1", "jobs")
CRONJOBS = GroupVersionResource("batch", "v1", "cronjobs")
N = 10  # estimateMaximumPods' lower bound


@pytest.fixture
async def c(server: Server) -> AsyncIterator[RestClient]:
    client = rest_client(server)
    yield client
    await client.close()


@pytest.fixture
async def ns(c: RestClient) -> str:
    name = f"e2e-{uuid.uuid4().hex[:8]}"
    await c.create(NAMESPACES, {"metadata": {"name": name}})
    return name


def _template(labels: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"labels": labels},
            "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}}


async def _rc(c: RestClient, ns: str, name: str, replicas: int,
              labels: dict[str, str] | None = None) -> dict[str, Any]:
    labels = labels or {"app": name}
    return await c.create(RC, {"apiVersion": "v1", "kind": "ReplicationController",
                               "metadata": {"name": name},
                               "spec": {"replicas": replicas, "selector": labels,
                                        "template": _template(labels)}}, namespace=ns)


async def _deployment(c: RestClient, ns: str, name: str, replicas: int = 2) -> dict[str, Any]:
    labels = {"app": name}
    return await c.create(DEPLOYMENTS, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": _template(labels)}}, namespace=ns)


async def _pods(c: RestClient, ns: str) -> list[dict[str, Any]]:
    return list((await c.list(PODS, namespace=ns))["items"])


async def _count(c: RestClient, gvr: GroupVersionResource, ns: str) -> int:
    return len(await names(c, gvr, ns))


async def _live_pods(c: RestClient, ns: str, n: int) -> bool:
    pods = await _pods(c, ns)
    return len([p for p in pods if not p["metadata"].get("deletionTimestamp")]) == n


async def test_e2e01_delete_pods_created_by_rc_when_not_orphaning(c: RestClient, ns: str) -> None:
    rc = await _rc(c, ns, "simpletest.rc", 2)
    await eventually(lambda: _count(c, PODS, ns), what="a pod of the RC")
    await delete(c, RC, "simpletest.rc", ns, policy="Background", uid=rc["metadata"]["uid"])
    await eventually(lambda: _none(c, ns, RC, PODS), what="0 RCs and 0 pods")


async def _none(c: RestClient, ns: str, *gvrs: GroupVersionResource) -> bool:
    for gvr in gvrs:
        if await _count(c, gvr, ns):
            return False
    return True


async def test_e2e02_orphan_pods_created_by_rc(c: RestClient, ns: str, server: Server) -> None:
    rc = await _rc(c, ns, "simpletest.rc", N)
    await eventually(lambda: _live_pods(c, ns, N), what=f"{N} pods")
    await delete(c, RC, "simpletest.rc", ns, policy="Orphan", uid=rc["metadata"]["uid"])
    await eventually(lambda: _gone(c, RC, "simpletest.rc", ns), what="RC gone")
    await settle(server)
    pods = await _pods(c, ns)
    assert len(pods) == N
    assert all(not p["metadata"].get("ownerReferences") for p in pods)


async def _gone(c: RestClient, gvr: GroupVersionResource, name: str, ns: str = "") -> bool:
    return not await exists(c, gvr, name, ns)


async def test_e2e03_rc_default_policy_orphans(c: RestClient, ns: str, server: Server) -> None:
    rc = await _rc(c, ns, "simpletest.rc", 2)
    await eventually(lambda: _live_pods(c, ns, 2), what="2 pods")
    await delete(c, RC, "simpletest.rc", ns, uid=rc["metadata"]["uid"])
    await eventually(lambda: _gone(c, RC, "simpletest.rc", ns), what="RC gone")
    await settle(server)
    assert await _count(c, PODS, ns) == 2


async def test_e2e04_delete_rs_created_by_deployment(c: RestClient, ns: str) -> None:
    d = await _deployment(c, ns, "web")
    await eventually(lambda: _count(c, REPLICASETS, ns), what="a ReplicaSet")
    await delete(c, DEPLOYMENTS, "web", ns, policy="Background", uid=d["metadata"]["uid"])
    await eventually(lambda: _none(c, ns, DEPLOYMENTS, REPLICASETS, PODS),
                     what="0 deployments, 0 RS, 0 pods")


async def test_e2e05_orphan_rs_created_by_deployment(c: RestClient, ns: str,
                                                     server: Server) -> None:
    d = await _deployment(c, ns, "web")
    await eventually(lambda: _live_pods(c, ns, 2), what="2 pods")
    await settle(server)
    await delete(c, DEPLOYMENTS, "web", ns, policy="Orphan", uid=d["metadata"]["uid"])
    await eventually(lambda: _gone(c, DEPLOYMENTS, "web", ns), what="deployment gone")
    await settle(server)
    [rs] = (await c.list(REPLICASETS, namespace=ns))["items"]
    assert controller_ref_of(rs) is None
    assert await _count(c, PODS, ns) == 2
    # A new Deployment with the same selector adopts the orphaned ReplicaSet.
    d2 = await _deployment(c, ns, "web")
    await settle(server)
    [rs] = (await c.list(REPLICASETS, namespace=ns))["items"]
    owner = controller_ref_of(rs)
    assert owner is not None and owner["uid"] == d2["metadata"]["uid"]
    assert await _count(c, PODS, ns) == 2


async def test_e2e06_keep_rc_until_all_pods_are_deleted(c: RestClient, ns: str) -> None:
    rc = await _rc(c, ns, "simpletest.rc", N)
    await eventually(lambda: _live_pods(c, ns, N), what=f"{N} pods")
    watch_task = asyncio.create_task(_pods_when_rc_deleted(c, ns))
    await asyncio.sleep(0)
    await delete(c, RC, "simpletest.rc", ns, policy="Foreground", uid=rc["metadata"]["uid"])
    assert await asyncio.wait_for(watch_task, 60) == 0


async def _pods_when_rc_deleted(c: RestClient, ns: str) -> int:
    """Count pods at the moment the RC's DELETED event arrives."""
    from kubegc.client.interface import WatchOptions

    listed = await c.list(RC, namespace=ns)
    rv = listed["metadata"]["resourceVersion"]
    async for event in c.watch(RC, namespace=ns, options=WatchOptions(resource_version=rv)):
        if event.type == "DELETED":
            return await _count(c, PODS, ns)
    return -1


async def test_e2e07_valid_owner_and_waiting_owner(c: RestClient, ns: str,
                                                   server: Server) -> None:
    rc1 = await _rc(c, ns, "rc1", N)
    rc2 = await _rc(c, ns, "rc2", 0, labels={"app": "other"})
    await eventually(lambda: _live_pods(c, ns, N), what=f"{N} pods")
    pods = sorted(p["metadata"]["name"] for p in await _pods(c, ns))
    half = pods[: N // 2]
    for name in half:
        await c.patch(PODS, name, {"metadata": {"ownerReferences": [ref(rc2)]}},
                      namespace=ns, patch_type=PatchType.STRATEGIC)
    await delete(c, RC, "rc1", ns, policy="Foreground", uid=rc1["metadata"]["uid"])
    await eventually(lambda: _gone(c, RC, "rc1", ns), timeout=60, what="rc1 gone")
    await settle(server)
    left = await _pods(c, ns)
    assert sorted(p["metadata"]["name"] for p in left) == half
    for pod in left:
        assert not pod["metadata"].get("deletionTimestamp")
        assert [r["uid"] for r in pod["metadata"]["ownerReferences"]] == [rc2["metadata"]["uid"]]


async def test_e2e08_not_blocked_by_dependency_circle(c: RestClient, ns: str) -> None:
    pods = {}
    for name in ("pod1", "pod2", "pod3"):
        pods[name] = await c.create(PODS, {"metadata": {"name": name}, "spec": {
            "containers": [{"name": "c", "image": "nginx"}]}}, namespace=ns)
    for child, owner in (("pod1", "pod3"), ("pod2", "pod1"), ("pod3", "pod2")):
        owner_obj = dict(pods[owner], apiVersion="v1", kind="Pod")
        await c.patch(PODS, child, {"metadata": {"ownerReferences": [
            ref(owner_obj, block=True, controller=True)]}}, namespace=ns,
            patch_type=PatchType.STRATEGIC)
    await delete(c, PODS, "pod1", ns, policy="Foreground")
    await eventually(lambda: _none(c, ns, PODS), timeout=60, what="0 pods")


def _cluster_crd(group: str) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"owners.{group}"},
            "spec": {"group": group, "scope": "Cluster",
                     "names": {"plural": "owners", "singular": "owner", "kind": "Owner"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                         "openAPIV3Schema": {"type": "object",
                                             "x-kubernetes-preserve-unknown-fields": True}}}]}}


async def _cluster_crs(c: RestClient) -> tuple[GroupVersionResource, dict[str, Any], str]:
    group = f"e{uuid.uuid4().hex[:6]}.example.com"
    await c.create(CRDS, _cluster_crd(group))
    gvr = GroupVersionResource(group, "v1", "owners")

    async def make_owner() -> Any:
        from kubegc.api.errors import StatusError

        try:
            return await c.create(gvr, {"apiVersion": f"{group}/v1", "kind": "Owner",
                                        "metadata": {"name": "owner"}})
        except StatusError as e:
            if e.code == 404:
                return None
            raise

    owner = await eventually(make_owner, what="CR type served")
    await c.create(gvr, {"apiVersion": f"{group}/v1", "kind": "Owner", "metadata": {
        "name": "dependent", "ownerReferences": [ref(owner)]}})
    return gvr, owner, group


async def test_e2e09_cascading_deletion_of_custom_resources(c: RestClient) -> None:
    gvr, _, _ = await _cluster_crs(c)
    await delete(c, gvr, "owner", policy="Background")
    await eventually(lambda: _gone(c, gvr, "dependent"), what="dependent gone")
    assert not await exists(c, gvr, "owner")


async def test_e2e10_orphan_deletion_of_custom_resources(c: RestClient, server: Server) -> None:
    gvr, _, _ = await _cluster_crs(c)
    await delete(c, gvr, "owner", policy="Orphan")
    await eventually(lambda: _gone(c, gvr, "owner"), what="owner gone")
    await settle(server)
    dependent = await c.get(gvr, "dependent")
    assert not dependent["metadata"].get("ownerReferences")


@pytest.fixture(scope="module")
def fast_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server whose clock runs 60x: a CronJob's minute passes in a second."""
    s = start_server(tmp_path_factory.mktemp("fast"), "--time-scale", "60")
    yield s
    stop_server(s)


async def test_e2e11_delete_jobs_and_pods_created_by_cronjob(fast_server: Server) -> None:
    c = rest_client(fast_server)
    try:
        ns = f"e2e-{uuid.uuid4().hex[:8]}"
        await c.create(NAMESPACES, {"metadata": {"name": ns}})
        await c.create(CRONJOBS, {
            "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "simple"},
            "spec": {"schedule": "*/1 * * * ?", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "OnFailure",
                "containers": [{"name": "c", "image": "busybox"}]}}}}}}, namespace=ns)
        await eventually(lambda: _count(c, JOBS, ns), timeout=30, what="a Job")
        await delete(c, CRONJOBS, "simple", ns, policy="Background")
        await eventually(lambda: _none(c, ns, CRONJOBS, JOBS, PODS), timeout=30,
                         what="0 CronJobs, 0 Jobs, 0 Pods")
    finally:
        await c.close()

