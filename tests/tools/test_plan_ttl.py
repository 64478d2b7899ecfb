"""kubegc plan simulates TTL-after-finished: a finished Job whose ttlSecondsAfterFinished
runs out within the plan's horizon is deleted in the plan as on the live cluster — checked
against what then really happens (the plan first, read-only, then the same delete for
real on the same kubegc)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from kubegc.api.clock import RealClock, format_time
from kubegc.api.errors import StatusError, is_not_found
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import Client, DeleteOptions, PatchType
from kubegc.testing import Cluster

from .test_plan import NAMESPACES, NS, names, plan, ref

CRONJOBS = GroupVersionResource("batch", "v1", "cronjobs")
JOBS = GroupVersionResource("batch", "v1", "jobs")
POD_SPEC = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
#: seconds from now the Job's TTL runs out: past the plan's warm-up (what happens anyway
#: before the delete), within its horizon (a minute: no pod in scope)
EXPIRES_IN = 20


async def finished_job_of_a_cronjob(c: Client) -> tuple[Obj, Obj]:
    """A suspended CronJob and a Job of it, finished (Complete) with a TTL that runs out
    ``EXPIRES_IN`` seconds from now."""
    cj = await c.create(CRONJOBS, {
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
        "spec": {"schedule": "0 3 * * *", "suspend": True,
                 "jobTemplate": {"spec": {"template": {"spec": POD_SPEC}}}}}, namespace=NS)
    job = await c.create(JOBS, {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "nightly-1", "ownerReferences": [
            ref(cj, block=True, controller=True)]},
        "spec": {"suspend": True, "ttlSecondsAfterFinished": 60,
                 "template": {"spec": POD_SPEC}}}, namespace=NS)
    now = RealClock().now()
    finished_at = format_time(now - timedelta(seconds=60 - EXPIRES_IN))
    status: dict[str, Any] = {"startTime": finished_at, "completionTime": finished_at,
                              "conditions": [
        {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached",
         "lastTransitionTime": finished_at},
        {"type": "Complete", "status": "True", "reason": "CompletionsReached",
         "lastTransitionTime": finished_at}]}
    job = await c.patch(JOBS, "nightly-1", {"status": status}, namespace=NS,
                        patch_type=PatchType.MERGE, subresource="status")
    return cj, job


async def test_an_orphaned_finished_job_is_deleted_by_its_ttl_in_the_plan_and_for_real(
        ) -> None:
    async with Cluster() as cluster:
        c = cluster.client
        await c.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                                    "metadata": {"name": NS}})
        cj, job = await finished_job_of_a_cronjob(c)
        await cluster.asettle(30)
        report = await plan(cluster, cj, "Orphan")
        assert report.error == ""
        assert "ttl-after-finished-controller" in report.controllers
        assert names(report.deleted) == {"nightly", "nightly-1"}
        assert report.survivors == []
        ttl_steps = [s for s in report.steps if s.object.name == "nightly-1"
                     and "ttl-after-finished-controller" in s.by]
        assert ttl_steps, [(s.object.name, s.action, s.by, s.reason) for s in report.steps]
        assert "ttlSecondsAfterFinished 60" in ttl_steps[0].reason

        # for real: the CronJob goes, the Job is orphaned, then its TTL deletes it
        assert await c.get(JOBS, "nightly-1", namespace=NS)  # the plan wrote nothing
        await c.delete(CRONJOBS, "nightly", namespace=NS,
                       options=DeleteOptions(propagation_policy="Orphan"))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + EXPIRES_IN + 30
        while await _exists(c, "nightly-1"):
            assert loop.time() < deadline, "the Job was not deleted by its TTL"
            await asyncio.sleep(0.2)  # waiting on the live cluster's real clock
        assert job["metadata"]["uid"] in {r.uid for r in report.deleted}


async def _exists(c: Client, name: str) -> bool:
    try:
        await c.get(JOBS, name, namespace=NS)
    except StatusError as e:
        if is_not_found(e):
            return False
        raise
    return True
