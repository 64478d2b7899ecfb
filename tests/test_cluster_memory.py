"""What the composition root keeps of each object (issue 27): the objects the in-process
informers share are never mutated, and a restarted server builds the same garbage
collector graph from the store as the live server had built from its watch."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from kubegc.api import sparse
from kubegc.api.errors import StatusError
from kubegc.api.resources import GroupVersionResource
from kubegc.client.cache import to_partial_object_metadata
from kubegc.client.interface import DeleteOptions, ListOptions
from kubegc.client.local import LocalClient
from kubegc.cluster import Cluster
from kubegc.cluster_config import ClusterConfig
from kubegc.component.config import ControllerManagerConfiguration
from kubegc.controllermanager.garbagecollector import GarbageCollectorController
from kubegc.storage import DataDir

CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")
KEEP = "example.com/keep"
T = TypeVar("T")


def _config(data_dir: Path) -> ClusterConfig:
    return ClusterConfig(data_dir=data_dir, port=0, tls=False, serve_http=False)


def _cm(name: str, *owners: dict[str, Any], finalizers: tuple[str, ...] = ()) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": {"app": "web"}}
    if owners:
        meta["ownerReferences"] = list(owners)
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}


def _ref(obj: dict[str, Any], *, block: bool = False) -> dict[str, Any]:
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": obj["metadata"]["name"],
           "uid": obj["metadata"]["uid"]}
    return {**ref, "blockOwnerDeletion": True} if block else ref


async def _scenario(cluster: Cluster) -> None:
    """Owners with dependents, a dependent of a missing owner (a virtual node the GC
    verifies), one of a present and a missing owner, and an owner waiting in foreground
    deletion for a dependent a finalizer keeps."""
    client = cluster.client
    assert client is not None
    owner = await client.create(CONFIGMAPS, _cm("owner"), namespace="default")
    waiting = await client.create(CONFIGMAPS, _cm("waiting"), namespace="default")
    for i in range(5):
        await client.create(CONFIGMAPS, _cm(f"dep-{i}", _ref(owner)), namespace="default")
    ghost = {"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost",
             "uid": "00000000-0000-0000-0000-000000000001"}
    await client.create(CONFIGMAPS, _cm("orphan-of-ghost", ghost), namespace="default")
    await client.create(CONFIGMAPS, _cm("two-owners", _ref(owner), ghost), namespace="default")
    await client.create(CONFIGMAPS, _cm("kept", _ref(waiting, block=True), finalizers=(KEEP,)),
                        namespace="default")
    await client.delete(CONFIGMAPS, "waiting", namespace="default",
                        options=DeleteOptions(propagation_policy="Foreground"))
    await cluster.settle(timeout=30)


def _graph(cluster: Cluster) -> dict[str, tuple[Any, ...]]:
    manager = cluster.controller_manager
    assert manager is not None
    gc = next(c for c in manager.controllers if isinstance(c, GarbageCollectorController)).gc
    nodes = gc.graph_builder.uid_to_node.snapshot()
    return {uid: (n.identity, n.owners, sorted(d.identity.uid for d in n.get_dependents()),
                  n.virtual, n.being_deleted, n.deleting_dependents)
            for uid, n in nodes.items()}


async def _after_restart(data_dir: Path, read: Callable[[Cluster], T]) -> T:
    """``read`` of a cluster started again on ``data_dir``, once it has settled."""
    restarted = Cluster(_config(data_dir))
    await restarted.start()
    try:
        await restarted.settle(timeout=30)
        return read(restarted)
    finally:
        await restarted.stop()


async def _scenario_graph(data_dir: Path) -> dict[str, tuple[Any, ...]]:
    """The GC graph of a cluster on ``data_dir`` once ``_scenario`` has run (and it has
    stopped cleanly)."""
    live = Cluster(_config(data_dir))
    await live.start()
    try:
        await _scenario(live)
        return _graph(live)
    finally:
        await live.stop()


async def test_a_restarted_server_builds_the_gc_graph_the_live_one_had(tmp_path: Path) -> None:
    before = await _scenario_graph(tmp_path)
    after = await _after_restart(tmp_path, _graph)
    names = {identity.name for identity, *_ in before.values()}
    assert {"owner", "dep-0", "two-owners", "waiting", "kept"} <= names
    assert "orphan-of-ghost" not in names  # its only owner was verified absent
    assert after == before


async def test_no_component_mutates_the_objects_the_informers_share(tmp_path: Path) -> None:
    """Informers hold the watch cache's decoded objects as they are (no copies): after
    every controller has worked on them, each cached object is still what the store holds
    at its resourceVersion."""
    cluster = Cluster(_config(tmp_path))
    await cluster.start()
    try:
        await _scenario(cluster)
        assert cluster.controller_manager is not None and cluster.client is not None
        checked = 0
        for informer in cluster.controller_manager.informers.informers():
            for cached in informer.indexer.list():
                meta = cached["metadata"]
                try:
                    stored = await cluster.client.get(informer.gvr, meta["name"],
                                                      namespace=meta.get("namespace", ""))
                except StatusError:
                    continue  # deleted since: nothing to compare
                if stored["metadata"]["resourceVersion"] != meta["resourceVersion"]:
                    continue  # changed since (a Lease renewal)
                stored.setdefault("apiVersion", cached.get("apiVersion"))
                stored.setdefault("kind", cached.get("kind"))
                expected = to_partial_object_metadata(stored) if informer.metadata_only \
                    else stored
                assert cached == expected, f"{informer.gvr} {meta['name']} was mutated"
                checked += 1
        assert checked > 20
    finally:
        await cluster.stop()


async def test_the_only_full_cache_of_configmaps_holds_the_published_ones(
        tmp_path: Path) -> None:
    """The root CA publisher, the one component that reads whole ConfigMaps, caches only
    the ``kube-root-ca.crt`` ones; every ConfigMap is in the GC's metadata cache."""
    cluster = Cluster(_config(tmp_path))
    await cluster.start()
    try:
        await _scenario(cluster)
        assert cluster.controller_manager is not None
        caches = {i.metadata_only: i for i in cluster.controller_manager.informers.informers()
                  if i.gvr == CONFIGMAPS}
        assert {o["metadata"]["name"] for o in caches[False].indexer.list()} == {
            "kube-root-ca.crt"}
        assert len(caches[True].indexer) > 5
    finally:
        await cluster.stop()


