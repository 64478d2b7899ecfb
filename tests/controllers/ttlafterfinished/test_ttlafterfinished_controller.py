"""The TTL-after-finished controller against FakeClient and a ManualClock: a finished Job
with a TTL is deleted (Foreground, uid precondition) once the TTL ran out and not before,
the fresh GET decides over a stale cache, and Jobs it must not touch are left alone
without a retry loop (cf. upstream's ttlafterfinished_controller_test.go)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubegc.api.clock import ManualClock, format_time
from kubegc.api.meta import DeletionPropagation
from kubegc.client.fake import FakeClient
from kubegc.component.config import TTLAfterFinishedControllerConfiguration
from kubegc.component.deletions import InMemoryDeletionSink
from kubegc.controllers.job.util import JOBS
from kubegc.controllers.ttlafterfinished import (
    TTLAfterFinishedController,
    finish_and_expire_time,
    needs_cleanup,
    time_left,
)
from kubegc.controllers.ttlafterfinished.ttlafterfinished_controller import FinishTimeError

from ..workload_harness import context_for, eventually, quiet

START = datetime(2026, 1, 1, tzinfo=UTC)


def job(name: str = "pi", *, ttl: int | None = 10, finished: str | None = "Complete",
        at: datetime | None = None, uid: str = "uid-1", deleting: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"template": {"spec": {"containers": [{"name": "c"}]}}}
    if ttl is not None:
        spec["ttlSecondsAfterFinished"] = ttl
    conditions = []
    if finished:
        cond = {"type": finished, "status": "True"}
        if at is not None:
            cond["lastTransitionTime"] = format_time(at)
        conditions.append(cond)
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": uid}
    if deleting:
        meta.update(deletionTimestamp=format_time(at or START), finalizers=["foregroundDeletion"])
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec,
            "status": {"conditions": conditions}}


@contextlib.asynccontextmanager
async def ttl_controller(client: FakeClient, clock: ManualClock
                         ) -> AsyncIterator[tuple[TTLAfterFinishedController,
                                                  InMemoryDeletionSink]]:
    from kubegc.client.cache import SharedInformerFactory

    informers = SharedInformerFactory(client, clock=clock)
    sink = InMemoryDeletionSink()
    ctx = context_for(TTLAfterFinishedController, client, clock,
                      TTLAfterFinishedControllerConfiguration(), informers=informers)
    controller = TTLAfterFinishedController(ctx, deletions=sink)
    await controller.start()
    informers.start()
    try:
        await controller.job_informer.wait_for_sync()
        yield controller, sink
    finally:
        await controller.stop()
        await informers.stop()


def deletes(client: FakeClient) -> list[Any]:
    return [a for a in client.action_log if a.verb == "delete"]


async def test_a_finished_job_goes_when_its_ttl_runs_out() -> None:
    clock = ManualClock(START)
    client = FakeClient(clock=clock)
    client.add_object(JOBS, job(at=START), namespace="ns")
    async with ttl_controller(client, clock) as (controller, sink):
        await quiet(controller)
        clock.advance(9)
        await quiet(controller)
        assert deletes(client) == []
        clock.advance(1)
        await eventually(lambda: len(sink) == 1, what="the Job deleted and recorded")
    [delete] = deletes(client)
    assert (delete.namespace, delete.name) == ("ns", "pi")
    assert delete.body.propagation_policy == DeletionPropagation.FOREGROUND
    assert delete.body.preconditions_uid == "uid-1"
    gets = [a for a in client.action_log if a.verb == "get"]
    assert [str(a) for a in gets] == ["get batch/v1 jobs ns/pi"]  # the fresh look
    [record] = sink.deletions
    assert (record.deleter, record.reason, record.object.kind, record.object.uid) == (
        "ttl-after-finished-controller", "TTLAfterFinished", "Job", "uid-1")
    assert record.propagation_policy == "Foreground"
    assert record.message == ("the Job finished (Complete) at 2026-01-01T00:00:00Z, "
                              "ttlSecondsAfterFinished 10, expired at 2026-01-01T00:00:10Z")


async def test_a_job_already_expired_goes_at_once_and_a_failed_one_too() -> None:
    clock = ManualClock(START + timedelta(hours=1))
    client = FakeClient(clock=clock)
    client.add_object(JOBS, job(at=START, finished="Failed"), namespace="ns")
    async with ttl_controller(client, clock) as (_, sink):
        await eventually(lambda: len(sink) == 1, what="the Job deleted and recorded")
    assert "finished (Failed)" in sink.deletions[0].message


async def test_the_fresh_job_decides_over_a_stale_cache() -> None:
    """processJob: "The Job's TTL is assumed to have expired, but the Job TTL might be
    stale": the fresh Job's longer TTL defers the delete to its own expiry."""
    clock = ManualClock(START + timedelta(seconds=30))
    client = FakeClient(clock=clock)
    client.add_object(JOBS, job(at=START), namespace="ns")
    client.respond_to_get(JOBS, "pi", job(at=START, ttl=100), namespace="ns")
    async with ttl_controller(client, clock) as (controller, sink):
        await eventually(lambda: any(a.verb == "get" for a in client.action_log))
        await quiet(controller)
        assert deletes(client) == [] and len(sink) == 0
        clock.advance(70)  # the fresh TTL's expiry: looked at again
        await eventually(lambda: deletes(client), what="deleted at the fresh expiry")


