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
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kubegc.storage import KV, MemoryKV, SqliteKV, prefix_end

VALUE = os.urandom(1024)
NAMESPACES = 100


def key(i: int) -> str:
    return f"/registry/pods/ns-{i % NAMESPACES:03d}/pod-{i:07d}"


def fresh_db(directory: str) -> Path:
    fd, name = tempfile.mkstemp(suffix=".db", dir=directory)
    os.close(fd)
    os.unlink(name)
    return Path(name)


def remove_db(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


# -- raw SQLite ----------------------------------------------------------------------------


def raw_inserts(directory: str, synchronous: str, n: int, per_txn: int) -> float:
    """Rows per second inserting ``n`` rows, ``per_txn`` rows per transaction."""
    path = fresh_db(directory)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)")
    start = time.perf_counter()
    for base in range(0, n, per_txn):
        conn.execute("BEGIN IMMEDIATE")
        if per_txn == 1:
            conn.execute("INSERT INTO t (id, v) VALUES (?, ?)", (base + 1, VALUE))
        else:
            conn.executemany("INSERT INTO t (id, v) VALUES (?, ?)",
                             [(base + j + 1, VALUE) for j in range(per_txn)])
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    remove_db(path)
    return n / elapsed


# -- SqliteKV ------------------------------------------------------------------------------


async def timed(n: int, writers: int, op: Callable[[int], Awaitable[object]]) -> float:
    """Ops per second running ``op(0..n-1)`` from ``writers`` concurrent coroutines."""
    todo = iter(range(n))

    async def writer() -> None:
        for i in todo:
            await op(i)

    start = time.perf_counter()
    await asyncio.gather(*(writer() for _ in range(writers)))
    return n / (time.perf_counter() - start)


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
        "raw FULL, 1 insert/txn": [raw_inserts(args.dir, "FULL", single_n, 1)
                                   for _ in range(runs)],
        "raw NORMAL, 1 insert/txn": [raw_inserts(args.dir, "NORMAL", single_n, 1)
                                     for _ in range(runs)],
        "raw FULL, 1000 inserts/txn": [raw_inserts(args.dir, "FULL", n * 5, 1000)
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
