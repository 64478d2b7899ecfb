"""The Job controller against FakeClient: pods with the tracking finalizer, counting
succeeded and failed pods exactly once, completions/parallelism, backoffLimit with the
pod failure backoff, conditions and events, finalizers of orphaned pods."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest

from kubegc.api.clock import ManualClock
from kubegc.api.meta import controller_ref_of
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import SharedInformerFactory
from kubegc.client.fake import FakeClient
from kubegc.component.deletions import InMemoryDeletionSink
from kubegc.controllers.job.job_controller import JobController
from kubegc.controllers.job.util import JOB_TRACKING_FINALIZER, BackoffRecord
from kubegc.testing import Cluster

from ..workload_harness import (
    PODS,
    context_for,
    event_messages,
    eventually,
    objects,
    quiet,
    running,
    set_pod_phase,
    wait_for,
)

JOBS = GroupVersionResource("batch", "v1", "jobs")
UID = "0f6a6d1c-job"


def job(*, completions: int | None = 1, parallelism: int = 1, backoff_limit: int = 6,
        suspend: bool = False) -> Obj:
    """A Job as the registry's job strategy leaves it (generated selector and labels)."""
    labels = {"batch.kubernetes.io/controller-uid": UID, "batch.kubernetes.io/job-name": "pi",
              "controller-uid": UID, "job-name": "pi"}
    spec: Obj = {"parallelism": parallelism, "backoffLimit": backoff_limit, "suspend": suspend,
                 "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": UID}},
                 "template": {"metadata": {"labels": labels}, "spec": {
                     "restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl"}]}}}
    if completions is not None:
        spec["completions"] = completions
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "pi", "namespace": "ns", "uid": UID}, "spec": spec}


def status(client: FakeClient) -> Obj:
    stored = client.stored(JOBS, "pi", namespace="ns")
    assert stored is not None
    return dict(stored.get("status") or {})


def conditions(client: FakeClient) -> dict[str, Obj]:
    return {c["type"]: c for c in status(client).get("conditions", [])}


def active_pods(client: FakeClient) -> list[Obj]:
    return [p for p in objects(client, PODS)
            if p.get("status", {}).get("phase") not in ("Succeeded", "Failed")
            and not p["metadata"].get("deletionTimestamp")]


async def finish_all(client: FakeClient, phase: str) -> None:
    for pod in active_pods(client):
        set_pod_phase(client, pod, phase)


async def test_pods_carry_finalizer_labels_and_controller_ref() -> None:
    client = FakeClient()
    client.add_object(JOBS, job(parallelism=2, completions=3))
    async with running(JobController, client) as jc:
        await eventually(lambda: len(objects(client, PODS)) == 2)
        await quiet(jc)
    for pod in objects(client, PODS):
        assert pod["metadata"]["generateName"] == "pi-"
        assert pod["metadata"]["finalizers"] == [JOB_TRACKING_FINALIZER]
        assert pod["metadata"]["labels"]["batch.kubernetes.io/job-name"] == "pi"
        assert controller_ref_of(pod) == {"apiVersion": "batch/v1", "kind": "Job", "name": "pi",
                                          "uid": UID, "controller": True,
                                          "blockOwnerDeletion": True}
    st = status(client)
    assert st["active"] == 2 and st["ready"] == 0 and st["uncountedTerminatedPods"] == {}
    assert st["startTime"] == "2026-01-01T00:00:00Z"


@pytest.mark.parametrize(("completions", "parallelism"), [
    pytest.param(1, 1, id="one-pod"),
    pytest.param(3, 1, id="sequential"),
    pytest.param(4, 2, id="two-at-a-time"),
])
async def test_completes_when_enough_pods_succeed(completions: int, parallelism: int) -> None:
    client = FakeClient()
    client.add_object(JOBS, job(completions=completions, parallelism=parallelism))
    async with running(JobController, client) as jc:
        for _ in range(completions):
            await eventually(lambda: bool(active_pods(client))
                             or "Complete" in conditions(client))
            assert len(active_pods(client)) <= parallelism
            await finish_all(client, "Succeeded")
            await eventually(lambda: not active_pods(client) or status(client).get(
                "succeeded", 0) >= 1)
            if "Complete" in conditions(client):
                break
        await eventually(lambda: "Complete" in conditions(client))
        await quiet(jc)
    st = status(client)
    assert st["succeeded"] == completions and "failed" not in st
    assert st["completionTime"] == "2026-01-01T00:00:00Z"
    assert st["uncountedTerminatedPods"] == {}
    conds = conditions(client)
    for kind in ("SuccessCriteriaMet", "Complete"):
        assert (conds[kind]["status"], conds[kind]["reason"], conds[kind]["message"]) == (
            "True", "CompletionsReached", "Reached expected number of succeeded pods")
    assert len(objects(client, PODS)) == completions
    assert all(not p["metadata"].get("finalizers") for p in objects(client, PODS))
    assert event_messages(client, "Completed") == ["Job completed"]


