"""Deleting a CRD (cf. apiextensions' CRDFinalizer): while its instances are deleted the CRD
carries ``Terminating`` = True / InstanceDeletionInProgress; the write that drops the
cleanup finalizer sets InstanceDeletionCompleted and removes the CRD.

``crd_finalizer.finalize`` runs here on a bare Store and WatchCache (the Registry would start
its own cleanup of the same CRD)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from kubegc.api.clock import ManualClock, format_time
from kubegc.api.errors import StatusError
from kubegc.api.meta import DeleteOptions
from kubegc.registry import Registry
from kubegc.registry.generic.deletion import delete
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext
from kubegc.registry.generic.store import Store
from kubegc.registry.generic.target import Target
from kubegc.registry.generic.watch_cache import WatchCache
from kubegc.registry.groups.apiextensions import crd as crds
from kubegc.registry.groups.apiextensions import custom_resource
from kubegc.registry.groups.apiextensions import finalizer as crd_finalizer
from kubegc.storage.memory import MemoryKV

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                 "openAPIV3Schema": {"type": "object",
                                     "x-kubernetes-preserve-unknown-fields": True}}}]},
}
NAME = "widgets.example.com"


@dataclass
class Parts:
    store: Store
    cache: WatchCache
    crd_t: Target
    widgets: Target
    custom: Resource
    clock: ManualClock

    async def terminating(self) -> dict[str, Any] | None:
        crd = await self.store.get(self.crd_t, NAME)
        found = [c for c in crd["status"]["conditions"] if c["type"] == crd_finalizer.TERMINATING]
        return found[0] if found else None


@pytest.fixture
async def parts() -> AsyncIterator[Parts]:
    kv, clock = MemoryKV(), ManualClock()
    registry = Registry(kv, clock=clock)  # not started: its targets only, no CRD cleanup
    store = Store(kv, clock=clock)
    cache = WatchCache(kv)
    await cache.start()
    await store.create(registry.target("", "v1", "namespaces"), {"metadata": {"name": "default"}})
    crd_t = registry.target("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    crd = await store.create(crd_t, dict(CRD))
    info = crds.resource_info_for(crd)
    assert info is not None
    custom = custom_resource(StorageContext(store, cache), crd, info, current=lambda: None)
    widgets = Target(custom.info, custom.strategy, "v1", "default")
    yield Parts(store, cache, crd_t, widgets, custom, clock)
    await cache.stop()


async def _until(check: Callable[[], Awaitable[Any]], timeout: float = 10) -> Any:
    async def poll() -> Any:
        while not (found := await check()):
            await asyncio.sleep(0.01)
        return found
    return await asyncio.wait_for(poll(), timeout)


async def test_terminating_while_instances_are_deleted(parts: Parts) -> None:
    held = {"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "held", "finalizers": ["example.com/hold"]}}
    await parts.store.create(parts.widgets, held)
    await parts.store.create(parts.widgets, {"metadata": {"name": "free"}})
    await delete(parts.store, parts.crd_t, NAME, DeleteOptions())
    parts.clock.advance(5)
    task = asyncio.create_task(crd_finalizer.finalize(parts.store, parts.cache, parts.crd_t, NAME,
                                                     custom=parts.custom,
                                                     stopping=lambda: False))
    condition = await _until(parts.terminating)
    assert condition == {"type": "Terminating", "status": "True",
                         "reason": "InstanceDeletionInProgress",
                         "message": "CustomResource deletion is in progress",
                         "lastTransitionTime": format_time(parts.clock.now())}
    deleting = await parts.store.get(parts.widgets, "held")
    assert deleting["metadata"].get("deletionTimestamp")
    assert not task.done()  # waits for the held instance
    deleting["metadata"]["finalizers"] = []
    await parts.store.update(parts.widgets, "held", deleting)
    result, removed = await asyncio.wait_for(task, 10)
    assert removed
    assert [c for c in result["status"]["conditions"] if c["type"] == "Terminating"] == [{
        "type": "Terminating", "status": "False", "reason": "InstanceDeletionCompleted",
        "message": "removed all instances", "lastTransitionTime": format_time(
            parts.clock.now())}]
    assert crds.CLEANUP_FINALIZER not in result["metadata"].get("finalizers", [])
    with pytest.raises(StatusError) as e:
        await parts.store.get(parts.crd_t, NAME)
    assert e.value.code == 404


async def test_another_finalizer_keeps_the_finalized_crd(parts: Parts) -> None:
    crd = await parts.store.get(parts.crd_t, NAME)
    crd["metadata"]["finalizers"].append("example.com/keep")
    await parts.store.update(parts.crd_t, NAME, crd)
    await delete(parts.store, parts.crd_t, NAME, DeleteOptions())
    result, removed = await crd_finalizer.finalize(parts.store, parts.cache, parts.crd_t, NAME,
                                                   custom=parts.custom, stopping=lambda: False)
    assert not removed
    assert result["metadata"]["finalizers"] == ["example.com/keep"]
    assert await parts.terminating() == {
        **crd_finalizer.COMPLETED, "lastTransitionTime": format_time(parts.clock.now())}


async def test_stopping_leaves_the_finalizer(parts: Parts) -> None:
    await parts.store.create(parts.widgets, {"metadata": {"name": "w"}})
    await delete(parts.store, parts.crd_t, NAME, DeleteOptions())
    result, removed = await crd_finalizer.finalize(parts.store, parts.cache, parts.crd_t, NAME,
                                                   custom=parts.custom, stopping=lambda: True)
    assert not removed
    assert crds.CLEANUP_FINALIZER in result["metadata"]["finalizers"]
    assert (await parts.terminating() or {}).get("reason") == "InstanceDeletionInProgress"


def test_set_condition_keeps_the_transition_time_unless_the_status_flips() -> None:
    crd: dict[str, Any] = {"status": {"conditions": [
        {"type": "Established", "status": "True", "lastTransitionTime": "t0"}]}}
    crds.set_condition(crd, crd_finalizer.IN_PROGRESS, "t1")
    failed = crd_finalizer.terminating("True", "InstanceDeletionFailed", "boom")
    crds.set_condition(crd, failed, "t2")
    assert crd["status"]["conditions"][1] == {
        "type": "Terminating", "status": "True", "reason": "InstanceDeletionFailed",
        "message": "boom", "lastTransitionTime": "t1"}
    crds.set_condition(crd, crd_finalizer.COMPLETED, "t3")
    assert crd["status"]["conditions"][1]["lastTransitionTime"] == "t3"
    assert crd["status"]["conditions"][0] == {"type": "Established", "status": "True",
                                              "lastTransitionTime": "t0"}


async def test_registry_finalizes_a_deleted_crd_with_the_terminating_condition() -> None:
    registry = Registry(MemoryKV(), clock=ManualClock())
    await registry.start()
    try:
        crd_t = registry.target("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        await registry.create(crd_t, dict(CRD))
        widgets = registry.target("example.com", "v1", "widgets", "default")
        await registry.create(widgets, {"metadata": {"name": "held",
                                                     "finalizers": ["example.com/hold"]}})
        await registry.delete(crd_t, NAME, {})

        async def in_progress() -> bool:
            crd = await registry.get(crd_t, NAME)
            return any(c["type"] == "Terminating" and c["reason"] ==
                       "InstanceDeletionInProgress" for c in crd["status"]["conditions"])

        await _until(in_progress)
        held = await registry.get(widgets, "held")
        held["metadata"]["finalizers"] = []
        await registry.update(widgets, "held", held)

        async def gone() -> bool:
            return registry.catalog.get("example.com", "widgets") is None

        await _until(gone)
        with pytest.raises(StatusError) as e:
            await registry.get(crd_t, NAME)
        assert e.value.code == 404
    finally:
        await registry.stop()
