"""Event expiry: which Events are expired (pure) and the periodic sweep on the injected
clock against FakeClient."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta

import pytest

from kubegc.api.clock import ManualClock, format_time
from kubegc.client.events import EVENTS
from kubegc.client.fake import FakeClient
from kubegc.component.config import EventTTLConfiguration
from kubegc.controllers.eventttl.eventttl_controller import (
    EventTTLController,
    is_expired,
    sweep_period_for,
)

from ..workload_harness import context_for, eventually

NOW = ManualClock().now()


def ago(seconds: float) -> str:
    return format_time(NOW - timedelta(seconds=seconds))


def event(name: str, **fields) -> dict:
    meta = {"name": name, "namespace": "ns"}
    if "creationTimestamp" in fields:
        meta["creationTimestamp"] = fields.pop("creationTimestamp")
    return {"apiVersion": "v1", "kind": "Event", "metadata": meta,
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns"},
            "reason": "Test", "message": name, "type": "Normal", **fields}


@pytest.mark.parametrize(("fields", "expired"), [
    pytest.param({"lastTimestamp": ago(3601)}, True, id="old-last-timestamp"),
    pytest.param({"lastTimestamp": ago(3600)}, True, id="exactly-ttl"),
    pytest.param({"lastTimestamp": ago(3599)}, False, id="young"),
    pytest.param({"firstTimestamp": ago(7200), "lastTimestamp": ago(60)}, False,
                 id="recently-repeated"),
    pytest.param({"eventTime": format_time(NOW - timedelta(hours=2)).replace("Z", ".000000Z")},
                 True, id="event-time"),
    pytest.param({"series": {"lastObservedTime": ago(10)}, "eventTime": ago(7200)}, False,
                 id="series-keeps-it"),
    pytest.param({"creationTimestamp": ago(4000)}, True, id="creation-only"),
    pytest.param({}, False, id="no-timestamp-kept"),
    # stored below the API's validation: what cannot be read is no evidence
    pytest.param({"lastTimestamp": "yesterday", "series": "x", "creationTimestamp": ago(4000)},
                 True, id="malformed-fields-expire-by-creation"),
    pytest.param({"lastTimestamp": 5, "eventTime": ["x"], "creationTimestamp": ago(60)},
                 False, id="malformed-fields-young-by-creation"),
])
def test_is_expired(fields, expired) -> None:
    assert is_expired(event("e", **fields), now=NOW, ttl=3600) is expired


def test_sweep_period() -> None:
    assert [sweep_period_for(t) for t in (3600, 100, 2)] == [60.0, 10.0, 1.0]


@contextlib.asynccontextmanager
async def controller(client: FakeClient, clock: ManualClock, ttl: float):
    ctl = EventTTLController(context_for(EventTTLController, client, clock,
                                         EventTTLConfiguration(event_ttl=ttl)))
    await ctl.start()
    try:
        yield ctl
    finally:
        await ctl.stop()


def names(client: FakeClient) -> list[str]:
    return sorted(e["metadata"]["name"] for e in client.objects(EVENTS))


async def test_sweep_deletes_only_expired_events() -> None:
    clock = ManualClock()
    client = FakeClient(clock=clock)  # creationTimestamp: the clock's time
    for i in range(7):
        client.add_object(EVENTS, event(f"old{i}", lastTimestamp=format_time(clock.now())),
                          namespace="ns")
    clock.advance(5000)
    client.add_object(EVENTS, event("new", lastTimestamp=format_time(clock.now())),
                      namespace="ns")
    async with controller(client, clock, 3600) as ctl:
        assert await ctl.sweep() == 7
    assert names(client) == ["new"]
    deletes = [a for a in client.action_log if a.verb == "delete"]
    assert all(a.body.preconditions_resource_version for a in deletes)


async def test_expires_on_the_clock() -> None:
    clock = ManualClock()
    client = FakeClient(clock=clock)
    client.add_object(EVENTS, event("e", lastTimestamp=format_time(clock.now())),
                      namespace="ns")
    async with controller(client, clock, 100) as ctl:
        clock.advance(50)
        await asyncio.sleep(0.01)
        assert names(client) == ["e"]
        for _ in range(6):
            clock.advance(10)
            await asyncio.sleep(0.01)
        await eventually(lambda: names(client) == [] and ctl.is_idle(), what="expired")
