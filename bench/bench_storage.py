"""Storage throughput: raw durable SQLite next to SqliteKV, measured in the same run.

Usage: ``python bench/bench_storage.py [--n 20000] [--runs 3] [--dir /tmp]``

Raw SQLite (stdlib ``sqlite3``, WAL, 1 KiB BLOBs) gives the ceilings of this disk:
  * one insert per transaction (``BEGIN IMMEDIATE; INSERT; COMMIT``), FULL and NORMAL;
  * 1000 inserts per transaction (FULL).
SqliteKV then runs creates, CAS updates, deletes (1 and 64 concurrent writers), gets and
ranges on a fresh database per run, and each write rate is printed as a ratio of the raw
rates. Every figure is the best of ``--runs`` runs, with the median beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _common import fresh_db, raw_inserts, remove_db, timed

from kubegc.storage import KV, MemoryKV, SqliteKV, prefix_end

VALUE = os.urandom(1024)
NAMESPACES = 100


def key(i: int) -> str:
    return f"/registry/pods/ns-{i % NAMESPACES:03d}/pod-{i:07d}"


async def kv_run(kv: KV, n: int, single_n: int) -> dict[str, float]:
    """One run of every SqliteKV/MemoryKV measurement on an empty store."""
    rates: dict[str, float] = {}
    revs: dict[int, int] = {}

    async def create(i: int) -> None:
        revs[i] = await kv.create(key(i), VALUE)

    async def update(i: int) -> None:
        revs[i] = await kv.update(key(i), VALUE, expected_mod_revision=revs[i])

    async def delete(i: int) -> None:
        await kv.delete(key(i), expected_mod_revision=revs[i])

    rates["create, 1 writer"] = await timed(single_n, 1, lambda i: create(n + i))
    rates["create, 64 writers"] = await timed(n, 64, create)
    rates["update (CAS), 1 writer"] = await timed(single_n, 1, update)
    rates["update (CAS), 64 writers"] = await timed(n, 64, update)
    rates["get"] = await timed(n, 1, lambda i: kv.get(key(i)))
    rates["range 1 namespace (keys/s)"] = await timed(
        NAMESPACES, 1, lambda i: kv.range(f"/registry/pods/ns-{i:03d}/", prefix=True),
    ) * (n + single_n) / NAMESPACES
    rates["range all pods (keys/s)"] = await timed(
        1, 1, lambda i: kv.range("/registry/pods/", prefix=True)) * (n + single_n)
    rates["range all pods, pages of 500 (keys/s)"] = await timed(
        1, 1, lambda i: page_all(kv)) * (n + single_n)
    rates["delete (CAS), 64 writers"] = await timed(n, 64, delete)
    return rates


async def page_all(kv: KV) -> None:
    prefix = "/registry/pods/"
    page = await kv.range(prefix, prefix=True, limit=500)
    while page.more:
        page = await kv.range(page.kvs[-1].key + "\x00", end=prefix_end(prefix),
                              revision=page.revision, limit=500)


async def kv_runs(make: Callable[[], KV], n: int, single_n: int, runs: int,
                  ) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {}
    for _ in range(runs):
        kv = make()
        for name, rate in (await kv_run(kv, n, single_n)).items():
            results.setdefault(name, []).append(rate)
        await kv.close()
        if isinstance(kv, SqliteKV):
            remove_db(kv.path)
    return results


# -- report --------------------------------------------------------------------------------


def fmt(rates: list[float]) -> str:
    return f"{max(rates):>10,.0f}/s  (median {statistics.median(rates):,.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="keys per concurrent test")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where the DBs go")
    args = parser.parse_args()
    n, runs, single_n = args.n, args.runs, max(args.n // 10, 500)
    started = time.perf_counter()
    print(f"SQLite {sqlite3.sqlite_version}, Python {sys.version.split()[0]}, "
          f"1 KiB values, {n} keys, best of {runs} runs, DBs in {args.dir}")

    raw = {
        "raw FULL, 1 insert/txn": [raw_inserts(args.dir, single_n, 1, VALUE, "FULL")
                                   for _ in range(runs)],
        "raw NORMAL, 1 insert/txn": [raw_inserts(args.dir, single_n, 1, VALUE, "NORMAL")
                                     for _ in range(runs)],
        "raw FULL, 1000 inserts/txn": [raw_inserts(args.dir, n * 5, 1000, VALUE, "FULL")
                                       for _ in range(runs)],
    }
    for name, rates in raw.items():
        print(f"  {name:<42}{fmt(rates)}")
    raw_single = max(raw["raw FULL, 1 insert/txn"])
    raw_batched = max(raw["raw FULL, 1000 inserts/txn"])

    for label, make in (
        ("SqliteKV FULL", lambda: SqliteKV(fresh_db(args.dir))),
        ("SqliteKV NORMAL", lambda: SqliteKV(fresh_db(args.dir), synchronous="NORMAL")),
        ("MemoryKV", MemoryKV),
    ):
        results = asyncio.run(kv_runs(make, n, single_n, runs))
        print(label)
        for name, rates in results.items():
            ratio = ""
            if not name.startswith(("get", "range")) and label != "MemoryKV":
                ratio = (f"  = {max(rates) / raw_single:.1f}x raw 1-insert FULL, "
                         f"{max(rates) / raw_batched:.0%} of raw batched FULL")
            print(f"  {name:<42}{fmt(rates)}{ratio}")
    print(f"done in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
