"""Registry throughput over durable SQLite, as ratios of raw SQLite measured in the same run.

Usage: ``python bench/bench_registry.py [--quick] [--n 10000] [--writers 64] [--runs 3]
[--dir /tmp] [--synchronous FULL|NORMAL] [--no-memory]``

Baselines (stdlib sqlite3, WAL, ``synchronous=FULL``, a plain ``t(id, v BLOB)`` table, the
same ~1.6 KB Pod JSON as the registry stores):
  * one insert per transaction (the durable single-write ceiling of this disk);
  * ``--writers`` inserts per transaction (what group commit of that many writers can at
    best reach) and 1000 per transaction (the batched ceiling).
Then ``kubegc.registry.Registry`` over ``SqliteKV`` (FULL, group commit) in a fresh database
per run: create / update (PUT) / merge patch / delete (grace 0) of N Pods from
``--writers`` concurrent coroutines, create from 1 writer, get, and list (whole
namespaces, and pages of 500). Between raw SQLite and the registry, ``SqliteKV.create``
of the same bytes from the same writers splits storage cost from registry cost, and the
same registry verbs over ``MemoryKV`` give the pure CPU ceiling of the registry.

Issue 2 target: durable registry writes >= 50% of the raw durable SQLite write rate with
group commit. Both readings are printed: against one insert per transaction, and against
``--writers`` inserts per transaction.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import orjson
from _common import Results, fresh_db, header, pod, raw_inserts, remove_db, timed, verdict

from kubegc.api.clock import RealClock
from kubegc.registry import Registry, Target
from kubegc.storage import KV, MemoryKV, SqliteKV

NAMESPACES = 10
TARGET_RATIO = 0.5
WRITE_OPS = ("create", "update (PUT)", "patch (merge)", "delete (grace 0)")


def api_options(method: object, enabled: bool) -> dict[str, Any]:
    """What ``kubegc serve`` passes on every write: a field manager (managedFields) and
    ``fieldValidation=Warn`` (upstream's default) — only the ones ``method`` accepts."""
    if not enabled:
        return {}
    wanted = {"field_manager": "bench", "field_validation": "Warn"}
    accepted = inspect.signature(method).parameters  # type: ignore[arg-type]
    return {k: v for k, v in wanted.items() if k in accepted}


def name_of(i: int) -> str:
    return f"pod-{i:07d}"


def ns_of(i: int) -> str:
    return f"bench-{i % NAMESPACES:02d}"


async def stored_pod_bytes() -> bytes:
    """The JSON a registry stores for one benchmark Pod (the raw baselines' value)."""
    reg = Registry(MemoryKV(), clock=RealClock())
    await reg.start()
    t = reg.target("", "v1", "pods", "default")
    created = await reg.create(t, pod(name_of(0), "default"))
    await reg.stop()
    created["metadata"].pop("resourceVersion", None)
    return orjson.dumps(created)


async def registry_run(kv: KV, n: int, writers: int, results: Results, label: str,
                       *, reads: bool, options: bool) -> dict[str, float]:
    """One pass of every registry verb on an empty store; returns the write rates."""
    reg = Registry(kv, clock=RealClock())
    await reg.start()
    create_opts = api_options(reg.create, options)
    update_opts = api_options(reg.update, options)
    patch_opts = api_options(reg.patch, options)
    ns_t = reg.target("", "v1", "namespaces")
    for k in range(NAMESPACES):
        await reg.create(ns_t, {"metadata": {"name": ns_of(k)}})
    targets = [reg.target("", "v1", "pods", ns_of(k)) for k in range(NAMESPACES)]
    # fresh dicts per Pod: the registry copies what it stores, the bench never copies
    templates = [pod(name_of(i), ns_of(i), index=i) for i in range(n)]
    objs: dict[int, dict[str, Any]] = {}

    def t_of(i: int) -> Target:
        return targets[i % NAMESPACES]

    async def create(i: int) -> None:
        objs[i] = await reg.create(t_of(i), templates[i], **create_opts)

    async def update(i: int) -> None:
        obj = objs[i]
        obj["metadata"]["labels"]["rev"] = "2"
        objs[i], _ = await reg.update(t_of(i), name_of(i), obj, **update_opts)

    patch_body = orjson.dumps({"metadata": {"annotations": {"bench/patched": "true"}}})

    async def patch(i: int) -> None:
        await reg.patch(t_of(i), name_of(i), "application/merge-patch+json", patch_body,
                        **patch_opts)

    async def delete(i: int) -> None:
        await reg.delete(t_of(i), name_of(i), {"gracePeriodSeconds": 0})

    rates: dict[str, float] = {}
    rates["create"] = await timed(n, writers, create)
    if reads:
        single_n = max(n // 20, 200)
        extra = [pod(name_of(n + i), ns_of(n + i), index=n + i) for i in range(single_n)]
        results.add(f"{label}: create, 1 writer", await timed(
            single_n, 1, lambda i: reg.create(t_of(n + i), extra[i], **create_opts)))
        if options:
            bare = [pod(name_of(2 * n + i), ns_of(i), index=i) for i in range(n // 2)]
            results.add(f"{label}: create without fieldManager/fieldValidation, "
                        f"{writers} writers", await timed(
                            n // 2, writers, lambda i: reg.create(t_of(i), bare[i])))
        results.add(f"{label}: get, 1 reader", await timed(
            n, 1, lambda i: reg.get(t_of(i), name_of(i))))
        per_ns = (n + single_n) // NAMESPACES
        results.add(f"{label}: list a namespace of {per_ns} (objects/s)", await timed(
            NAMESPACES, 1, lambda i: reg.list(targets[i])) * per_ns)
        all_t = reg.target("", "v1", "pods")

        async def paged(_: int) -> None:
            page = await reg.list(all_t, limit=500)
            while page["metadata"].get("continue"):
                page = await reg.list(all_t, limit=500, continue_=page["metadata"]["continue"])

        results.add(f"{label}: list all pods, pages of 500 (objects/s)",
                    await timed(1, 1, paged) * (n + single_n))
        results.add(f"{label}: list, labelSelector 1/16 of a namespace (lists/s)", await timed(
            NAMESPACES, 1, lambda i: reg.list(targets[i], label_selector="shard=s3")))
    rates["update (PUT)"] = await timed(n, writers, update)
    rates["patch (merge)"] = await timed(n, writers, patch)
    rates["delete (grace 0)"] = await timed(n, writers, delete)
    if isinstance(kv, SqliteKV):
        stats = kv.writer_stats
        results.add(f"{label}: mean writes per commit", stats.writes / max(stats.commits, 1))
    await reg.stop()
    for op, rate in rates.items():
        results.add(f"{label}: {op}, {writers} writers", rate)
    return rates


async def kv_creates(kv: KV, n: int, writers: int, value: bytes) -> float:
    async def create(i: int) -> None:
        await kv.create(f"/registry/pods/{ns_of(i)}/{name_of(i)}", value)

    return await timed(n, writers, create)


async def amain(args: argparse.Namespace) -> None:
    n, writers, runs = args.n, args.writers, args.runs
    value = await stored_pod_bytes()
    header("bench_registry", f"{n} Pods of {len(value)} B, {writers} writers, "
                             f"best of {runs} run(s), DBs in {args.dir}, writes "
                             + ("with fieldManager + fieldValidation=Warn (as over HTTP)"
                                if args.api_options else "bare (no fieldManager)"))
    started = time.perf_counter()
    results = Results()
    single_n = max(n // 5, 1000)
    for _ in range(runs):
        results.add("raw FULL, 1 insert/txn", raw_inserts(args.dir, single_n, 1, value))
        results.add(f"raw FULL, {writers} inserts/txn",
                    raw_inserts(args.dir, n, writers, value))
        results.add("raw FULL, 1000 inserts/txn", raw_inserts(args.dir, n * 2, 1000, value))
        kv = SqliteKV(fresh_db(args.dir), synchronous=args.synchronous)
        results.add(f"SqliteKV {args.synchronous}: create, {writers} writers",
                    await kv_creates(kv, n, writers, value))
        await kv.close()
        remove_db(kv.path)
        kv = SqliteKV(fresh_db(args.dir), synchronous=args.synchronous)
        await registry_run(kv, n, writers, results, f"registry/SqliteKV {args.synchronous}",
                           reads=True, options=args.api_options)
        await kv.close()
        remove_db(kv.path)
        if args.memory:
            await registry_run(MemoryKV(), n, writers, results, "registry/MemoryKV",
                               reads=False, options=args.api_options)

    raw_single = results.best("raw FULL, 1 insert/txn")
    raw_group = results.best(f"raw FULL, {writers} inserts/txn")
    durable = f"registry/SqliteKV {args.synchronous}"
    print("Raw SQLite (same ~1.6 KB value), rows/s")
    for name in ("raw FULL, 1 insert/txn", f"raw FULL, {writers} inserts/txn",
                 "raw FULL, 1000 inserts/txn"):
        print(results.line(name))
    print("Storage layer alone")
    name = f"SqliteKV {args.synchronous}: create, {writers} writers"
    best = results.best(name)
    print(results.line(name) + f"   = {best / raw_single:.2f}x raw 1/txn, "
                               f"{best / raw_group:.2f}x raw {writers}/txn")
    print(f"Registry over SqliteKV {args.synchronous} (group commit)")
    for name in results.series:
        if not name.startswith(durable):
            continue
        line = results.line(name, unit="" if "per commit" in name else "/s",
                            shown=name.removeprefix(durable + ": "))
        if any(f": {op}, " in name for op in WRITE_OPS) or "without" in name:
            best = results.best(name)
            line += (f"   = {best / raw_single:.2f}x raw 1/txn, "
                     f"{best / raw_group:.2f}x raw {writers}/txn")
        print(line)
    if args.memory:
        print("Registry over MemoryKV (CPU ceiling of the registry)")
        for name in results.series:
            if name.startswith("registry/MemoryKV"):
                print(results.line(name, shown=name.removeprefix("registry/MemoryKV: ")))
    print(f"Issue 2 target: durable registry writes >= {TARGET_RATIO:.0%} of raw durable "
          f"SQLite writes")
    for op in WRITE_OPS:
        best = results.best(f"{durable}: {op}, {writers} writers")
        r1, rg = best / raw_single, best / raw_group
        print(f"  {op:<18} {r1:6.2f}x raw 1 insert/txn [{verdict(r1, TARGET_RATIO)}]   "
              f"{rg:6.2f}x raw {writers} inserts/txn [{verdict(rg, TARGET_RATIO)}]")
    print(f"done in {time.perf_counter() - started:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="~10 s smoke run")
    parser.add_argument("--n", type=int, default=2_500, help="Pods per run")
    parser.add_argument("--writers", type=int, default=64, help="concurrent coroutines")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where the DBs go")
    parser.add_argument("--synchronous", default="FULL", choices=("FULL", "NORMAL"))
    parser.add_argument("--no-memory", dest="memory", action="store_false",
                        help="skip the MemoryKV registry pass")
    parser.add_argument("--bare", dest="api_options", action="store_false",
                        help="writes without fieldManager/fieldValidation (HTTP always "
                             "sends both)")
    args = parser.parse_args()
    if args.quick:
        args.n, args.runs = min(args.n, 1500), 1
    asyncio.run(amain(args))


if __name__ == "__main__":
    main()