async def test_backoff_limit_fails_the_job_after_backoff_delays() -> None:
    clock = ManualClock()
    client = FakeClient(clock=clock)
    client.add_object(JOBS, job(backoff_limit=1))
    async with running(JobController, client, clock) as jc:
        await eventually(lambda: len(active_pods(client)) == 1)
        await finish_all(client, "Failed")
        await eventually(lambda: status(client).get("failed") == 1)
        await quiet(jc)
        assert active_pods(client) == []  # waiting for the 10 s pod failure backoff
        clock.advance(10)
        await eventually(lambda: len(active_pods(client)) == 1)
        await finish_all(client, "Failed")
        await eventually(lambda: "Failed" in conditions(client))
        await quiet(jc)
    st = status(client)
    assert st["failed"] == 2 and "completionTime" not in st
    conds = conditions(client)
    for kind in ("FailureTarget", "Failed"):
        assert (conds[kind]["reason"], conds[kind]["message"]) == (
            "BackoffLimitExceeded", "Job has reached the specified backoff limit")
    assert event_messages(client, "BackoffLimitExceeded") == [
        "Job has reached the specified backoff limit"]


async def test_deleted_pod_counts_as_failed_and_is_replaced() -> None:
    clock = ManualClock()
    client = FakeClient(clock=clock)
    client.add_object(JOBS, job())
    async with running(JobController, client, clock) as jc:
        await eventually(lambda: len(active_pods(client)) == 1)
        [pod] = active_pods(client)
        await client.delete(PODS, pod["metadata"]["name"], namespace="ns")
        # the finalizer held the pod until the controller counted it, then it went away
        await eventually(lambda: status(client).get("failed") == 1
                         and client.stored(PODS, pod["metadata"]["name"], namespace="ns")
                         is None)
        clock.advance(10)
        await eventually(lambda: len(active_pods(client)) == 1)
        await quiet(jc)
    assert active_pods(client)[0]["metadata"]["name"] != pod["metadata"]["name"]


async def test_lowering_parallelism_deletes_pods_without_counting_failures() -> None:
    client = FakeClient()
    client.add_object(JOBS, job(parallelism=3, completions=10))
    async with running(JobController, client) as jc:
        await eventually(lambda: len(active_pods(client)) == 3)
        stored = client.stored(JOBS, "pi", namespace="ns")
        assert stored is not None
        stored["spec"]["parallelism"] = 1
        await client.update(JOBS, stored, namespace="ns")
        await eventually(lambda: len(objects(client, PODS)) == 1)
        await quiet(jc)
    assert "failed" not in status(client) and status(client)["active"] == 1


async def test_suspended_job_runs_no_pods() -> None:
    client = FakeClient()
    client.add_object(JOBS, job(suspend=True))
    async with running(JobController, client) as jc:
        await eventually(lambda: "Suspended" in conditions(client))
        await quiet(jc)
    assert objects(client, PODS) == []
    assert "startTime" not in status(client)
    assert (conditions(client)["Suspended"]["reason"], conditions(client)["Suspended"][
        "status"]) == ("JobSuspended", "True")


async def test_pods_of_a_deleted_job_lose_their_finalizer() -> None:
    """The GC deletes an orphaned Job's pods; the finalizer must not keep them forever."""
    client = FakeClient()
    client.add_object(JOBS, job(parallelism=2, completions=2))
    async with running(JobController, client) as jc:
        await eventually(lambda: len(active_pods(client)) == 2)
        await client.delete(JOBS, "pi", namespace="ns")
        await eventually(lambda: all(not p["metadata"].get("finalizers")
                                     for p in objects(client, PODS)))
        await quiet(jc)


