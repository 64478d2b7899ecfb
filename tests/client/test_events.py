"""EventRecorder: Event shape, correlation (dedup with counts), failures."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from kubegc.api import errors
from kubegc.api.clock import ManualClock
from kubegc.api.meta import ObjectReference
from kubegc.api.types import Obj
from kubegc.client.events import EVENTS, EventRecorder
from kubegc.client.fake import FakeClient

from .conftest import Eventually, Spin

POD: Obj = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-1", "namespace": "ns1", "uid": "u-1", "resourceVersion": "7"}}
NODE: Obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "uid": "u-n"}}


@pytest.fixture
async def env(monkeypatch: pytest.MonkeyPatch,
              ) -> AsyncIterator[tuple[FakeClient, ManualClock, EventRecorder]]:
    # Names are unique across the recorders of a process: forget those of earlier tests
    # (real-clock recorders would push the next name past this clock's time).
    monkeypatch.setattr(EventRecorder, "_last_nanos", 0)
    clock = ManualClock()
    client = FakeClient(clock=clock)
    recorder = EventRecorder(client, component="garbage-collector-controller", clock=clock,
                             host="node-a")
    yield client, clock, recorder
    await recorder.stop()


def events(client: FakeClient) -> list[Obj]:
    return client.objects(EVENTS)


async def test_event_is_written_like_client_go_does(env: Any) -> None:
    client, _, recorder = env
    assert recorder.is_idle()
    recorder.event(POD, "Warning", "OwnerRefInvalidNamespace", "ownerRef ... does not exist")
    assert not recorder.is_idle()
    await recorder.flush()
    assert recorder.is_idle()
    (event,) = events(client)
    assert event["metadata"]["name"] == "web-1.18867251edfa0000"  # 2026-01-01 in ns, hex
    assert event["metadata"]["namespace"] == "ns1"
    assert event["involvedObject"] == {"kind": "Pod", "namespace": "ns1", "name": "web-1",
                                       "uid": "u-1", "apiVersion": "v1", "resourceVersion": "7"}
    assert event["source"] == {"component": "garbage-collector-controller", "host": "node-a"}
    assert (event["type"], event["reason"], event["count"]) == (
        "Warning", "OwnerRefInvalidNamespace", 1)
    assert event["message"] == "ownerRef ... does not exist"
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2026-01-01T00:00:00Z"
    assert (event["reportingComponent"], event["reportingInstance"]) == (
        "garbage-collector-controller", "node-a")


async def test_cluster_scoped_objects_get_events_in_default(env: Any) -> None:
    client, _, recorder = env
    recorder.event(ObjectReference("v1", "Node", "n1", "u-n"), "Normal", "Seen", "hello")
    await recorder.flush()
    (event,) = events(client)
    assert event["metadata"]["namespace"] == "default"
    assert "namespace" not in event["involvedObject"]


async def test_duplicates_within_ten_minutes_bump_count_and_last_timestamp(env: Any) -> None:
    client, clock, recorder = env
    recorder.event(POD, "Normal", "Killing", "stopping container")
    await recorder.flush()
    clock.advance(60)
    recorder.event(POD, "Normal", "Killing", "stopping container")
    clock.advance(60)
    recorder.event(POD, "Normal", "Killing", "stopping container")
    await recorder.flush()
    (event,) = events(client)
    assert event["count"] == 3
    assert event["firstTimestamp"] == "2026-01-01T00:00:00Z"
    assert event["lastTimestamp"] == "2026-01-01T00:02:00Z"
    assert [a.split(" ")[0] for a in client.actions] == ["create", "patch", "patch"]
    assert client.action_log[1].body == {"count": 2, "lastTimestamp": "2026-01-01T00:01:00Z",
                                         "message": "stopping container"}


@pytest.mark.parametrize(
    ("second", "advance"),
    [
        pytest.param(("Normal", "Killing", "other message"), 0, id="different-message"),
        pytest.param(("Warning", "Killing", "stopping container"), 0, id="different-type"),
        pytest.param(("Normal", "Other", "stopping container"), 0, id="different-reason"),
        pytest.param(("Normal", "Killing", "stopping container"), 601, id="after-ten-minutes"),
    ],
)
async def test_events_that_are_not_duplicates_are_created(
    env: Any, second: tuple[str, str, str], advance: float,
) -> None:
    client, clock, recorder = env
    recorder.event(POD, "Normal", "Killing", "stopping container")
    clock.advance(advance)
    recorder.event(POD, *second)
    await recorder.flush()
    assert [e["count"] for e in events(client)] == [1, 1]
    assert len({e["metadata"]["name"] for e in events(client)}) == 2, "names are unique"


async def test_deleted_event_is_recreated_with_its_count(env: Any) -> None:
    client, _, recorder = env
    recorder.event(POD, "Normal", "Killing", "x")
    await recorder.flush()
    (first,) = events(client)
    await client.delete(EVENTS, first["metadata"]["name"], namespace="ns1")
    recorder.event(POD, "Normal", "Killing", "x")
    await recorder.flush()
    (again,) = events(client)
    assert again["metadata"]["name"] == first["metadata"]["name"]
    assert again["count"] == 2


async def test_api_errors_drop_the_event_and_transport_errors_retry(env: Any,
                                                                    eventually: Eventually,
                                                                    spin: Spin) -> None:
    client, clock, recorder = env
    client.fail_next("create", errors.forbidden(errors.GroupResource("", "events"), "", "no"))
    recorder.event(POD, "Normal", "Dropped", "x")
    await recorder.flush()
    assert events(client) == []
    client.fail_next("create", ConnectionResetError("network"), times=2)
    recorder.event(POD, "Normal", "Retried", "y")
    await spin()
    assert events(client) == []
    clock.advance(10)
    await spin()
    assert events(client) == []
    clock.advance(10)
    await eventually(lambda: len(events(client)) == 1)
    assert events(client)[0]["reason"] == "Retried"


async def test_unknown_type_is_dropped(env: Any) -> None:
    client, _, recorder = env
    recorder.event(POD, "Critical", "Nope", "x")
    await recorder.flush()
    assert events(client) == []


async def test_events_after_stop_are_dropped(env: Any) -> None:
    client, _, recorder = env
    await recorder.stop()
    recorder.event(POD, "Normal", "Late", "x")
    await recorder.flush()
    assert events(client) == []


def test_event_outside_a_loop_is_queued_for_start() -> None:
    import asyncio

    clock = ManualClock()
    client = FakeClient(clock=clock)
    recorder = EventRecorder(client, component="c", clock=clock)
    recorder.event(NODE, "Normal", "Queued", "before the loop runs")

    async def run() -> list[Obj]:
        await recorder.flush()
        await recorder.stop()
        return events(client)

    assert [e["reason"] for e in asyncio.run(run())] == ["Queued"]
