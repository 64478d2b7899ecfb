"""Reflector: paged list, watch from the list's version, re-watch, relist on 410, backoff."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kubegc.api import errors
from kubegc.api.clock import ManualClock
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import Reflector
from kubegc.client.fake import Action, FakeClient
from kubegc.client.interface import ListOptions, WatchOptions

from ..conftest import Eventually, Spin

PODS = GroupVersionResource("", "v1", "pods")


class RecordingStore:
    """A ReflectorStore that records calls as (verb, name-or-names, [rv])."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.objects: list[Obj] = []

    def add(self, obj: Obj) -> None:
        self.calls.append(("add", obj["metadata"]["name"]))

    def update(self, obj: Obj) -> None:
        self.calls.append(("update", obj["metadata"]["name"]))

    def delete(self, obj: Obj) -> None:
        self.calls.append(("delete", obj["metadata"]["name"]))

    async def replace(self, objs: list[Obj], resource_version: str) -> None:
        self.objects = objs
        self.calls.append(("replace", [o["metadata"]["name"] for o in objs], resource_version))

    def replaces(self) -> list[tuple[Any, ...]]:
        return [c for c in self.calls if c[0] == "replace"]


def pod(name: str, namespace: str = "ns1") -> Obj:
    return {"metadata": {"name": name, "namespace": namespace}}


def verbs(client: FakeClient) -> list[str]:
    return [a.verb for a in client.action_log]


def watch_versions(client: FakeClient) -> list[str]:
    return [a.body.resource_version for a in client.action_log if a.verb == "watch"]


@pytest.fixture
async def env() -> AsyncIterator[tuple[FakeClient, ManualClock, RecordingStore, Reflector]]:
    clock = ManualClock()
    client = FakeClient(clock=clock)
    store = RecordingStore()
    reflector = Reflector(client, PODS, store, clock=clock, page_size=2)
    yield client, clock, store, reflector


async def start(reflector: Reflector, client: FakeClient, eventually: Eventually,
                ) -> asyncio.Task[None]:
    task = asyncio.create_task(reflector.run())
    await eventually(lambda: client.watcher_count() == 1, what="watch open")
    return task


async def stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_lists_in_pages_then_watches_from_the_list_version(env: Any,
                                                                 eventually: Eventually) -> None:
    client, _, store, reflector = env
    for name in "abcde":
        client.add_object(PODS, pod(name))
    task = await start(reflector, client, eventually)
    assert store.calls == [("replace", ["a", "b", "c", "d", "e"], "5")]
    lists = [a.body for a in client.action_log if a.verb == "list"]
    assert [(o.limit, o.continue_) for o in lists] == [(2, ""), (2, "2"), (2, "4")]
    watch = next(a.body for a in client.action_log if a.verb == "watch")
    assert (watch.resource_version, watch.allow_bookmarks) == ("5", True)
    assert 300 <= watch.timeout_seconds < 600
    assert reflector.last_sync_resource_version() == "5"
    await stop(task)


async def test_watch_events_reach_the_store_and_move_the_version(env: Any,
                                                                 eventually: Eventually) -> None:
    client, _, store, reflector = env
    task = await start(reflector, client, eventually)
    await client.create(PODS, pod("a"))
    await client.patch(PODS, "a", {"spec": {"x": 1}}, namespace="ns1")
    await client.delete(PODS, "a", namespace="ns1")
    await eventually(lambda: len(store.calls) == 4)
    assert store.calls[1:] == [("add", "a"), ("update", "a"), ("delete", "a")]
    assert reflector.last_sync_resource_version() == "3"
    await stop(task)


async def test_bookmark_moves_the_version_without_touching_the_store(
        env: Any, eventually: Eventually) -> None:
    client, _, store, reflector = env
    task = await start(reflector, client, eventually)
    client.add_object(GroupVersionResource("", "v1", "configmaps"), pod("other"))
    client.send_bookmark(PODS)
    await eventually(lambda: reflector.last_sync_resource_version() == "1")
    assert store.calls == [("replace", [], "0")]
    await stop(task)


async def test_closed_watch_is_reopened_from_the_last_version(env: Any,
                                                              eventually: Eventually) -> None:
    client, _, store, reflector = env
    task = await start(reflector, client, eventually)
    await client.create(PODS, pod("a"))
    await eventually(lambda: len(store.calls) == 2)
    client.close_watches()
    await eventually(lambda: len(watch_versions(client)) == 2)
    assert watch_versions(client) == ["0", "1"]
    assert len(store.replaces()) == 1, "a normal end of a watch needs no relist"
    await stop(task)


