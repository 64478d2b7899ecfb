"""Garbage collector throughput end to end, as a ratio of the raw storage delete rate
measured in the same run, and memory per GC graph node.

Usage: ``python bench/bench_gc.py [--quick] [--sizes 1000,10000] [--big] [--storage
memory,sqlite] [--policies Background,Foreground] [--nodes 1000000] [--skip-memory]
[--python-gc]``

Cascade: an in-process kubegc (``kubegc.testing.Cluster(controllers=["garbagecollector"])``,
driven through its ``LocalClient`` on the cluster's loop) holds ONE owner ConfigMap and N
dependent ConfigMaps (~1.3 KB, ``ownerReferences`` with ``controller`` and
``blockOwnerDeletion``); after ``settle()`` the owner is deleted with
``propagationPolicy`` Background or Foreground, and the clock runs from that DELETE to the
last dependent's DELETED watch event (Foreground: and to the owner's own removal); the
time until every DeletionRecord of the cascade is written (they wait for the GC to go
idle) is printed beside it. ConfigMaps are deleted at once (Pods would wait for a
kubelet's grace period). Python's cyclic collector is set up as ``kubegc serve`` sets it
up for the cascade (issue 4 is the GC inside kubegc serve); ``--python-gc`` keeps Python's
defaults, as a test process running ``kubegc.testing.Cluster`` has them.
Beside it, the raw storage delete rate of the same store type: N keys of the same bytes
deleted with CAS from 20 coroutines (the GC's default worker count), and for SQLite also
plain-table deletes, one per transaction (FULL). For SQLite, issue 27's baseline too: the
raw durable tombstone rate of the same rows (``_common.raw_tombstones``: the rows
``SqliteKV`` writes for a delete, plain ``sqlite3``, ``synchronous=FULL``), measured just
before and just after each cascade (the disk's speed drifts on a shared machine), with 20
rows per commit (what 20 workers, each acknowledged only after its commit, can batch) and
1,000 (what the disk allows); the cascade's ratio to each, and the rate with every
DeletionRecord of the cascade durable too.

Memory: a ``GraphBuilder`` fed ``--nodes`` metadata-only ADD events (a tree of fan-out 10:
ReplicaSet-like owners, Pod-like leaves, distinct strings as after JSON decoding) through
its ``graph_changes`` queue, in a fresh subprocess: RSS growth per node with the input
objects dropped (graph incl. the identity strings it keeps), and tracemalloc bytes per node
with the inputs kept alive (what the graph adds on top of the informer's objects).

Issue 4 targets: >= 5,000 dependents deleted per second end to end; <= 1 KB per node.
Issue 27 target: the cascade >= 1/3 of the raw durable tombstone rate (the disk's, 1,000 per
commit) at 50k and 500k dependents (``--sizes 50000``; never above 300k on the shared VM).
"""

from __future__ import annotations

import argparse
import array
import asyncio
import contextlib
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))

import orjson
from _common import (
    TOMBSTONE_BATCH,
    configmap,
    fresh_db,
    header,
    raw_deletes,
    raw_tombstones,
    remove_db,
    rss_bytes,
    timed,
    verdict,
)

from kubegc.api.clock import RealClock
from kubegc.api.meta import DeletionPropagation
from kubegc.api.resources import GroupVersionResource
from kubegc.cli import CYCLIC_GC_THRESHOLDS
from kubegc.client.interface import DeleteOptions, WatchOptions
from kubegc.component.config import GarbageCollectorControllerConfiguration
from kubegc.controllermanager.garbagecollector import GarbageCollectorController
from kubegc.controllers.deletionrecords import DeletionRecordSink
from kubegc.storage import KV, MemoryKV, SqliteKV, parse_storage
from kubegc.testing import Cluster

HERE = Path(__file__).resolve()
CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")
NS = "bench-gc"
GC_WORKERS = GarbageCollectorControllerConfiguration.concurrent_gc_syncs
TARGET_DELETES = 5_000.0
TARGET_NODE_BYTES = 1024.0


# -- cascade end to end -------------------------------------------------------------------------




