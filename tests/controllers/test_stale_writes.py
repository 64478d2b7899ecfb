"""Controllers write only onto the object as they saw it: a controller whose view is stale
(an old leader still running during a brief overlap, or a lagging informer) cannot delete
a newer object of the same name, nor an object whose state changed since it judged it,
nor overwrite a newer status. Each case: the object changes behind the controller's back,
the controller acts on its old copy, and the write fails with 409 while the newer object
stays as it is."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kubegc.api.clock import ManualClock
from kubegc.api.errors import StatusError, is_conflict
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.events import EVENTS
from kubegc.client.interface import DeleteOptions
from kubegc.client.local import LocalClient
from kubegc.controllers.controller_utils import PodControl, update_status_of
from kubegc.controllers.cronjob import CronJobController
from kubegc.controllers.deployment import DeploymentController
from kubegc.controllers.deployment.sync import cleanup_deployment
from kubegc.controllers.endpoint import EndpointsController
from kubegc.controllers.podgc import PodGCController
from kubegc.controllers.statefulset import StatefulSetController
from kubegc.testing import Cluster

from .workload_harness import context_for

PODS = GroupVersionResource("", "v1", "pods")
REPLICASETS = GroupVersionResource("apps", "v1", "replicasets")
ENDPOINTS = GroupVersionResource("", "v1", "endpoints")
JOBS = GroupVersionResource("batch", "v1", "jobs")
NS = "default"
SPEC = {"containers": [{"name": "c", "image": "nginx"}]}


@pytest.fixture
async def client() -> AsyncIterator[LocalClient]:
    async with Cluster(controllers=[], clock=ManualClock()) as cluster:
        yield cluster.client


async def pod(client: LocalClient, name: str, **meta: Any) -> Obj:
    return await client.create(PODS, {"metadata": {"name": name, **meta}, "spec": SPEC},
                               namespace=NS)


async def recreated(client: LocalClient, obj: Obj, gvr: GroupVersionResource) -> Obj:
    """``obj`` deleted and made again under its name: what a stale view still calls it."""
    await client.delete(gvr, obj["metadata"]["name"], namespace=NS,
                        options=DeleteOptions(propagation_policy="Background"))
    body = copy.deepcopy(obj)
    for key in ("uid", "resourceVersion", "creationTimestamp"):
        body["metadata"].pop(key, None)
    return await client.create(gvr, body, namespace=NS)


async def changed(client: LocalClient, obj: Obj, gvr: GroupVersionResource) -> Obj:
    """``obj`` written again (a label): the stale view still has the old resourceVersion."""
    return await client.patch(gvr, obj["metadata"]["name"],
                              {"metadata": {"labels": {"touched": "yes"}}}, namespace=NS)


async def conflict(write: Any) -> None:
    with pytest.raises(StatusError) as caught:
        await write
    assert is_conflict(caught.value), caught.value


async def test_a_pod_made_again_under_its_name_is_not_deleted_by_a_stale_controller(
        client: LocalClient) -> None:
    old = await pod(client, "web-0")
    new = await recreated(client, old, PODS)
    control = PodControl(client, context_for(StatefulSetController, client,  # type: ignore[arg-type]
                                             ManualClock()).recorder)
    await conflict(control.delete_pod(old, old))
    assert (await client.get(PODS, "web-0", namespace=NS))["metadata"]["uid"] == (
        new["metadata"]["uid"])
    events = (await client.list(EVENTS, namespace=NS))["items"]
    assert [e for e in events if e["reason"] == "FailedDelete"] == []


@pytest.mark.parametrize("change", [recreated, changed], ids=["recreated", "changed"])
async def test_a_stateful_pod_judged_on_a_stale_copy_is_not_deleted(
        client: LocalClient, change: Any) -> None:
    old = await pod(client, "db-0")
    new = await change(client, old, PODS)
    sts = StatefulSetController(context_for(StatefulSetController, client,  # type: ignore[arg-type]
                                            ManualClock()))
    await conflict(sts.delete_pod({"metadata": {"name": "db", "namespace": NS}}, old,
                                  "RollingUpdate", "an outdated pod"))
    assert (await client.get(PODS, "db-0", namespace=NS))["metadata"]["resourceVersion"] == (
        new["metadata"]["resourceVersion"])


async def test_a_status_computed_from_a_stale_copy_is_not_written(client: LocalClient) -> None:
    old = await pod(client, "p")
    await changed(client, old, PODS)
    await conflict(update_status_of(client, PODS, old, {"phase": "Failed"}))
    assert (await client.get(PODS, "p", namespace=NS))["status"].get("phase") != "Failed"


async def test_pod_gc_does_not_delete_a_pod_that_changed_since_it_judged_it(
        client: LocalClient) -> None:
    old = await pod(client, "orphan", finalizers=[])
    await changed(client, old, PODS)
    podgc = PodGCController(context_for(PodGCController, client,  # type: ignore[arg-type]
                                        ManualClock()))
    await conflict(podgc.mark_failed_and_delete_pod(old))
    assert (await client.get(PODS, "orphan", namespace=NS))["metadata"]["labels"] == {
        "touched": "yes"}


async def test_an_old_replicaset_scaled_up_since_it_was_judged_empty_is_kept(
        client: LocalClient) -> None:
    def rs(name: str, revision: str) -> Obj:
        return {"metadata": {"name": name, "annotations": {
                    "deployment.kubernetes.io/revision": revision}},
                "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "x"}},
                         "template": {"metadata": {"labels": {"app": "x"}}, "spec": SPEC}}}

    olds = [await client.create(REPLICASETS, rs(f"web-{i}", str(i)), namespace=NS)
            for i in (1, 2)]
    stale = [dict(o, status={"observedGeneration": 1}) for o in olds]
    await client.patch(REPLICASETS, "web-1", {"spec": {"replicas": 2}}, namespace=NS)
    deployment = {"metadata": {"name": "web", "namespace": NS},
                  "spec": {"revisionHistoryLimit": 0}}
    dc = DeploymentController(context_for(DeploymentController, client,  # type: ignore[arg-type]
                                          ManualClock()))
    await cleanup_deployment(dc, stale, deployment)
    names = {r["metadata"]["name"] for r in (await client.list(REPLICASETS, namespace=NS))["items"]}
    assert names == {"web-1"}  # web-2 was as judged: deleted; web-1 had changed: kept


async def test_endpoints_made_again_for_a_new_service_are_not_deleted(
        client: LocalClient) -> None:
    old = await client.create(ENDPOINTS, {"metadata": {"name": "svc"}}, namespace=NS)
    new = await recreated(client, old, ENDPOINTS)
    ec = EndpointsController(context_for(EndpointsController, client,  # type: ignore[arg-type]
                                         ManualClock()))
    ec.endpoints.indexer.add(old)  # the stale view: the old Endpoints, no Service
    await ec.sync_service(f"{NS}/svc")
    assert (await client.get(ENDPOINTS, "svc", namespace=NS))["metadata"]["uid"] == (
        new["metadata"]["uid"])


async def test_a_job_made_again_under_its_name_is_not_deleted_by_a_stale_cronjob(
        client: LocalClient) -> None:
    body = {"metadata": {"name": "nightly-1"}, "spec": {"template": {"spec": {
        "restartPolicy": "Never", **SPEC}}}}
    old = await client.create(JOBS, body, namespace=NS)
    new = await recreated(client, old, JOBS)
    cj = CronJobController(context_for(CronJobController, client,  # type: ignore[arg-type]
                                       ManualClock()))
    cron: Obj = {"apiVersion": "batch/v1", "kind": "CronJob",
                 "metadata": {"name": "nightly", "namespace": NS, "uid": "u"}, "status": {}}
    assert not await cj.delete_job(cron, old, "SuccessfulJobsHistoryLimit", "over the limit")
    assert (await client.get(JOBS, "nightly-1", namespace=NS))["metadata"]["uid"] == (
        new["metadata"]["uid"])
