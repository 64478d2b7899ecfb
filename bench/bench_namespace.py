"""Namespace deletion throughput (issue 22): a namespace of N objects (default 1,000 and
10,000; ConfigMaps and Secrets half and half, ~1.2 KB each) deleted on an in-process kubegc
with the namespace controller on the durable SQLite store, from the namespace's DELETE to
the namespace gone, as objects/s.

Beside it, in the same run: the raw durable SQLite delete rates of the same bytes —
``SqliteKV`` CAS deletes from 20 concurrent writers (its group commit), and plain sqlite3
with one delete per ``synchronous=FULL`` commit — and the same namespace emptied item by
item (``--modes each``: list and DELETE each object, upstream's fallback where
``deletecollection`` is not served) to show what one DeleteCollection per resource buys.

Python's cyclic collector is set up as ``kubegc serve`` sets it up (``--python-gc``: its
defaults, as in a test process). ``--controllers '*'`` runs every controller, as ``kubegc
serve`` does (the garbage collector's informers and graph see every deletion, and record
nothing of the namespace controller's); ``--compaction-interval`` and ``--compaction-keep``
as bench_scale's server (``--etcd-compaction-interval 5 --compact-min-retain 1000``).

Usage: python bench/bench_namespace.py [--sizes 1000,10000] [--modes collection,each]
       [--quick] [--python-gc] [--controllers namespace|'*'] [--compaction-interval S]
       [--compaction-keep N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import _common
import orjson
from _common import configmap, fresh_db, header, raw_deletes, remove_db, timed, verdict

from kubegc.api.errors import StatusError, is_not_found
from kubegc.api.resources import GroupVersionResource
from kubegc.cli import tune_cyclic_gc
from kubegc.controllers.deletionrecords import DeletionRecordSink
from kubegc.controllers.namespace.deletion import namespaced_resources_deleter as deleter
from kubegc.controllers.namespace.namespace_controller import NamespaceController
from kubegc.storage import SqliteKV
from kubegc.testing import Cluster

CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")
SECRETS = GroupVersionResource("", "v1", "secrets")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")
NS = "bench-ns"
WRITERS = 20
#: Rows per commit of issue 27's baseline: what the disk allows (a DeleteCollection chunk
#: is 1,000 deletes, which the store's group commit writes together).
TOMBSTONE_BATCH = 1000
TARGET_RATIO = 1 / 3


def secret(name: str, size: int = 1200) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": NS},
            "type": "Opaque", "stringData": {"token": "x" * size}}


async def kv_deletes(n: int, value: bytes, directory: str) -> float:
    """Deletes/s of ``n`` keys with CAS from ``WRITERS`` coroutines on a fresh SqliteKV."""
    kv = SqliteKV(fresh_db(directory))
    revs: dict[int, int] = {}

    async def create(i: int) -> None:
        revs[i] = await kv.create(f"/registry/configmaps/{NS}/o-{i:07d}", value)

    await timed(n, 64, create)
    rate = await timed(n, WRITERS, lambda i: kv.delete(
        f"/registry/configmaps/{NS}/o-{i:07d}", expected_mod_revision=revs[i]))
    await kv.close()
    remove_db(kv.path)
    return rate


async def _item_by_item(self: Any, gvr: Any, namespace: str, deleted_at: Any) -> None:
    """``--modes each``: no DeleteCollection, as where the verb is not served."""
    return None


async def empty_namespace(n: int, mode: str, timeout: float, *, serve_gc: bool = True,
                          controllers: tuple[str, ...] = ("namespace",),
                          compaction_interval: float | None = None,
                          compaction_keep: int | None = None) -> dict[str, float]:
    """Seconds from the namespace's DELETE to the namespace gone. ``serve_gc``: Python's
    cyclic collector set up as ``kubegc serve`` sets it up (``tune_cyclic_gc``, after the
    objects are made), else Python's defaults (a test process's)."""
    original = deleter.NamespacedResourcesDeleter._delete_collection
    if mode == "each":
        deleter.NamespacedResourcesDeleter._delete_collection = _item_by_item  # type: ignore[method-assign]
    data_dir = Path(tempfile.mkdtemp(prefix="bench-ns-"))
    try:
        cluster = Cluster(controllers=controllers, storage="sqlite", data_dir=data_dir)
        if compaction_interval is not None:
            cluster.config.compaction_interval = compaction_interval
        if compaction_keep is not None:
            cluster.config.compaction_keep = compaction_keep
        async with cluster:
            client = cluster.client
            await client.create(NAMESPACES, {"metadata": {"name": NS}})
            maps = [configmap(f"cm-{i:07d}", NS) for i in range(n // 2)]
            secrets = [secret(f"s-{i:07d}") for i in range(n - n // 2)]
            await timed(len(maps), 64, lambda i: client.create(CONFIGMAPS, maps[i],
                                                                  namespace=NS))
            await timed(len(secrets), 64, lambda i: client.create(SECRETS, secrets[i],
                                                                     namespace=NS))
            await cluster.asettle(timeout)
            thresholds = gc.get_threshold()
            if serve_gc:
                tune_cyclic_gc()
            cpu_start = time.process_time()
            start = time.perf_counter()
            await client.delete(NAMESPACES, NS)
            deadline = start + timeout
            while time.perf_counter() < deadline:
                try:
                    await client.get(NAMESPACES, NS)
                except StatusError as e:
                    if is_not_found(e):
                        break
                    raise
                await asyncio.sleep(0.005)
            elapsed = time.perf_counter() - start
            cpu = time.process_time() - cpu_start
            # the DeletionRecords are queued as each DeleteCollection returns and written
            # in batches meanwhile: when are they all durable?
            sink = _records_sink(cluster)
            while sink is not None and not sink.is_idle() and time.perf_counter() < deadline:
                await asyncio.sleep(0.005)
            records = time.perf_counter() - start
            cpu_records = time.process_time() - cpu_start
            if serve_gc:
                gc.set_threshold(*thresholds)
                gc.unfreeze()
    finally:
        deleter.NamespacedResourcesDeleter._delete_collection = original  # type: ignore[method-assign]
        shutil.rmtree(data_dir)
    return {"seconds": elapsed, "rate": n / elapsed, "complete": float(elapsed < timeout),
            "records_s": records, "cpu_us": cpu / n * 1e6,
            "cpu_records_us": cpu_records / n * 1e6}


def _records_sink(cluster: Cluster) -> DeletionRecordSink | None:
    """The namespace controller's DeletionRecord sink."""
    manager = cluster.cluster.controller_manager
    for controller in manager.controllers if manager is not None else []:
        if isinstance(controller, NamespaceController):
            sink = controller.deleter.deletions
            return sink if isinstance(sink, DeletionRecordSink) else None
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="objects per namespace")
    parser.add_argument("--modes", default="collection,each",
                        help="collection: one DeleteCollection per resource; each: list "
                             "and delete item by item")
    parser.add_argument("--quick", action="store_true", help="1,000 objects only")
    parser.add_argument("--python-gc", action="store_true",
                        help="Python's default cyclic-GC settings (a test process's) instead "
                             "of kubegc serve's")
    parser.add_argument("--controllers", default="namespace",
                        help="the controllers running ('*': all, as kubegc serve)")
    parser.add_argument("--compaction-interval", type=float, default=None,
                        help="seconds between compactions (default: the cluster's)")
    parser.add_argument("--compaction-keep", type=int, default=None,
                        help="revisions a compaction keeps (default: the cluster's)")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where raw DBs go")
    args = parser.parse_args()
    sizes = [1000] if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    header("bench_namespace", f"objects {sizes}, modes {modes}, durable SQLite, controllers "
           f"{args.controllers}, compaction interval {args.compaction_interval or 'default'} keep "
           f"{args.compaction_keep or 'default'}")
    value = orjson.dumps(configmap("cm-0000000", NS))
    for n in sizes:
        raw = asyncio.run(kv_deletes(n, value, args.dir))
        plain = raw_deletes(args.dir, min(n, 5000), 1, value)
        print(f"  n={n:<7,} raw SqliteKV CAS deletes, {WRITERS} writers: {raw:,.0f}/s; "
              f"plain SQLite FULL 1 delete/txn: {plain:,.0f}/s", flush=True)
        for mode in modes:
            before = _common.raw_tombstones(args.dir, n, TOMBSTONE_BATCH, value)
            r = asyncio.run(empty_namespace(
                n, mode, args.timeout, serve_gc=not args.python_gc,
                controllers=tuple(c for c in args.controllers.split(",") if c),
                compaction_interval=args.compaction_interval,
                compaction_keep=args.compaction_keep))
            # the disk drifts on a shared machine: the baseline around the deletion
            tomb = (before + _common.raw_tombstones(args.dir, n, TOMBSTONE_BATCH, value)) / 2
            print(f"  n={n:<7,} {mode:<10} namespace gone in {r['seconds']:6.2f} s = "
                  f"{r['rate']:>7,.0f} objects/s = {r['rate'] / raw:.3f}x SqliteKV raw, "
                  f"{r['rate'] / plain:.2f}x plain 1/txn, {r['rate'] / tomb:.3f}x raw durable "
                  f"tombstones ({tomb:,.0f}/s at {TOMBSTONE_BATCH}/txn) "
                  f"[issue 27, >= 1/3: {verdict(r['rate'] / tomb, TARGET_RATIO)}]; "
                  f"every DeletionRecord durable after {r['records_s']:.2f} s = "
                  f"{n / r['records_s'] / tomb:.3f}x; CPU per object {r['cpu_us']:.0f} us "
                  f"to the namespace gone, {r['cpu_records_us']:.0f} us with its record"
                  + ("" if r["complete"] else "  INCOMPLETE (timeout)"), flush=True)


if __name__ == "__main__":
    main()