async def cascade(storage: str, n: int, policy: str, timeout: float, *,
                  serve_gc: bool = False, workers: int = GC_WORKERS) -> dict[str, float]:
    """One owner, ``n`` dependents; seconds from the owner's DELETE to the last dependent
    (and, Foreground, the owner) gone. ``serve_gc``: tune the cyclic collector as
    ``kubegc serve`` does after start-up (freeze, higher thresholds) for the cascade."""
    durable = parse_storage(storage).durable
    data_dir = Path(tempfile.mkdtemp(prefix="bench-gc-")) if durable else None
    async with Cluster(controllers=["garbagecollector"], storage=storage,
                       data_dir=data_dir, concurrent_gc_syncs=workers) as cluster:
        client = cluster.client
        await client.create(NAMESPACES, {"metadata": {"name": NS}})
        owner = await client.create(CONFIGMAPS, configmap("owner", NS), namespace=NS)
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
               "uid": owner["metadata"]["uid"], "controller": True,
               "blockOwnerDeletion": True}
        deps = [configmap(f"dep-{i:07d}", NS, owner=ref) for i in range(n)]
        setup_start = time.perf_counter()
        await timed(n, 64, lambda i: client.create(CONFIGMAPS, deps[i], namespace=NS))
        create_rate = n / (time.perf_counter() - setup_start)
        await cluster.asettle(timeout)
        thresholds = gc.get_threshold()
        if serve_gc:
            gc.freeze()
            gc.set_threshold(*CYCLIC_GC_THRESHOLDS)
        listed = await client.list(CONFIGMAPS, namespace=NS)
        rv = listed["metadata"]["resourceVersion"]

        gone = 0
        first = last = owner_gone = 0.0
        done = asyncio.Event()

        async def observe() -> None:
            nonlocal gone, first, last, owner_gone
            async for event in client.watch(CONFIGMAPS, namespace=NS,
                                            options=WatchOptions(resource_version=rv)):
                if event.type != "DELETED":
                    continue
                now = time.perf_counter()
                if event.object["metadata"]["name"] == "owner":
                    owner_gone = now
                else:
                    gone += 1
                    first = first or now
                    last = now
                if gone == n and (owner_gone or policy != "Foreground"):
                    done.set()
                    return

        sink = _records_sink(cluster)
        written = sink.written
        watcher = asyncio.create_task(observe())
        await asyncio.sleep(0)
        cpu_start = time.process_time()
        start = time.perf_counter()
        await client.delete(CONFIGMAPS, "owner", namespace=NS,
                            options=DeleteOptions(propagation_policy=DeletionPropagation(policy)))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), timeout)
        end = time.perf_counter()
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        # the DeletionRecords wait for the GC to go idle, then go in batches: when are
        # they all durable?
        deadline = time.perf_counter() + timeout
        while not sink.is_idle() and time.perf_counter() < deadline:
            await asyncio.sleep(0.005)
        records_at = time.perf_counter()
        cpu = time.process_time() - cpu_start
        records = sink.written - written
        if serve_gc:
            gc.set_threshold(*thresholds)
            gc.unfreeze()
    if data_dir is not None:
        shutil.rmtree(data_dir)
    elapsed = (last if gone == n else end) - start
    return {
        "deleted": gone, "expected": n, "seconds": elapsed,
        "rate": gone / elapsed if elapsed > 0 else 0.0,
        "first_s": (first - start) if first else -1.0,
        "owner_gone_s": (owner_gone - start) if owner_gone else -1.0,
        "setup_creates_per_s": create_rate,
        "records": records, "records_s": records_at - start,
        "cpu_us": cpu / max(gone, 1) * 1e6,
    }


def _records_sink(cluster: Cluster) -> DeletionRecordSink:
    manager = cluster.cluster.controller_manager
    assert manager is not None
    [gc_controller] = [c for c in manager.controllers
                       if isinstance(c, GarbageCollectorController)]
    return gc_controller.sink


