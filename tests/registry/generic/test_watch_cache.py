"""The watch cache's decoded objects: decoded once and shared by every in-process watcher
of an event, kept only for the recently decoded events (issue 27: objects held once)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from kubegc.api.clock import ManualClock
from kubegc.api.resources import GroupVersionResource
from kubegc.client.cache import SharedInformer, SharedInformerFactory
from kubegc.client.local import LocalClient
from kubegc.registry import Registry
from kubegc.registry.generic.target import decode_value, encode
from kubegc.registry.generic.watch_cache import CachedEvent, DecodedWindow

from ..conftest import manifest, target

CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")


async def eventually(condition: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


def _event(revision: int, window: DecodedWindow) -> CachedEvent:
    value = encode({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": f"cm-{revision}", "namespace": "default"}})
    return CachedEvent(False, True, f"/registry/core/configmaps/default/cm-{revision}",
                       revision, value, None, revision, window)


def test_an_event_is_decoded_once_while_recent_and_forgotten_after() -> None:
    window = DecodedWindow(capacity=2)
    first, second, third = (_event(r, window) for r in (1, 2, 3))
    decoded = first.obj
    assert first.obj is decoded  # every reader while recent: the same dict
    assert second.obj is not None
    assert first.obj is decoded
    assert third.obj is not None  # first is now the oldest of three: it forgets its object
    again = first.obj
    assert again is not decoded and again == decoded
    assert len(window) == 2


def test_a_forgotten_event_drops_its_watch_lines_too() -> None:
    window = DecodedWindow(capacity=1)
    first, second = (_event(r, window) for r in (1, 2))
    line = first.line("ADDED")
    assert first.obj is not None and first.lines == {"ADDED": line}
    assert second.obj is not None  # first forgets
    assert first.lines is None
    assert first.line("ADDED") == line  # encoded again when asked for


async def test_in_process_informers_share_the_watch_caches_objects(
        registry: Registry, clock: ManualClock) -> None:
    """Two informers of ConfigMaps (two controller managers' factories) hold the same dict,
    decoded once by the watch cache; a metadata-only informer holds its metadata dict."""
    client = LocalClient(registry)
    informers: list[SharedInformer] = []
    factories = [SharedInformerFactory(client, clock=clock) for _ in range(2)]
    informers = [f.for_resource(CONFIGMAPS) for f in factories]
    informers.append(factories[0].for_resource(CONFIGMAPS, metadata_only=True))
    for f in factories:
        f.start()
    try:
        for informer in informers:
            await informer.wait_for_sync()
        await registry.create(target(registry, "configmaps"), manifest("configmaps", "shared"))
        await eventually(lambda: all(i.indexer.get_by_key("default/shared") for i in informers),
                         "the informers to see the ConfigMap")
        full, other, meta = (i.indexer.get_by_key("default/shared") for i in informers)
        assert full is other
        assert meta is not None and full is not None
        assert meta["metadata"] is full["metadata"]
        assert "data" not in meta
    finally:
        for f in factories:
            await f.stop()


def test_decoded_objects_share_the_strings_objects_repeat() -> None:
    """Namespace, kind, apiVersion, labels and the owner's coordinates are one string for
    every object that repeats them (``interning.intern_common``)."""
    def stored(name: str) -> bytes:
        return encode({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": name, "namespace": "team-" + "a" * 20, "labels": {"app": "web-" + "x" * 20},
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
                                 "name": "owner-" + "o" * 20, "uid": "u" * 36}]}})

    a, b = decode_value(stored("a"), 1), decode_value(stored("b"), 2)
    ma, mb = a["metadata"], b["metadata"]
    assert ma["namespace"] is mb["namespace"]
    assert a["kind"] is b["kind"]
    assert ma["labels"]["app"] is mb["labels"]["app"]
    ra, rb = ma["ownerReferences"][0], mb["ownerReferences"][0]
    assert ra["uid"] is rb["uid"] and ra["name"] is rb["name"]


async def test_a_watch_across_namespaces_by_name_sees_that_name_in_every_namespace(
        registry: Registry) -> None:
    """``fieldSelector=metadata.name=x`` on all namespaces (the root CA publisher's
    informer) watches every namespace's ``x``, not a cluster-scoped key ``x``."""
    from kubegc.registry import WatchRequest

    everywhere = registry.target("", "v1", "configmaps", "")
    watch = registry.watch(everywhere, WatchRequest(field_selector="metadata.name=x",
                                                    resource_version="1"))
    await watch.start()
    for namespace in ("default", "kube-system"):
        await registry.create(target(registry, "configmaps", namespace),
                              manifest("configmaps", "x"))
    await registry.create(target(registry, "configmaps"), manifest("configmaps", "y"))
    seen: list[str] = []
    batches = watch.batches()
    while len(seen) < 2:
        batch = await asyncio.wait_for(anext(batches), 5)
        seen += [f"{c.object['metadata']['namespace']}/{c.object['metadata']['name']}"
                 for c in batch]
    watch.close()
    assert seen == ["default/x", "kube-system/x"]


async def test_a_watch_resuming_inside_the_ring_gets_exactly_what_followed(
        registry: Registry) -> None:
    """A watch from a revision the ring holds (an informer resuming from its cached
    resourceVersion after a restart) gets every later event under its prefix, in order,
    and none before or outside it."""
    written = []
    for name in ("a", "b", "c", "d"):
        for namespace in ("default", "kube-system"):
            obj = await registry.create(target(registry, "configmaps", namespace),
                                        manifest("configmaps", name))
            written.append((namespace, name, int(obj["metadata"]["resourceVersion"])))
    cache = registry.cache
    await cache.wait_for_revision(written[-1][2])
    after = written[3][2]  # kube-system/b
    watcher = cache.subscribe("/registry/core/configmaps/default/", after)
    try:
        got = [event.revision for event in watcher.buffer]
    finally:
        cache.unsubscribe(watcher)
    assert got == [rv for namespace, _, rv in written if namespace == "default" and rv > after]
    assert got and all(rv > after for rv in got)
