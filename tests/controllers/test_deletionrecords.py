"""Durable GC decision records: written as DeletionRecord objects through the API, found by
the object's uid, kept for the TTL and pruned after it."""

from __future__ import annotations

from datetime import timedelta

from kubegc.api.clock import ManualClock
from kubegc.api.meta import ObjectReference
from kubegc.client.interface import ListOptions
from kubegc.controllers.deletionrecords import (
    DELETION_RECORDS,
    LABEL_UID,
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
from kubegc.testing import Cluster


def _record(clock: ManualClock, uid: str) -> DeletionRecord:
    return DeletionRecord(
        time=clock.now(), action=RecordAction.DELETE,
        object=ObjectReference("v1", "Pod", "p1", uid, "default"),
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