async def kv_deletes(storage: str, n: int, value: bytes, directory: str) -> float:
    """Deletes/s of ``n`` keys with CAS from ``GC_WORKERS`` coroutines."""
    kv: KV = SqliteKV(fresh_db(directory)) if parse_storage(storage).durable else MemoryKV()
    revs: dict[int, int] = {}

    async def create(i: int) -> None:
        revs[i] = await kv.create(f"/registry/configmaps/{NS}/dep-{i:07d}", value)

    await timed(n, 64, create)
    rate = await timed(n, GC_WORKERS, lambda i: kv.delete(
        f"/registry/configmaps/{NS}/dep-{i:07d}", expected_mod_revision=revs[i]))
    await kv.close()
    if isinstance(kv, SqliteKV):
        remove_db(kv.path)
    return rate


# -- graph memory ---------------------------------------------------------------------------------


ROOTS = 100  # one root owner per namespace


def parent_of(i: int) -> int:
    return (i - ROOTS) // 10


def owner_count(n: int) -> int:
    """Nodes that have dependents: the roots and every parent of a later node."""
    return max(parent_of(n - 1) + 1, min(n, ROOTS)) if n > ROOTS else n


def node_objects(n: int) -> Iterator[dict[str, Any]]:
    """Metadata-only objects of a forest of fan-out 10 (``ROOTS`` roots, one namespace
    each; a dependent shares its owner's namespace). Owners look like ReplicaSets, leaves
    like Pods; every string is a distinct object, as after JSON decoding."""
    owners = owner_count(n)
    top = array.array("i")  # each object's root, hence its namespace
    for i in range(n):
        top.append(i if i < ROOTS else top[parent_of(i)])
        meta: dict[str, Any] = {
            "name": f"obj-{i:07d}", "namespace": f"ns-{top[i]:03d}",
            "uid": f"00000000-0000-4000-8000-{i:012d}",
            "resourceVersion": str(1000 + i),
        }
        if i >= ROOTS:
            parent = parent_of(i)
            meta["ownerReferences"] = [{
                "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"obj-{parent:07d}",
                "uid": f"00000000-0000-4000-8000-{parent:012d}", "controller": True,
                "blockOwnerDeletion": True}]
        is_owner = i < owners
        obj = {"apiVersion": "apps/v1" if is_owner else "v1",
               "kind": "ReplicaSet" if is_owner else "Pod", "metadata": meta}
        yield orjson.loads(orjson.dumps(obj))


async def build_graph(n: int, keep_inputs: bool) -> dict[str, Any]:
    from kubegc.api.resources import GroupVersionKind
    from kubegc.client.cache import SharedInformerFactory
    from kubegc.controllers.garbagecollector import Event, EventType, GraphBuilder, RESTMapper

    class NoRecorder:
        def event(self, obj: Any, type: str, reason: str, message: str) -> None:
            pass

    clock = RealClock()
    builder = GraphBuilder(rest_mapper=RESTMapper(),
                           informer_factory=SharedInformerFactory(None, clock=clock),  # type: ignore[arg-type]
                           recorder=NoRecorder(), clock=clock)
    owner_gvk, leaf_gvk = GroupVersionKind("apps", "v1", "ReplicaSet"), GroupVersionKind(
        "", "v1", "Pod")
    inputs: list[dict[str, Any]] = []
    if keep_inputs:
        inputs = list(node_objects(n))
        gc.collect()
        tracemalloc.start()
        source: Iterator[dict[str, Any]] = iter(inputs)
    else:
        source = node_objects(n)
    owners = owner_count(n)
    gc.collect()
    rss0 = rss_bytes()
    start = time.perf_counter()
    for i, obj in enumerate(source):
        builder.graph_changes.add(Event(EventType.ADD, obj, owner_gvk if i < owners
                                        else leaf_gvk))
        await builder.process_graph_changes()
    build_s = time.perf_counter() - start
    gc.collect()
    out: dict[str, Any] = {"nodes": len(builder.uid_to_node), "build_s": build_s}
    if keep_inputs:
        current, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out["traced_bytes_per_node"] = current / n
    else:
        out["rss_bytes_per_node"] = (rss_bytes() - rss0) / n
        start = time.perf_counter()
        gc.collect()
        out["full_gc_s"] = time.perf_counter() - start
    out["attempt_to_delete_pending"] = len(builder.attempt_to_delete)
    del inputs
    return out


def graph_memory(n: int, keep_inputs: bool) -> dict[str, Any]:
    argv = [sys.executable, str(HERE), "--graph-child", json.dumps(
        {"n": n, "keep_inputs": keep_inputs})]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