async def test_a_job_gone_or_recreated_before_the_delete_is_no_error() -> None:
    from kubegc.api.errors import StatusError

    clock = ManualClock(START + timedelta(seconds=30))
    client = FakeClient(clock=clock)
    client.add_object(JOBS, job(at=START), namespace="ns")
    client.respond_to_get(JOBS, "pi", StatusError(404, "NotFound", 'jobs.batch "pi" not found'),
                          namespace="ns")
    async with ttl_controller(client, clock) as (controller, sink):
        await eventually(lambda: any(a.verb == "get" for a in client.action_log))
        await quiet(controller)
    assert deletes(client) == [] and len(sink) == 0


@pytest.mark.parametrize("obj", [
    pytest.param(job(ttl=None, at=START), id="no-ttl"),
    pytest.param(job(finished=None), id="not-finished"),
    pytest.param(job(finished="Suspended", at=START), id="not-a-finishing-condition"),
    pytest.param(job(at=START, deleting=True), id="being-deleted"),
    pytest.param(job(at=None), id="finished-without-a-time"),
    pytest.param({**job(at=START), "spec": {"ttlSecondsAfterFinished": "ten"}},
                 id="ttl-not-a-number"),
    pytest.param(job(at=START, ttl=10**20), id="ttl-beyond-year-9999"),
])
async def test_jobs_it_must_not_delete_are_left_alone_without_a_loop(obj: dict[str, Any]
                                                                     ) -> None:
    clock = ManualClock(START + timedelta(hours=1))
    client = FakeClient(clock=clock)
    client.add_object(JOBS, obj, namespace="ns")
    async with ttl_controller(client, clock) as (controller, sink):
        await quiet(controller)
        clock.advance(3600)
        await quiet(controller)
        assert deletes(client) == [] and len(sink) == 0
        assert len(controller.queue) == 0


def test_expiry_arithmetic() -> None:
    finished = job(at=START, ttl=0)
    assert needs_cleanup(finished) and not needs_cleanup(job(finished=None))
    expiry = finish_and_expire_time(finished)
    assert expiry.expire_at == expiry.finish_at == START
    left, _ = time_left(job(at=START, ttl=10), START + timedelta(seconds=4))
    assert left == pytest.approx(6.0)
    with pytest.raises(FinishTimeError):
        finish_and_expire_time(job(at=None))
    forever = finish_and_expire_time(job(at=START, ttl=10**20))
    assert forever.expire_at.year == 9999