def _shared_parts(cluster: Cluster) -> tuple[set[int], ...]:
    """The ids of the labels and annotations maps and ownerReferences lists of the
    dependents ``dep-*`` in the GC's metadata cache of ConfigMaps, and of their graph
    nodes' owners tuples."""
    manager = cluster.controller_manager
    assert manager is not None
    informer = next(i for i in manager.informers.informers()
                    if i.gvr == CONFIGMAPS and i.metadata_only)
    deps = [o["metadata"] for o in informer.indexer.list()
            if o["metadata"]["name"].startswith("dep-")]
    assert len(deps) == 3 and all("managedFields" not in m for m in deps)
    gc = next(c for c in manager.controllers if isinstance(c, GarbageCollectorController)).gc
    nodes = [gc.graph_builder.uid_to_node.read(m["uid"]) for m in deps]
    return ({id(m["labels"]) for m in deps}, {id(m["annotations"]) for m in deps},
            {id(m["ownerReferences"]) for m in deps},
            {id(n.owners) for n in nodes if n is not None})


async def test_the_dependents_of_one_owner_share_what_they_repeat(tmp_path: Path) -> None:
    """Objects written with managedFields (every write over HTTP) are kept by the GC's
    metadata informer without them; the copy's labels, annotations and ownerReferences
    are one object
    for all the dependents that repeat them, and so is their graph nodes' tuple of owners
    (issue 27) — live, from the watch, and after a restart, from the LIST."""
    live = Cluster(_config(tmp_path))
    await live.start()
    try:
        assert live.registry is not None
        client = LocalClient(live.registry, field_manager="kubectl-create")
        owner = await client.create(CONFIGMAPS, _cm("owner"), namespace="default")
        for i in range(3):
            dep = _cm(f"dep-{i}", _ref(owner))
            dep["metadata"]["annotations"] = {"team": "web", "tier": "front"}
            await client.create(CONFIGMAPS, dep, namespace="default")
        await live.settle(timeout=30)
        assert [len(ids) for ids in _shared_parts(live)] == [1, 1, 1, 1]
    finally:
        await live.stop()
    parts = await _after_restart(tmp_path, _shared_parts)
    assert [len(ids) for ids in parts] == [1, 1, 1, 1]


async def _restart_listing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                           ) -> tuple[dict[str, tuple[Any, ...]], int]:
    """The GC graph of a cluster restarted on ``tmp_path``, and how many LISTs of every
    ConfigMap its informers made."""
    lists: list[GroupVersionResource] = []
    original = LocalClient.list

    async def counting(self: LocalClient, gvr: GroupVersionResource, *, namespace: str = "",
                       options: ListOptions | None = None) -> dict[str, Any]:
        if gvr == CONFIGMAPS and not (options and options.field_selector):
            lists.append(gvr)
        return await original(self, gvr, namespace=namespace, options=options)

    monkeypatch.setattr(LocalClient, "list", counting)
    graph = await _after_restart(tmp_path, _graph)
    return graph, len(lists)