# -- main -----------------------------------------------------------------------------------------


class Tombstones(NamedTuple):
    """The raw durable tombstone rates of the same rows (``_common.raw_tombstones``)."""

    workers: float  # GC_WORKERS rows per commit: what 20 acknowledged writers can batch
    disk: float  # TOMBSTONE_BATCH rows per commit: what the disk allows


def _tombstones(directory: str, n: int, value: bytes) -> Tombstones:
    return Tombstones(raw_tombstones(directory, n, GC_WORKERS, value),
                      raw_tombstones(directory, n, TOMBSTONE_BATCH, value))


def _print_cascade(storage: str, n: int, policy: str, r: dict[str, float], raw: float,
                   tomb: Tombstones | None) -> None:
    complete = r["deleted"] == r["expected"]
    print(f"  {storage:<6} {policy:<10} n={n:<7,} {r['rate']:>8,.0f} deletes/s "
          f"= {r['rate'] / raw:.3f}x raw  ({r['deleted']:,}/{r['expected']:,} in "
          f"{r['seconds']:.2f} s{'' if complete else ' INCOMPLETE'}; first gone "
          f"after {r['first_s'] * 1000:.1f} ms"
          + (f"; owner gone after {r['owner_gone_s']:.2f} s" if policy == "Foreground" else "")
          + f"; {r['records']:,.0f} DeletionRecords written after "
          f"{r['records_s']:.2f} s; {r['cpu_us']:.0f} us CPU per deletion with its record; "
          f"setup creates {r['setup_creates_per_s']:,.0f}/s)",
          flush=True)
    if tomb is not None:
        with_records = r["expected"] / r["records_s"] if r["records_s"] > 0 else 0.0
        print(f"  {'':<6} {'':<10} raw durable tombstones of the same rows (FULL, median "
              f"of 3, before and after): {tomb.workers:,.0f}/s at {GC_WORKERS}/txn, "
              f"{tomb.disk:,.0f}/s at {TOMBSTONE_BATCH}/txn; the cascade "
              f"{r['rate'] / tomb.workers:.3f}x / {r['rate'] / tomb.disk:.3f}x of them; "
              f"DeletionRecords durable too: {with_records:,.0f}/s = "
              f"{with_records / tomb.disk:.3f}x the disk's", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="~10-20 s smoke run")
    parser.add_argument("--sizes", default="1000,10000", help="dependents per owner")
    parser.add_argument("--big", action="store_true", help="add 100000 dependents")
    parser.add_argument("--storage", default="memory,sqlite",
                        help="stores for the cascade: memory, sqlite (durable)")
    parser.add_argument("--policies", default="Background,Foreground")
    parser.add_argument("--nodes", type=int, default=1_000_000, help="graph memory nodes")
    parser.add_argument("--traced-nodes", type=int, default=200_000,
                        help="nodes for the (3x slower) tracemalloc run")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--python-gc", action="store_true",
                        help="cascades with Python's default cyclic-GC settings (what a test "
                             "process running kubegc.testing.Cluster has) instead of kubegc "
                             "serve's (gc.freeze() after start-up, thresholds 50000/50/100)")
    parser.add_argument("--serve-gc", action="store_true",
                        help="kubegc serve's cyclic-GC settings (the default)")
    parser.add_argument("--gc-workers", type=int, default=GC_WORKERS,
                        help="the GC's workers (kubegc serve --concurrent-gc-syncs; upstream's "
                             "default 20): each waits for its DELETE's commit, so a commit "
                             "carries at most this many of the cascade's deletions")
    parser.add_argument("--timeout", type=float, default=300.0, help="per cascade")
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where raw DBs go")
    parser.add_argument("--graph-child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.graph_child:
        p = json.loads(args.graph_child)
        print(json.dumps(asyncio.run(build_graph(p["n"], p["keep_inputs"]))))
        return
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.big:
        sizes.append(100_000)
    if args.quick:
        sizes, args.nodes, args.traced_nodes = [1000], 100_000, 50_000
        args.storage = "memory"
    serve_gc = not args.python_gc
    storages = [s.strip() for s in args.storage.split(",") if s.strip()]
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    header("bench_gc", f"dependents {sizes}, policies {policies}, stores {storages}, "
                       f"{args.gc_workers} GC workers, cyclic GC "
                       f"{'as kubegc serve' if serve_gc else 'Python defaults'}")
    started = time.perf_counter()
    value = orjson.dumps(configmap("dep-0000000", NS))
    rows: list[tuple[str, int, str, dict[str, float], float, Tombstones | None]] = []
    print("Cascade deletion of one owner's dependents (end to end: DELETE owner -> last "
          "dependent's DELETED event)")
    for storage in storages:
        durable = parse_storage(storage).durable
        for n in sizes:
            raw = asyncio.run(kv_deletes(storage, n, value, args.dir))
            line = (f"  {storage:<6} raw {'SqliteKV' if durable else 'MemoryKV'} "
                    f"CAS deletes, {GC_WORKERS} writers, n={n:,}: {raw:,.0f}/s")
            if durable:
                line += (f"; plain SQLite FULL 1 delete/txn: "
                         f"{raw_deletes(args.dir, min(n, 5000), 1, value):,.0f}/s")
            print(line, flush=True)
            for policy in policies:
                tomb = _tombstones(args.dir, n, value) if durable else None
                r = asyncio.run(cascade(storage, n, policy, args.timeout,
                                        serve_gc=serve_gc, workers=args.gc_workers))
                if tomb is not None:  # the disk drifts: the baseline around the cascade
                    after = _tombstones(args.dir, n, value)
                    tomb = Tombstones(*((a + b) / 2 for a, b in zip(tomb, after, strict=True)))
                rows.append((storage, n, policy, r, raw, tomb))
                _print_cascade(storage, n, policy, r, raw, tomb)
    memory: dict[str, Any] = {}
    if not args.skip_memory:
        print("GC graph memory (GraphBuilder fed ADD events, fan-out 10 tree)", flush=True)
        memory = graph_memory(args.nodes, keep_inputs=False)
        if "error" in memory:
            print(f"  RSS run failed: {memory['error']}")
        else:
            print(f"  {memory['nodes']:,} nodes: RSS growth {memory['rss_bytes_per_node']:,.0f} "
                  f"B/node incl. the identity strings the graph keeps (inputs dropped); "
                  f"build {memory['build_s']:.1f} s = {memory['nodes'] / memory['build_s']:,.0f} "
                  f"events/s; one full gc.collect() {memory['full_gc_s']:.2f} s", flush=True)
        traced = graph_memory(args.traced_nodes, keep_inputs=True)
        memory["traced"] = traced
        if "error" in traced:
            print(f"  tracemalloc run failed: {traced['error']}")
        else:
            print(f"  {traced['nodes']:,} nodes: tracemalloc {traced['traced_bytes_per_node']:,.0f}"
                  f" B/node allocated by the graph beyond the (kept) informer objects")
    print("Issue 4 targets")
    for storage, n, policy, r, _, _ in rows:
        print(f"  {storage:<6} {policy:<10} n={n:<7,} {r['rate']:>8,.0f} deletes/s, target >= "
              f"{TARGET_DELETES:,.0f}/s [{verdict(r['rate'], TARGET_DELETES)}]")
    print("Issue 27 targets (durable stores: the cascade >= 1/3 of the raw durable tombstone "
          "rate of the same run)")
    for storage, n, policy, r, _, tomb in rows:
        if tomb is not None:
            print(f"  {storage:<6} {policy:<10} n={n:<7,} {r['rate'] / tomb.disk:.3f}x the "
                  f"disk's ({TOMBSTONE_BATCH}/txn) [{verdict(r['rate'] / tomb.disk, 1 / 3)}]; "
                  f"{r['rate'] / tomb.workers:.3f}x {GC_WORKERS}/txn "
                  f"[{verdict(r['rate'] / tomb.workers, 1 / 3)}]")
    if memory and "rss_bytes_per_node" in memory:
        per = memory["rss_bytes_per_node"]
        print(f"  graph memory {per:,.0f} B/node (RSS, {memory['nodes']:,} nodes), target <= "
              f"{TARGET_NODE_BYTES:,.0f} B [{verdict(per, TARGET_NODE_BYTES, at_most=True)}]")
    print(f"done in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
