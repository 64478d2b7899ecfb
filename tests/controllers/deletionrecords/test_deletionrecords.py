"""Durable GC decision records: written as DeletionRecord objects through the API, found by
the object's uid, kept for the TTL and pruned after it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from kubegc.api.clock import ManualClock
from kubegc.api.meta import ObjectReference
from kubegc.api.resources import GroupVersionResource
from kubegc.client.interface import DeleteOptions, ListOptions
from kubegc.controllermanager.garbagecollector import GarbageCollectorController
from kubegc.controllers.deletionrecords.sink import (
    DELETION_RECORDS,
    LABEL_UID,
    WRITE_BATCH,
    DeletionRecordSink,
    label_value,
)
from kubegc.controllers.garbagecollector.records import (
    Classification,
    DecisionReason,
    DeletionRecord,
    OwnerClassification,
    RecordAction,
)
from kubegc.storage import SqliteKV
from kubegc.testing import Cluster


def _record(clock: ManualClock, uid: str, name: str = "p1") -> DeletionRecord:
    return DeletionRecord(
        time=clock.now(), action=RecordAction.DELETE,
        object=ObjectReference("v1", "Pod", name, uid, "default"),
        reason=DecisionReason.OWNER_ABSENT, message="all owners are absent",
        propagation_policy="Background",
        owners=(OwnerClassification("v1", "ReplicationController", "rc", "u-rc",
                                    Classification.DANGLING, "NotFound"),))


async def test_records_are_written_and_pruned_after_the_ttl() -> None:
    clock = ManualClock()
    async with Cluster(controllers=[], clock=clock) as cluster:
        sink = DeletionRecordSink(cluster.client, clock=clock, ttl=3600)
        sink.start()
        try:
            sink.record(_record(clock, "uid-1"))
            await cluster.asettle()
            while not sink.is_idle():
                await cluster.asettle()
            found = await cluster.client.list(DELETION_RECORDS, options=ListOptions(
                label_selector=f"{LABEL_UID}=uid-1"))
            [item] = found["items"]
            assert (item["action"], item["reason"], item["propagationPolicy"]) == (
                "delete", "OwnerAbsent", "Background")
            assert item["object"] == {"apiVersion": "v1", "kind": "Pod",
                                      "namespace": "default", "name": "p1", "uid": "uid-1"}
            assert item["owners"][0]["classification"] == "dangling"
            clock.advance(timedelta(minutes=59).total_seconds())
            assert await sink.prune() == 0
            clock.advance(timedelta(minutes=2).total_seconds())
            assert await sink.prune() == 1
            left = await cluster.client.list(DELETION_RECORDS)
            assert left["items"] == []
        finally:
            await sink.stop()


def test_label_values_stay_valid_for_long_names() -> None:
    long = "x" * 200
    value = label_value(long)
    assert len(value) <= 63 and value != label_value("x" * 199)
    assert label_value("short") == "short"


async def test_a_repeated_decision_is_recorded_once() -> None:
    clock = ManualClock()
    async with Cluster(controllers=[], clock=clock) as cluster:
        sink = DeletionRecordSink(cluster.client, clock=clock)
        sink.start()
        try:
            sink.record(_record(clock, "uid-2"))
            sink.record(_record(clock, "uid-2"))
            while not sink.is_idle():
                await cluster.asettle()
            found = await cluster.client.list(DELETION_RECORDS, options=ListOptions(
                label_selector=f"{LABEL_UID}=uid-2"))
            assert len(found["items"]) == 1
        finally:
            await sink.stop()


async def _until(condition: Callable[[], bool], *, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.005)


async def _count(client: Any) -> int:
    return len((await client.list(DELETION_RECORDS))["items"])


async def test_records_wait_while_the_gc_is_busy_and_are_written_once_it_is_idle() -> None:
    clock = ManualClock()
    gc_busy = True
    async with Cluster(controllers=[], clock=clock) as cluster:
        sink = DeletionRecordSink(cluster.client, clock=clock, busy=lambda: gc_busy,
                                  max_defer=3600)
        sink.start()
        try:
            for i in range(3):
                sink.record(_record(clock, f"uid-busy-{i}"))
            await cluster.asettle()
            assert await _count(cluster.client) == 0 and sink.pending() == 3
            gc_busy = False
            await _until(sink.is_idle)
            assert await _count(cluster.client) == 3 and sink.written == 3
        finally:
            await sink.stop()


async def test_a_record_is_held_back_at_most_max_defer() -> None:
    clock = ManualClock()
    async with Cluster(controllers=[], clock=clock) as cluster:
        sink = DeletionRecordSink(cluster.client, clock=clock, busy=lambda: True,
                                  max_defer=0.05)
        sink.start()
        try:
            sink.record(_record(clock, "uid-deferred"))
            await _until(sink.is_idle)
            assert await _count(cluster.client) == 1
        finally:
            await sink.stop()


async def test_a_full_queue_is_written_even_while_the_gc_is_busy() -> None:
    clock = ManualClock()
    async with Cluster(controllers=[], clock=clock) as cluster:
        sink = DeletionRecordSink(cluster.client, clock=clock, busy=lambda: True,
                                  max_defer=3600, max_pending=10)
        sink.start()
        try:
            for i in range(10):
                sink.record(_record(clock, f"uid-full-{i}"))
            await _until(sink.is_idle)
            assert await _count(cluster.client) == 10
        finally:
            await sink.stop()


class _CountingClient:
    """The cluster's client without ``create_batch`` (as a ``RestClient``), counting
    creates in flight at once."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.in_flight = self.max_in_flight = 0

    async def create(self, gvr: GroupVersionResource, obj: Any, *, namespace: str = "") -> Any:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._client.create(gvr, obj, namespace=namespace)
        finally:
            self.in_flight -= 1

    def __getattr__(self, name: str) -> Any:
        if name == "create_batch":
            raise AttributeError(name)
        return getattr(self._client, name)


