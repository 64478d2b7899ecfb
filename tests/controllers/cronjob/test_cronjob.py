"""The CronJob controller against FakeClient with a ManualClock: Jobs created on schedule
and named by the scheduled minute, concurrency policies, history limits, status."""

from __future__ import annotations

import copy
from datetime import UTC, datetime

import pytest

import kubegc.controllers.cronjob.utils as cu
from kubegc.api.clock import ManualClock
from kubegc.api.meta import controller_ref_of
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import SharedInformerFactory
from kubegc.client.fake import FakeClient
from kubegc.client.interface import DeleteOptions
from kubegc.component.deletions import InMemoryDeletionSink
from kubegc.controllers.cronjob.cronjob_controllerv2 import CronJobController
from kubegc.testing import Cluster

from ..workload_harness import (
    context_for,
    event_messages,
    eventually,
    objects,
    quiet,
    running,
    wait_for,
)

CRONJOBS = GroupVersionResource("batch", "v1", "cronjobs")
JOBS = GroupVersionResource("batch", "v1", "jobs")
MINUTE0 = 29453760  # 2026-01-01T00:00:00Z in minutes since the epoch


def cronjob(schedule: str = "*/1 * * * ?", **spec: object) -> Obj:
    body: Obj = {"schedule": schedule, "concurrencyPolicy": "Allow", "suspend": False,
                 "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
                 "jobTemplate": {"metadata": {"labels": {"app": "cron"}}, "spec": {
                     "template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "c", "image": "busybox"}]}}}}}
    body.update(spec)
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "simple", "namespace": "ns"}, "spec": body}


def setup(**spec: object) -> tuple[FakeClient, ManualClock, Obj]:
    clock = ManualClock()
    client = FakeClient(clock=clock)
    cj = client.add_object(CRONJOBS, cronjob(**spec))  # type: ignore[arg-type]
    return client, clock, cj


def job_names(client: FakeClient) -> list[str]:
    return [j["metadata"]["name"] for j in objects(client, JOBS)]


def cj_status(client: FakeClient) -> Obj:
    stored = client.stored(CRONJOBS, "simple", namespace="ns")
    assert stored is not None
    return dict(stored.get("status") or {})


def finish(client: FakeClient, name: str, condition: str, at: str) -> None:
    job = client.stored(JOBS, name, namespace="ns")
    assert job is not None
    new = copy.deepcopy(job)
    new["status"] = {"startTime": at, "conditions": [{"type": condition, "status": "True"}]}
    if condition == "Complete":
        new["status"]["completionTime"] = at
    client.update_object(JOBS, new)


async def test_creates_job_at_each_activation() -> None:
    client, clock, cj = setup()
    async with running(CronJobController, client, clock) as cc:
        await quiet(cc)
        assert job_names(client) == []  # created at 00:00:00, first activation is 00:01
        clock.advance(61)
        await eventually(lambda: job_names(client) == [f"simple-{MINUTE0 + 1}"])
        await eventually(lambda: cj_status(client).get("lastScheduleTime") is not None)
        clock.advance(60)
        await eventually(lambda: len(job_names(client)) == 2)
        await quiet(cc)
    job = client.stored(JOBS, f"simple-{MINUTE0 + 1}", namespace="ns")
    assert job is not None
    assert controller_ref_of(job) == {"apiVersion": "batch/v1", "kind": "CronJob",
                                      "name": "simple", "uid": cj["metadata"]["uid"],
                                      "controller": True, "blockOwnerDeletion": True}
    assert job["metadata"]["labels"] == {"app": "cron"}
    assert job["metadata"]["annotations"] == {
        "batch.kubernetes.io/cronjob-scheduled-timestamp": "2026-01-01T00:01:00Z"}
    status = cj_status(client)
    assert status["lastScheduleTime"] == "2026-01-01T00:02:00Z"
    assert [r["name"] for r in status["active"]] == job_names(client)
    assert event_messages(client, "SuccessfulCreate") == [
        f"Created job simple-{MINUTE0 + 1}", f"Created job simple-{MINUTE0 + 2}"]


async def test_forbid_skips_while_a_job_is_active() -> None:
    client, clock, _ = setup(concurrencyPolicy="Forbid")
    async with running(CronJobController, client, clock) as cc:
        clock.advance(61)
        await eventually(lambda: len(job_names(client)) == 1)
        await quiet(cc)
        clock.advance(60)
        await eventually(lambda: event_messages(client, "JobAlreadyActive") != [])
        await quiet(cc)
    assert len(job_names(client)) == 1


async def test_replace_deletes_the_active_job_with_background_propagation() -> None:
    client, clock, _ = setup(concurrencyPolicy="Replace")
    async with running(CronJobController, client, clock) as cc:
        clock.advance(61)
        await eventually(lambda: len(job_names(client)) == 1)
        await quiet(cc)
        clock.advance(60)
        await eventually(lambda: job_names(client) == [f"simple-{MINUTE0 + 2}"])
        await quiet(cc)
    deletes = [a for a in client.action_log if a.verb == "delete" and a.gvr == JOBS]
    assert [(a.name, a.body.propagation_policy) for a in deletes] == [
        (f"simple-{MINUTE0 + 1}", "Background")]
    assert event_messages(client, "SuccessfulDelete") == [f"Deleted job simple-{MINUTE0 + 1}"]


async def test_finished_jobs_leave_active_and_old_ones_are_pruned() -> None:
    client, clock, _ = setup(successfulJobsHistoryLimit=1)
    async with running(CronJobController, client, clock) as cc:
        for minute in (1, 2):
            clock.advance(60 if minute > 1 else 61)
            await eventually(lambda m=minute: f"simple-{MINUTE0 + m}" in job_names(client))
            await quiet(cc)
            finish(client, f"simple-{MINUTE0 + minute}", "Complete",
                   f"2026-01-01T00:0{minute}:30Z")
            await quiet(cc)
        await eventually(lambda: job_names(client) == [f"simple-{MINUTE0 + 2}"])
        await eventually(lambda: not cj_status(client).get("active"))
    status = cj_status(client)
    assert status["lastSuccessfulTime"] == "2026-01-01T00:02:30Z"
    assert f"Saw completed job: simple-{MINUTE0 + 1}, condition: Complete" in event_messages(
        client, "SawCompletedJob")


@pytest.mark.parametrize("spec", [
    pytest.param({"suspend": True}, id="suspended"),
    pytest.param({"schedule": "not a schedule"}, id="unparseable"),
    pytest.param({"timeZone": "Mars/Olympus"}, id="unknown-time-zone"),
])
async def test_creates_nothing(spec: dict[str, object]) -> None:
    client, clock, _ = setup(**spec)
    async with running(CronJobController, client, clock) as cc:
        clock.advance(61)
        await quiet(cc)
    assert job_names(client) == []


async def test_missed_starting_deadline_is_reported() -> None:
    client, clock, _ = setup(startingDeadlineSeconds=10, schedule="0 * * * *")
    clock.advance(3600 + 30)  # the controller starts 30 s after the 01:00 activation
    async with running(CronJobController, client, clock) as cc:
        await quiet(cc)
    assert job_names(client) == []


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(("schedule", "now", "recent"), [
    pytest.param("*/5 * * * *", "2026-01-01T00:04:59", None, id="before-first"),
    pytest.param("*/5 * * * *", "2026-01-01T00:05:00", "2026-01-01T00:05:00", id="exactly"),
    pytest.param("*/5 * * * *", "2026-01-01T00:17:00", "2026-01-01T00:15:00", id="missed-some"),
    pytest.param("0 9 * * *", "2026-01-03T10:00:00", "2026-01-03T09:00:00", id="daily"),
])
def test_most_recent_schedule_time(schedule: str, now: str, recent: str | None) -> None:
    cj = cronjob(schedule)
    cj["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z"
    parsed = cu.Schedule.parse(schedule, None)
    result = cu.most_recent_schedule_time(cj, at(now), parsed, include_starting_deadline=False)
    assert result.most_recent == (at(recent) if recent else None)


def test_schedule_in_a_time_zone() -> None:
    schedule = cu.Schedule.parse("0 9 * * *", "America/New_York")
    assert schedule.next(at("2026-01-01T00:00:00")) == at("2026-01-01T14:00:00")


# -- against a running kubegc (registry, GC, job controller, kubelet, scheduler) ---------------

NAMESPACES = GroupVersionResource("", "v1", "namespaces")
PODS = GroupVersionResource("", "v1", "pods")



async def test_e2e_11_cronjob_creates_jobs_on_schedule_and_cascades() -> None:
    clock = ManualClock()
    controllers = ["garbagecollector", "cronjob", "job", "kubelet", "scheduler"]
    async with Cluster(controllers=controllers, clock=clock) as c:
        await c.client.create(NAMESPACES, {"metadata": {"name": "ns"}})
        body = cronjob()
        body["spec"] = {k: v for k, v in body["spec"].items() if k in ("schedule", "jobTemplate")}
        cj = await c.client.create(CRONJOBS, body, namespace="ns")

        async def jobs() -> list[Obj]:
            items: list[Obj] = (await c.client.list(JOBS, namespace="ns"))["items"]
            return items

        async def no_job_yet() -> bool:
            return not await jobs()

        await wait_for(no_job_yet)
        clock.advance(61)

        async def job_complete() -> bool:
            found = await jobs()
            return len(found) == 1 and any(
                cond["type"] == "Complete" for cond in
                (found[0].get("status") or {}).get("conditions") or [])

        await wait_for(job_complete, what="a Job created at 00:01 and completed")
        [job] = await jobs()
        assert job["metadata"]["name"] == f"simple-{MINUTE0 + 1}"
        assert controller_ref_of(job)["uid"] == cj["metadata"]["uid"]  # type: ignore[index]
        assert len((await c.client.list(PODS, namespace="ns"))["items"]) == 1

        async def recorded() -> bool:
            got = await c.client.get(CRONJOBS, "simple", namespace="ns")
            status = got.get("status") or {}
            return (status.get("lastScheduleTime") == "2026-01-01T00:01:00Z"
                    and not status.get("active"))

        await wait_for(recorded, what="status: lastScheduleTime, no active job")
        await c.client.delete(CRONJOBS, "simple", namespace="ns", options=DeleteOptions(
            propagation_policy="Background", preconditions_uid=cj["metadata"]["uid"]))

        async def all_gone() -> bool:
            lists = [(await c.client.list(g, namespace="ns"))["items"]
                     for g in (CRONJOBS, JOBS, PODS)]
            # Time must pass: the garbage collector polls its initial sync on the clock.
            clock.advance(0.5)
            return not any(lists)

        await wait_for(all_gone, what="cronjob, job and pods gone")


async def test_its_job_deletions_are_recorded_with_their_rule() -> None:
    client, clock, _ = setup(successfulJobsHistoryLimit=1)
    informers = SharedInformerFactory(client, clock=clock)
    sink = InMemoryDeletionSink()
    cc = CronJobController(context_for(CronJobController, client, clock, informers=informers),
                           deletions=sink)
    await cc.start()
    informers.start()
    try:
        for minute in (1, 2):
            clock.advance(60 if minute > 1 else 61)
            await eventually(lambda m=minute: f"simple-{MINUTE0 + m}" in job_names(client))
            await quiet(cc)
            finish(client, f"simple-{MINUTE0 + minute}", "Complete",
                   f"2026-01-01T00:0{minute}:30Z")
            await quiet(cc)
        await eventually(lambda: len(sink) == 1, what="the history trim recorded")
    finally:
        await cc.stop()
        await informers.stop()
    [trim] = sink.deletions
    assert (trim.deleter, trim.reason, trim.object.kind, trim.object.name) == (
        "cronjob-controller", "SuccessfulJobsHistoryLimit", "Job", f"simple-{MINUTE0 + 1}")
    assert trim.message == ("CronJob simple keeps successfulJobsHistoryLimit 1: 2 Complete "
                            "Jobs, the 1 oldest deleted")
    assert trim.propagation_policy == "Background"
