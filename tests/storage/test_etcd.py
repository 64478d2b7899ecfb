"""EtcdKV's own machinery, without an etcd: the re-watch loop and event conversion run
against a scripted fake of the gRPC watch stream. (The shared contract runs against a
real etcd in test_kv_contract.py when ``KUBEGC_TEST_ETCD`` is set.)"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc  # type: ignore[import-untyped]
import pytest
from aetcd import rpc

from kubegc.api.clock import ScaledClock
from kubegc.storage import CompactedError, Event, EventType, StorageError
from kubegc.storage.etcd import EtcdKV

PREFIX = "/test"


def events_response(*events: Any, revision: int = 0) -> Any:
    response = rpc.WatchResponse(events=list(events))
    response.header.revision = revision or max(e.kv.mod_revision for e in events)
    return response


def put(key: str, value: bytes, create: int, mod: int, prev: Any = None) -> Any:
    kv = rpc.KeyValue(key=(PREFIX + key).encode(), value=value, create_revision=create,
                      mod_revision=mod)
    return rpc.Event(type=0, kv=kv, prev_kv=prev)


def delete(key: str, mod: int, prev_value: bytes, prev_create: int, prev_mod: int) -> Any:
    prev = rpc.KeyValue(key=(PREFIX + key).encode(), value=prev_value,
                        create_revision=prev_create, mod_revision=prev_mod)
    return rpc.Event(type=1, kv=rpc.KeyValue(key=(PREFIX + key).encode(), mod_revision=mod),
                     prev_kv=prev)


def created(revision: int) -> Any:
    response = rpc.WatchResponse(created=True)
    response.header.revision = revision
    return response


def rpc_error(code: grpc.StatusCode) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(),
                                details=f"fake {code.name}")


class FakeCall:
    """One scripted watch stream: ``read`` returns (or raises) the script's items in order,
    then blocks until cancelled, like a grpc.aio stream with nothing to say."""

    def __init__(self, script: list[Any]) -> None:
        self.script = script
        self.requests: list[Any] = []
        self.cancelled = False
        self._blocked: asyncio.Future[Any] | None = None

    async def write(self, request: Any) -> None:
        self.requests.append(request)

    async def read(self) -> Any:
        if self.script:
            item = self.script.pop(0)
            if isinstance(item, BaseException):
                raise item
            return item
        self._blocked = asyncio.get_running_loop().create_future()
        return await self._blocked

    def cancel(self) -> None:
        self.cancelled = True
        if self._blocked is not None:
            self._blocked.cancel()


class FakeWatchStub:
    def __init__(self, *calls: FakeCall) -> None:
        self.calls = list(calls)
        self.opened: list[FakeCall] = []

    def Watch(self) -> FakeCall:
        call = self.calls.pop(0)
        self.opened.append(call)
        return call


def fake_etcd(*calls: FakeCall) -> tuple[EtcdKV, FakeWatchStub]:
    kv = EtcdKV("http://127.0.0.1:1", prefix=PREFIX, clock=ScaledClock(1000.0))
    stub = FakeWatchStub(*calls)
    kv._kv = object()  # "opened": no connection needed for watch
    kv._watch_stub = stub
    return kv, stub


async def collect(kv: EtcdKV, start: int, last: int) -> list[Event]:
    events: list[Event] = []
    async with asyncio.timeout(10):
        async for batch in kv.watch("/w/", start_revision=start):
            events.extend(batch)
            if events[-1].revision >= last:
                break
    return events


def start_revisions(stub: FakeWatchStub) -> list[int]:
    return [call.requests[0].create_request.start_revision for call in stub.opened]


@pytest.mark.parametrize("breakage", [
    pytest.param(rpc_error(grpc.StatusCode.UNAVAILABLE), id="unavailable"),
    pytest.param(rpc_error(grpc.StatusCode.DEADLINE_EXCEEDED), id="deadline-exceeded"),
    pytest.param(grpc.aio.EOF, id="server-closed-stream"),
])
async def test_broken_stream_rewatches_from_the_next_revision(breakage: Any) -> None:
    kv, stub = fake_etcd(
        FakeCall([created(4), events_response(put("/w/a", b"1", 5, 5), put("/w/b", b"2", 6, 6)),
                  breakage]),
        FakeCall([created(6), events_response(put("/w/c", b"3", 7, 7))]),
    )
    events = await collect(kv, 5, 7)
    assert [e.revision for e in events] == [5, 6, 7]
    assert start_revisions(stub) == [5, 7]
    assert stub.opened[0].cancelled
    await kv.close()


async def test_events_are_converted_with_prefix_stripped_and_delete_values() -> None:
    prev = rpc.KeyValue(key=b"/test/w/a", value=b"1", create_revision=5, mod_revision=5)
    kv, _ = fake_etcd(FakeCall([created(5), events_response(
        put("/w/a", b"2", 5, 6, prev=prev), delete("/w/a", 7, b"2", 5, 6))]))
    update, deletion = await collect(kv, 6, 7)
    assert (update.type, update.kv.key, update.kv.value, update.kv.create_revision,
            update.prev_kv and update.prev_kv.value) == (EventType.PUT, "/w/a", b"2", 5, b"1")
    assert (deletion.type, deletion.kv.value, deletion.kv.create_revision,
            deletion.kv.mod_revision) == (EventType.DELETE, b"2", 5, 7)
    await kv.close()


async def test_compacted_start_raises_compacted_error() -> None:
    compacted = rpc.WatchResponse(canceled=True, compact_revision=9)
    kv, _ = fake_etcd(FakeCall([created(20), compacted]))
    with pytest.raises(CompactedError) as info:
        await collect(kv, 3, 20)
    assert (info.value.revision, info.value.compact_revision) == (3, 9)
    assert kv.compact_revision == 9
    await kv.close()


async def test_non_retryable_stream_error_is_a_storage_error() -> None:
    kv, _ = fake_etcd(FakeCall([rpc_error(grpc.StatusCode.PERMISSION_DENIED)]))
    with pytest.raises(StorageError, match="PERMISSION_DENIED"):
        await collect(kv, 1, 1)
    await kv.close()


async def test_close_ends_a_waiting_watch() -> None:
    kv, stub = fake_etcd(FakeCall([created(1)]))
    watch = kv.watch("/w/", start_revision=2)
    waiting = asyncio.ensure_future(anext(aiter(watch)))
    async with asyncio.timeout(10):
        while not stub.opened or not stub.opened[0].requests:
            await asyncio.sleep(0)
        await kv.close()
        with pytest.raises(StopAsyncIteration):
            await waiting
    assert stub.opened[0].cancelled