@pytest.mark.parametrize(("failures", "elapsed", "remaining"), [
    pytest.param(0, 0, 0.0, id="no-failures"),
    pytest.param(1, 0, 10.0, id="first-failure"),
    pytest.param(3, 5, 35.0, id="doubling"),
    pytest.param(12, 0, 600.0, id="capped"),
    pytest.param(1, 11, 0.0, id="elapsed"),
])
def test_backoff_record_remaining(failures: int, elapsed: float, remaining: float) -> None:
    clock = ManualClock()
    record = BackoffRecord(failures, clock.now())
    clock.advance(elapsed)
    assert record.remaining(clock.now()) == remaining


# -- against a running kubegc (registry, GC, kubelet and scheduler) ---------------------------

NAMESPACES = GroupVersionResource("", "v1", "namespaces")



async def test_cluster_job_runs_pods_to_completion() -> None:
    async with Cluster(controllers=["garbagecollector", "job", "kubelet", "scheduler"]) as c:
        await c.client.create(NAMESPACES, {"metadata": {"name": "ns"}})
        body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
                "spec": {"completions": 3, "parallelism": 2, "template": {"spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "pi", "image": "perl"}]}}}}
        created = await c.client.create(JOBS, body, namespace="ns")

        async def complete() -> bool:
            got = await c.client.get(JOBS, "pi", namespace="ns")
            return any(cond["type"] == "Complete" for cond in
                       (got.get("status") or {}).get("conditions") or [])

        await wait_for(complete, what="job complete")
        await c.asettle()
        job_obj = await c.client.get(JOBS, "pi", namespace="ns")
        pods = (await c.client.list(PODS, namespace="ns"))["items"]
    st = job_obj["status"]
    assert st["succeeded"] == 3 and "failed" not in st and "active" not in st  # omitempty
    assert st["startTime"] and st["completionTime"]
    assert len(pods) == 3
    for pod in pods:
        assert pod["status"]["phase"] == "Succeeded"
        assert not pod["metadata"].get("finalizers")
        assert pod["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] == created[
            "metadata"]["uid"]
        assert controller_ref_of(pod)["uid"] == created["metadata"]["uid"]  # type: ignore[index]


@contextlib.asynccontextmanager
async def recording(client: FakeClient, clock: ManualClock
                    ) -> AsyncIterator[tuple[JobController, InMemoryDeletionSink]]:
    """The Job controller handed an in-memory DeletionSink (the manager hands it the
    DeletionRecord one)."""
    informers = SharedInformerFactory(client, clock=clock)
    sink = InMemoryDeletionSink()
    jc = JobController(context_for(JobController, client, clock, informers=informers),
                       deletions=sink)
    await jc.start()
    informers.start()
    try:
        yield jc, sink
    finally:
        await jc.stop()
        await informers.stop()


async def test_its_pod_deletions_are_recorded_with_their_rule() -> None:
    clock = ManualClock()
    client = FakeClient(clock=clock)
    body = job(parallelism=3, completions=10)
    body["spec"]["activeDeadlineSeconds"] = 100
    client.add_object(JOBS, body)
    async with recording(client, clock) as (jc, sink):
        await eventually(lambda: len(active_pods(client)) == 3)
        stored = client.stored(JOBS, "pi", namespace="ns")
        assert stored is not None
        stored["spec"]["parallelism"] = 2
        await client.update(JOBS, stored, namespace="ns")
        await eventually(lambda: len(sink) == 1, what="the scale-down recorded")
        await quiet(jc)
        clock.advance(100)
        await eventually(lambda: len(sink) == 3, what="the deadline's deletions recorded")
        await quiet(jc)
    [scaled, *deadline] = sink.deletions
    assert (scaled.deleter, scaled.reason, scaled.object.kind) == (
        "job-controller", "TooManyActivePods", "Pod")
    assert scaled.message == ("Job pi wants 2 active pods (parallelism 2, completions 10, "
                              "0 succeeded); 3 were active")
    assert {d.reason for d in deadline} == {"DeadlineExceeded"}
    assert deadline[0].message == ("Job pi: Job was active longer than specified deadline "
                                   "(activeDeadlineSeconds 100)")
    deadline_pods = {d.object.name for d in deadline}
    assert len(deadline_pods) == 2 and scaled.object.name not in deadline_pods