@pytest.mark.parametrize("caches", ["kept", "damaged", "written since", "compacted since"])
async def test_a_restart_fills_the_gc_informers_from_their_caches_when_it_can(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caches: str) -> None:
    """A clean stop leaves the metadata informers' caches; the next start on the same
    store begins from them instead of listing (issue 27: restart), and builds the graph
    the live server had. Caches of a store written since (by a server that did not start
    its controllers, the file put back, as after a crash) are used too: the informers
    watch from their resourceVersion and see what was written since. Damaged caches, or
    caches older than the store's compaction, are not used: the informers list, and the
    graph holds what the store holds."""
    before = await _scenario_graph(tmp_path)
    path = DataDir(tmp_path).informer_caches
    assert path.exists()
    if caches == "damaged":
        path.write_bytes(path.read_bytes()[:-40])
    if caches in ("written since", "compacted since"):
        kept = path.read_bytes()
        await _write_late(tmp_path, before, compact=caches == "compacted since")
        path.write_bytes(kept)
    after, lists = await _restart_listing(tmp_path, monkeypatch)
    if caches in ("kept", "written since"):
        assert lists == 0
    else:
        assert lists >= 1
    if caches in ("kept", "damaged"):
        assert after == before
        return
    late = next(uid for uid, (identity, *_) in after.items() if identity.name == "late")
    owner = next(uid for uid, (identity, *_) in after.items() if identity.name == "owner")
    assert late in after[owner][2]  # the owner's dependents
    assert {u: n for u, n in after.items() if u not in (late, owner)} == {
        u: n for u, n in before.items() if u != owner}


async def _write_late(tmp_path: Path, graph: dict[str, tuple[Any, ...]], *,
                      compact: bool) -> None:
    """A dependent ``late`` of the scenario's owner, written by a server that runs no
    controller; with ``compact``, the store's history compacted up to it."""
    quiet = Cluster(ClusterConfig(data_dir=tmp_path, port=0, tls=False, serve_http=False,
                                  controller_manager=ControllerManagerConfiguration(
                                      controllers=[])))
    await quiet.start()
    try:
        assert quiet.client is not None and quiet.kv is not None
        late = _cm("late", _ref(before_owner(graph)))
        await quiet.client.create(CONFIGMAPS, late, namespace="default")
        if compact:
            await quiet.kv.compact(quiet.kv.current_revision)
    finally:
        await quiet.stop()


def before_owner(graph: dict[str, tuple[Any, ...]]) -> dict[str, Any]:
    """The ``owner`` ConfigMap of ``_scenario`` as an object to reference."""
    identity = next(i for i, *_ in graph.values() if i.name == "owner")
    return {"metadata": {"name": identity.name, "uid": identity.uid}}


async def test_caches_that_cannot_be_written_leave_a_clean_stop(tmp_path: Path) -> None:
    """A stop that cannot write the caches (here their path is a directory) still stops
    cleanly, and the next start lists."""
    cluster = Cluster(_config(tmp_path))
    await cluster.start()
    DataDir(tmp_path).informer_caches.mkdir()
    await cluster.stop()
    graph = await _after_restart(tmp_path, _graph)
    assert graph  # the store opened again (the first stop closed it) and was listed


async def test_nothing_is_kept_for_a_deleted_namespace(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 27 (nothing kept for what is gone): once a namespace of 2,000 ConfigMaps (one
    owner per 100) is deleted, the informers' stores and indexes, the GC's graph and its
    queue hold tables sized for what is left, not for the peak (``api/sparse.py``; its
    thresholds lowered so that 2,000 objects show what 100,000 do)."""
    monkeypatch.setattr(sparse, "MIN_ROOM", 4096)
    monkeypatch.setattr(sparse, "SPARSE_FACTOR", 2)
    cluster = Cluster(_config(tmp_path))
    await cluster.start()
    try:
        client = cluster.client
        assert client is not None and cluster.controller_manager is not None
        await client.create(NAMESPACES, {"metadata": {"name": "big"}})
        owner: dict[str, Any] = {}
        for i in range(2000):
            cm = _cm(f"cm-{i}", *([_ref(owner)] if i % 100 else []))
            created = await client.create(CONFIGMAPS, {**cm, "metadata": {
                **cm["metadata"], "namespace": "big"}}, namespace="big")
            owner = created if i % 100 == 0 else owner
        await cluster.settle(timeout=60)
        gc = next(c for c in cluster.controller_manager.controllers
                  if isinstance(c, GarbageCollectorController)).gc
        tables = _tables(cluster, gc)
        assert min(sys.getsizeof(t) for t in tables.values()) > 32 << 10, tables.keys()
        await client.delete(NAMESPACES, "big")
        await _eventually(lambda: client.get(NAMESPACES, "big"))
        await cluster.settle(timeout=60)
        after = _tables(cluster, gc)
        for name, table in after.items():
            assert sys.getsizeof(table) < sys.getsizeof(tables[name]) / 4, name
    finally:
        await cluster.stop()


def _tables(cluster: Cluster, gc: Any) -> dict[str, Any]:
    """The GC's ``uid_to_node`` map, and each ConfigMap informer's store and namespace
    index."""
    assert cluster.controller_manager is not None
    out: dict[str, Any] = {"uid_to_node": gc.graph_builder.uid_to_node._nodes}
    for informer in cluster.controller_manager.informers.informers():
        if informer.gvr == CONFIGMAPS and informer.metadata_only:
            out["metadata informer"] = informer.indexer._items
    return out


async def _eventually(get: Callable[[], Any], timeout: float = 60.0) -> None:
    """Wait until ``get()`` raises NotFound."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        try:
            await get()
        except StatusError as err:
            if err.code == 404:
                return
            raise
        await asyncio.sleep(0.1)
    raise TimeoutError("still there")