async def test_very_short_empty_watch_backs_off(env: Any, eventually: Eventually,
                                                spin: Spin) -> None:
    client, clock, _, reflector = env
    task = await start(reflector, client, eventually)
    client.close_watches()
    await spin()
    assert len(watch_versions(client)) == 1
    clock.advance(0.8)
    await eventually(lambda: len(watch_versions(client)) == 2)
    await stop(task)


async def test_expired_watch_relists_at_once_then_with_backoff(env: Any, eventually: Eventually,
                                                               spin: Spin) -> None:
    client, clock, store, reflector = env
    client.add_object(PODS, pod("a"))
    task = await start(reflector, client, eventually)
    await client.delete(PODS, "a", namespace="ns1")
    await eventually(lambda: ("delete", "a") in store.calls)
    client.add_object(PODS, pod("b"))
    client.expire_watches()
    await eventually(lambda: len(store.replaces()) == 2)
    assert store.replaces()[1] == ("replace", ["b"], "3")
    await eventually(lambda: client.watcher_count() == 1)
    client.expire_watches()  # again, with no event in between: back off
    await spin()
    assert len(store.replaces()) == 2
    clock.advance(0.8)
    await eventually(lambda: len(store.replaces()) == 3)
    await stop(task)


async def test_watch_api_error_relists_after_backoff(env: Any, eventually: Eventually,
                                                     spin: Spin) -> None:
    client, clock, store, reflector = env
    task = await start(reflector, client, eventually)
    client.fail_watches(errors.internal_error("etcd is sad"))
    await spin()
    assert len(store.replaces()) == 1
    clock.advance(0.8)
    await eventually(lambda: len(store.replaces()) == 2)
    await stop(task)


async def test_failed_list_is_retried_with_exponential_backoff(env: Any, eventually: Eventually,
                                                               spin: Spin) -> None:
    client, clock, store, reflector = env
    client.fail_next("list", errors.internal_error("boom"), times=2)
    task = asyncio.create_task(reflector.run())
    await eventually(lambda: verbs(client) == ["list"])
    clock.advance(0.8)
    await eventually(lambda: verbs(client) == ["list", "list"])
    clock.advance(0.8)
    await spin()
    assert verbs(client) == ["list", "list"], "second delay is 1.6 s"
    clock.advance(0.8)
    await eventually(lambda: client.watcher_count() == 1)
    assert len(store.replaces()) == 1
    await stop(task)


async def test_list_items_get_kind_and_api_version_from_the_list(env: Any,
                                                                 eventually: Eventually) -> None:
    client, _, store, reflector = env

    def bare_list(action: Action) -> Obj:
        return {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "10"},
                "items": [pod("a"), {"kind": "Pod", "apiVersion": "v1", **pod("b")}]}

    client.prepend_reactor("list", bare_list)
    task = await start(reflector, client, eventually)
    assert [(o["apiVersion"], o["kind"]) for o in store.objects] == [("v1", "Pod")] * 2
    assert watch_versions(client) == ["10"]
    await stop(task)


async def test_expired_continue_token_falls_back_to_one_full_list(
        env: Any, eventually: Eventually) -> None:
    client, _, store, reflector = env
    for name in "abc":
        client.add_object(PODS, pod(name))

    def expire_continue(action: Action) -> Obj | None:
        if action.body.continue_:
            raise errors.resource_expired("The provided continue parameter is too old")
        return None

    client.prepend_reactor("list", expire_continue)
    task = await start(reflector, client, eventually)
    lists: list[ListOptions] = [a.body for a in client.action_log if a.verb == "list"]
    assert [(o.limit, o.continue_) for o in lists] == [(2, ""), (2, "2"), (0, "")]
    assert store.calls == [("replace", ["a", "b", "c"], "3")]
    await stop(task)


async def test_transform_applies_to_listed_and_watched_objects(eventually: Eventually) -> None:
    clock = ManualClock()
    client = FakeClient(clock=clock)
    client.add_object(PODS, pod("a"))
    store = RecordingStore()

    def rename(obj: Obj) -> Obj:
        return {"metadata": {**obj["metadata"], "name": "t-" + obj["metadata"]["name"]}}

    reflector = Reflector(client, PODS, store, clock=clock, transform=rename,
                          label_selector="", namespace="ns1")
    task = await start(reflector, client, eventually)
    await client.create(PODS, pod("b"))
    await eventually(lambda: len(store.calls) == 2)
    assert store.calls == [("replace", ["t-a"], "1"), ("add", "t-b")]
    watch: WatchOptions = next(a.body for a in client.action_log if a.verb == "watch")
    assert watch.resource_version == "1"
    await stop(task)
