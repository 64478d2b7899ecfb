"""SharedInformer and its factory, driven by a FakeClient and a ManualClock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kubegc.api.clock import ManualClock
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import (
    DeletedFinalStateUnknown,
    FuncHandler,
    SharedInformer,
    SharedInformerFactory,
)
from kubegc.client.cache import shared_informer as shared_informer_module
from kubegc.client.fake import FakeClient

from ..conftest import Eventually, Spin

PODS = GroupVersionResource("", "v1", "pods")
SECRETS = GroupVersionResource("", "v1", "secrets")


class Recorder(FuncHandler):
    """Records notifications as readable tuples."""

    def __init__(self) -> None:
        self.seen: list[tuple[Any, ...]] = []
        super().__init__(add=self._add, update=self._update, delete=self._delete)

    def _add(self, obj: Obj, initial: bool) -> None:
        self.seen.append(("add", obj["metadata"]["name"], initial))

    def _update(self, old: Obj, new: Obj) -> None:
        self.seen.append(("update", old["metadata"]["resourceVersion"],
                          new["metadata"]["resourceVersion"]))

    def _delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            self.seen.append(("delete-unknown", obj.key))
        else:
            self.seen.append(("delete", obj["metadata"]["name"]))


def pod(name: str, **meta: Any) -> Obj:
    return {"metadata": {"name": name, "namespace": "ns1", **meta}, "spec": {"big": "x" * 10}}


@pytest.fixture
async def env() -> AsyncIterator[tuple[FakeClient, ManualClock]]:
    clock = ManualClock()
    yield FakeClient(clock=clock), clock


async def started(informer: SharedInformer, client: FakeClient, eventually: Eventually) -> None:
    informer.start()
    await eventually(informer.has_synced, what="synced")
    await eventually(lambda: client.watcher_count() >= 1, what="watching")


async def test_initial_list_is_delivered_as_adds_in_initial_list(env: Any,
                                                                 eventually: Eventually) -> None:
    client, clock = env
    client.add_object(PODS, pod("a"))
    client.add_object(PODS, pod("b"))
    informer = SharedInformer(client, PODS, clock=clock)
    handler = Recorder()
    informer.add_event_handler(handler)
    assert not informer.has_synced()
    await started(informer, client, eventually)
    assert handler.seen == [("add", "a", True), ("add", "b", True)]
    assert sorted(informer.indexer.list_keys()) == ["ns1/a", "ns1/b"]
    assert informer.last_sync_resource_version() == "2"
    assert informer.is_idle()
    await informer.stop()


async def test_watch_events_become_add_update_delete(env: Any, eventually: Eventually) -> None:
    client, clock = env
    informer = SharedInformer(client, PODS, clock=clock)
    handler = Recorder()
    informer.add_event_handler(handler)
    await started(informer, client, eventually)
    await client.create(PODS, pod("a"))
    await client.patch(PODS, "a", {"spec": {"big": "y"}}, namespace="ns1")
    await client.delete(PODS, "a", namespace="ns1")
    await eventually(lambda: len(handler.seen) == 3)
    assert handler.seen == [("add", "a", False), ("update", "1", "2"), ("delete", "a")]
    assert informer.indexer.list() == []
    await informer.stop()


async def test_relist_after_410_reconciles_the_cache(env: Any, eventually: Eventually,
                                                     spin: Spin) -> None:
    client, clock = env
    client.add_object(PODS, pod("stays"))
    client.add_object(PODS, pod("vanishes"))
    informer = SharedInformer(client, PODS, clock=clock)
    handler = Recorder()
    informer.add_event_handler(handler)
    await started(informer, client, eventually)
    handler.seen.clear()
    client.close_watches()  # an empty, very short watch: the reflector backs off 0.8 s
    await spin()
    await client.delete(PODS, "vanishes", namespace="ns1")  # unseen: nobody is watching
    client.add_object(PODS, pod("new"))
    client.compact()  # the re-watch from version 2 will get 410 Expired
    clock.advance(0.8)
    await eventually(lambda: len(handler.seen) == 3)
    assert handler.seen == [  # in list order, then the vanished ones
        ("add", "new", False),
        ("update", "1", "1"),  # unchanged survivors are still delivered (resync semantics)
        ("delete-unknown", "ns1/vanishes"),
    ]
    assert sorted(informer.indexer.list_keys()) == ["ns1/new", "ns1/stays"]
    assert [a.verb for a in client.action_log if a.verb in ("list", "watch")] == [
        "list", "watch", "watch", "list", "watch"]
    await informer.stop()


async def test_restart_relists_and_tombstone_carries_last_known_state(
        env: Any, eventually: Eventually) -> None:
    client, clock = env
    client.add_object(PODS, pod("a", labels={"v": "1"}))
    informer = SharedInformer(client, PODS, clock=clock)
    tombstones: list[DeletedFinalStateUnknown] = []
    informer.add_event_handler(FuncHandler(
        delete=lambda o: tombstones.append(o) if isinstance(o, DeletedFinalStateUnknown) else None))
    await started(informer, client, eventually)
    await informer.stop()
    await client.delete(PODS, "a", namespace="ns1")
    client.compact()
    informer.start()
    await eventually(lambda: len(tombstones) == 1)
    assert tombstones[0].obj["metadata"]["labels"] == {"v": "1"}


async def test_handler_added_late_gets_the_cache_as_initial_adds(env: Any,
                                                                 eventually: Eventually) -> None:
    client, clock = env
    client.add_object(PODS, pod("a"))
    informer = SharedInformer(client, PODS, clock=clock)
    early = Recorder()
    informer.add_event_handler(early)
    await started(informer, client, eventually)
    late = Recorder()
    informer.add_event_handler(late)
    assert late.seen == [("add", "a", True)]
    await client.create(PODS, pod("b"))
    await eventually(lambda: len(late.seen) == 2 and len(early.seen) == 2)
    assert late.seen[1] == early.seen[1] == ("add", "b", False)
    informer.remove_event_handler(late)
    await client.create(PODS, pod("c"))
    await eventually(lambda: len(early.seen) == 3)
    assert len(late.seen) == 2
    await informer.stop()


async def test_metadata_only_keeps_type_and_metadata_without_managed_fields(
        env: Any, eventually: Eventually) -> None:
    client, clock = env
    client.add_object(PODS, pod("a", managedFields=[{"manager": "kubectl"}], labels={"l": "v"}))
    informer = SharedInformer(client, PODS, clock=clock, metadata_only=True)
    await started(informer, client, eventually)
    await client.create(PODS, pod("b"))
    await eventually(lambda: len(informer.indexer.list()) == 2)
    for cached in informer.indexer.list():
        assert set(cached) == {"apiVersion", "kind", "metadata"}
        assert (cached["apiVersion"], cached["kind"]) == ("v1", "Pod")
        assert "managedFields" not in cached["metadata"]
    assert informer.indexer.get_by_key("ns1/a")["metadata"]["labels"] == {"l": "v"}  # type: ignore[index]
    await informer.stop()


async def test_metadata_only_deletion_is_partial_and_shares_nothing(
        env: Any, eventually: Eventually) -> None:
    """A DELETED object reaches the handlers shaped as the cached ones (no managedFields),
    but its labels and ownerReferences are its own: it is kept nowhere, so looking for an
    equal earlier value (``SharedValues``) would be work for nothing (issue 27)."""
    client, clock = env
    refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u"}]
    for name in ("a", "b"):
        client.add_object(PODS, pod(name, managedFields=[{"manager": "kubectl"}],
                                    labels={"l": "v"}, ownerReferences=refs))
    informer = SharedInformer(client, PODS, clock=clock, metadata_only=True)
    deleted: list[Obj] = []
    informer.add_event_handler(FuncHandler(delete=lambda o: deleted.append(o)))  # type: ignore[arg-type]
    await started(informer, client, eventually)
    cached_a = informer.indexer.get_by_key("ns1/a")
    cached_b = informer.indexer.get_by_key("ns1/b")
    assert cached_a is not None and cached_b is not None
    assert cached_a["metadata"]["ownerReferences"] is cached_b["metadata"]["ownerReferences"]
    await client.delete(PODS, "a", namespace="ns1")
    await eventually(lambda: len(deleted) == 1)
    [gone] = deleted
    assert set(gone) == {"apiVersion", "kind", "metadata"}
    assert "managedFields" not in gone["metadata"] and gone["metadata"]["name"] == "a"
    assert gone["metadata"]["ownerReferences"] == refs
    assert gone["metadata"]["ownerReferences"] is not cached_b["metadata"]["ownerReferences"]
    await informer.stop()


async def test_failing_handler_does_not_stop_delivery(env: Any, eventually: Eventually) -> None:
    client, clock = env
    informer = SharedInformer(client, PODS, clock=clock)

    def explode(obj: Obj, initial: bool) -> None:
        raise RuntimeError("handler bug")

    informer.add_event_handler(FuncHandler(add=explode))
    good = Recorder()
    informer.add_event_handler(good)
    await started(informer, client, eventually)
    await client.create(PODS, pod("a"))
    await eventually(lambda: good.seen == [("add", "a", False)])
    await informer.stop()


async def test_resync_redelivers_cached_objects_as_updates(env: Any, eventually: Eventually,
                                                           spin: Spin) -> None:
    client, clock = env
    client.add_object(PODS, pod("a"))
    informer = SharedInformer(client, PODS, clock=clock, resync_period=30.0)
    handler = Recorder()
    informer.add_event_handler(handler)
    await started(informer, client, eventually)
    clock.advance(29)
    await spin()
    assert handler.seen == [("add", "a", True)]
    clock.advance(1)
    await eventually(lambda: handler.seen[1:] == [("update", "1", "1")])
    await informer.stop()


async def test_large_relist_is_chunked_and_not_idle_in_between(
        env: Any, eventually: Eventually, monkeypatch: pytest.MonkeyPatch) -> None:
    client, clock = env
    monkeypatch.setattr(shared_informer_module, "REPLACE_CHUNK", 2)
    for i in range(5):
        client.add_object(PODS, pod(f"p{i}"))
    informer = SharedInformer(client, PODS, clock=clock)
    idle_during: list[bool] = []

    async def observe() -> None:
        while not informer.has_synced():
            if informer.indexer.list():
                idle_during.append(informer.is_idle())
            await asyncio.sleep(0)

    watcher = asyncio.create_task(observe())
    await started(informer, client, eventually)
    await watcher
    assert idle_during and not any(idle_during)
    assert informer.is_idle()
    await informer.stop()


async def test_factory_shares_one_informer_per_resource_and_flavour(env: Any) -> None:
    client, clock = env
    factory = SharedInformerFactory(client, clock=clock)
    meta = factory.for_resource(PODS, metadata_only=True)
    assert factory.for_resource(PODS, metadata_only=True) is meta
    full = factory.for_resource(PODS)
    assert full is not meta and not full.metadata_only
    assert factory.informers() == [meta, full]


async def test_factory_starts_waits_and_stops(env: Any, eventually: Eventually) -> None:
    client, clock = env
    client.add_object(PODS, pod("a"))
    factory = SharedInformerFactory(client, clock=clock)
    pods = factory.for_resource(PODS, metadata_only=True)
    secrets = factory.for_resource(SECRETS)
    factory.start()
    assert await factory.wait_for_cache_sync(timeout=10)
    assert pods.has_synced() and secrets.has_synced()
    assert pods.is_started()
    await factory.stop(PODS)
    assert factory.informers() == [secrets]
    assert not pods.is_started()
    assert factory.for_resource(PODS, metadata_only=True) is not pods, "stopped ones are new"
    await factory.stop()
    assert factory.informers() == []


async def test_wait_for_cache_sync_times_out_on_the_clock(env: Any, eventually: Eventually,
                                                         spin: Spin) -> None:
    client, clock = env
    client.fail_next("list", RuntimeError("server down"), times=1000)
    factory = SharedInformerFactory(client, clock=clock)
    factory.for_resource(PODS)
    factory.start()
    waiting = asyncio.create_task(factory.wait_for_cache_sync(timeout=5))
    await spin()
    clock.advance(4.9)
    await spin()
    assert not waiting.done()
    clock.advance(0.1)
    await eventually(waiting.done)
    assert waiting.result() is False
    await factory.stop()