async def test_records_are_created_in_concurrent_batches(tmp_path: Path) -> None:
    """Over a client that creates one object per call, a batch's creates are all in
    flight at once (they share a group commit)."""
    clock = ManualClock()
    async with Cluster(controllers=[], clock=clock, storage="sqlite",
                       data_dir=tmp_path) as cluster:  # its writes wait for a group commit
        counting = _CountingClient(cluster.client)
        sink = DeletionRecordSink(counting, clock=clock)  # type: ignore[arg-type]
        for i in range(WRITE_BATCH + 10):
            sink.record(_record(clock, f"uid-batch-{i}"))
        sink.start()
        try:
            await _until(sink.is_idle)
        finally:
            await sink.stop()
        assert counting.max_in_flight == WRITE_BATCH  # one group commit, not one each
        assert await _count(cluster.client) == WRITE_BATCH + 10


async def test_records_are_created_a_batch_per_commit_in_process(tmp_path: Path) -> None:
    """In process (``LocalClient.create_batch``) a batch of records is one write batch:
    one SQLite transaction each."""
    clock = ManualClock()
    async with Cluster(controllers=[], clock=clock, storage="sqlite",
                       data_dir=tmp_path) as cluster:
        kv = cluster.cluster.kv
        assert isinstance(kv, SqliteKV)
        sink = DeletionRecordSink(cluster.client, clock=clock)
        for i in range(WRITE_BATCH + 10):
            sink.record(_record(clock, f"uid-batch-{i}"))
        before = kv.writer_stats.commits
        sink.start()
        try:
            await _until(sink.is_idle)
        finally:
            await sink.stop()
        assert kv.writer_stats.commits - before == 2
        assert sink.written == WRITE_BATCH + 10
        assert await _count(cluster.client) == WRITE_BATCH + 10


async def test_stop_writes_every_queued_record_durably(tmp_path: Path) -> None:
    """A clean shutdown loses no record, even ones still held back for a busy GC."""
    clock = ManualClock()
    queued = WRITE_BATCH * 2 + 7
    async with Cluster(controllers=[], clock=clock, storage="sqlite",
                       data_dir=tmp_path) as cluster:
        sink = DeletionRecordSink(cluster.client, clock=clock, busy=lambda: True,
                                  max_defer=3600)
        sink.start()
        for i in range(queued):
            sink.record(_record(clock, f"uid-stop-{i}", name=f"p{i}"))
        await cluster.asettle()
        assert await _count(cluster.client) == 0
        await sink.stop()
        assert sink.written == queued and sink.is_idle()
    async with Cluster(controllers=[], clock=clock, storage="sqlite",
                       data_dir=tmp_path) as restarted:
        assert await _count(restarted.client) == queued


async def test_stop_without_start_still_writes_the_queue() -> None:
    clock = ManualClock()
    async with Cluster(controllers=[], clock=clock) as cluster:
        sink = DeletionRecordSink(cluster.client, clock=clock)
        sink.record(_record(clock, "uid-unstarted"))
        await sink.stop()
        assert await _count(cluster.client) == 1


CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")


async def test_every_gc_decision_is_recorded_across_a_clean_shutdown(tmp_path: Path) -> None:
    """The garbage collector's own sink, held back for the whole cascade: stopping the
    cluster right after the last dependent is gone still writes every record."""
    dependents = 300
    async with Cluster(controllers=["garbagecollector"], storage="sqlite",
                       data_dir=tmp_path) as cluster:
        manager = cluster.cluster.controller_manager
        assert manager is not None
        [gc] = [c for c in manager.controllers if isinstance(c, GarbageCollectorController)]
        gc.sink.busy, gc.sink.max_defer = (lambda: True), 3600.0
        c = cluster.client
        await c.create(NAMESPACES, {"metadata": {"name": "ns"}})
        owner = await c.create(CONFIGMAPS, {"metadata": {"name": "owner"}}, namespace="ns")
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
               "uid": owner["metadata"]["uid"]}
        for i in range(dependents):
            await c.create(CONFIGMAPS, {"metadata": {"name": f"dep-{i}",
                                                     "ownerReferences": [ref]}}, namespace="ns")
        await cluster.asettle()
        await c.delete(CONFIGMAPS, "owner", namespace="ns",
                       options=DeleteOptions(propagation_policy="Background"))

        async def left() -> int:
            return len((await c.list(CONFIGMAPS, namespace="ns"))["items"])

        deadline = time.monotonic() + 30
        while await left():
            assert time.monotonic() < deadline, "dependents not deleted in time"
            await asyncio.sleep(0.01)
        assert gc.sink.pending() > 0  # held back: only stop can write them now
    async with Cluster(controllers=[], storage="sqlite", data_dir=tmp_path) as restarted:
        listed = await restarted.client.list(DELETION_RECORDS, options=ListOptions(
            label_selector="kubegc.io/action=delete"))
        names = sorted(r["object"]["name"] for r in listed["items"])
        assert names == sorted(f"dep-{i}" for i in range(dependents))
