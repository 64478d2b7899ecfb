"""A million objects on one machine (issue 27): every row of the issue's table, each as a
ratio to a baseline measured in the same run and against the issue's target.

Usage: ``python bench/bench_scale.py [--objects 1000000] [--quick] [--cascades 10000,50000]
[--json]``

On ``kubegc serve`` (a subprocess: SQLite, every controller, plain HTTP, compaction every
``--compaction-interval`` seconds keeping ``--compact-min-retain`` revisions), N ConfigMaps
(~1.4 KB stored, one owner ConfigMap per 1,000) are created over HTTP with 64 requests in
flight; then, in order: memory after creating (per object, against a bare Python dict of
the same objects: the heap, judged against the target, and RSS, which also counts up to
``MMAP_SIZE`` of the database file's pages mapped into the process), a LIST of all of
them in one request (time, the server's peak RSS growth, streamed and answered whole),
restart to ready and RSS after, GC cascades of ``--cascades`` dependents and the deletion
of the namespace of the N objects (objects/s,
against the raw durable SQLite tombstone rate of the same rows, ``_common.raw_tombstones``),
then RSS and database file once a compaction window has passed after the deletion, against
an empty server's (started first, same flags) plus what is retained by design: the watch
cache's last 100,000 events, the compaction window's rows and the DeletionRecords
(``--decision-ttl``, 7 days) of what was deleted.

``--quick`` (the CI smoke, tests/bench): 20,000 objects, one cascade of 5,000.
At 1M the bench holds ~10 GB and the server ~2.5 GB: run it alone (bench/README.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import aiohttp
import orjson
from _common import (
    TOMBSTONE_BATCH,
    PeakSampler,
    Serve,
    configmap,
    header,
    raw_inserts,
    raw_tombstones,
    real_cascade,
    verdict,
)

from kubegc.registry.generic.event_ring import EventRing
from kubegc.registry.generic.watch_cache import DEFAULT_CAPACITY
from kubegc.storage.sqlite_schema import MMAP_SIZE

NS = "bench-scale"
PER_OWNER = 1000
IN_FLIGHT = 64
#: issue 27's targets
TARGET_BYTES_PER_OBJECT = 2048.0
TARGET_RESTART_AT_1M = 15.0
TARGET_TOMBSTONE_RATIO = 1 / 3
TARGET_AFTER_DELETION = 1.2  # RSS within 20% of an empty server's + the retained window
#: a streamed LIST holds a page, not the answer: its peak growth below this share of it
TARGET_LIST_GROWTH = 0.25
#: rows measured for the raw SQLite and bare-dict baselines (per-row figures are linear)
BASELINE_ROWS = 20_000


# -- baselines ------------------------------------------------------------------------------------


def dict_bytes_per_object(sample: dict[str, Any], n: int) -> float:
    """Bytes per object of a bare dict of ``n`` decoded copies of ``sample`` (distinct
    strings, as after JSON decoding), by tracemalloc."""
    encoded = [orjson.dumps({**sample, "metadata": {**sample["metadata"], "name": f"x-{i:07d}",
                                                    "uid": f"{i:036d}"}}) for i in range(n)]
    tracemalloc.start()
    held = {i: orjson.loads(b) for i, b in enumerate(encoded)}
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del held
    return size / n


def cached_event_bytes(value: bytes, n: int = 5000) -> float:
    """Bytes one event of ``value``'s size holds in the watch cache's ring (its row in the
    ring's memory maps and its columns, ``EventRing.nbytes``)."""
    ring = EventRing(n)
    for i in range(n):
        ring.append((False, True, f"/registry/core/configmaps/{NS}/x-{i}", i, value, None, i))
    return ring.nbytes / n


# -- HTTP helpers ---------------------------------------------------------------------------------


async def create_all(url: str, path: str, bodies: list[bytes]) -> float:
    """Objects/s POSTing ``bodies`` to ``path`` with ``IN_FLIGHT`` requests in flight."""
    todo = iter(bodies)
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=IN_FLIGHT)) as s:
        async def worker() -> None:
            for body in todo:
                async with s.post(url + path, data=body, headers=headers) as resp:
                    if resp.status != 201:
                        raise RuntimeError(f"create: {resp.status} {await resp.text()}")

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))
        return len(bodies) / (time.perf_counter() - start)


async def request(url: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as s, s.request(
            method, url + path, json=body, timeout=aiohttp.ClientTimeout(total=600)) as resp:
        return resp.status, await resp.json(content_type=None)


async def populate(serve: Serve, namespace: str, n: int, *, per_owner: int) -> float:
    """A namespace with ``n`` ConfigMaps, each owned by one of ``ceil(n / per_owner)``
    owner ConfigMaps (named owner-<k>); returns the dependents' create rate."""
    await request(serve.url, "POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    owners = [orjson.dumps(configmap(f"owner-{k}", namespace, size=100))
              for k in range((n + per_owner - 1) // per_owner)]
    await create_all(serve.url, path, owners)
    _, listed = await request(serve.url, "GET", path + "?labelSelector=app%3Dweb")
    uids = {o["metadata"]["name"]: o["metadata"]["uid"] for o in listed["items"]}
    bodies = [orjson.dumps(configmap(f"cm-{i:07d}", namespace, owner={
        "apiVersion": "v1", "kind": "ConfigMap", "name": f"owner-{i // per_owner}",
        "uid": uids[f"owner-{i // per_owner}"], "controller": True,
        "blockOwnerDeletion": True})) for i in range(n)]
    return await create_all(serve.url, path, bodies)


async def list_all(serve: Serve, *, whole: bool) -> dict[str, float]:
    """One LIST of every ConfigMap: seconds, bytes, and the server's peak growth of
    anonymous RSS (its heap; the pages of the memory-mapped database apart). ``whole``:
    over HTTP/1.0, which gets the whole answer in one piece (no chunks)."""
    version = aiohttp.HttpVersion10 if whole else aiohttp.HttpVersion11
    before = serve.rss_anon()
    start = time.perf_counter()
    with PeakSampler(serve.proc.pid) as sampler:
        async with aiohttp.ClientSession(version=version) as s, s.get(
                serve.url + "/api/v1/configmaps",
                timeout=aiohttp.ClientTimeout(total=900)) as resp:
            size = 0
            async for chunk in resp.content.iter_chunked(1 << 20):
                size += len(chunk)
    return {"seconds": time.perf_counter() - start, "bytes": size,
            "growth": sampler.peak - before}


async def namespace_gone(serve: Serve, namespace: str, timeout: float) -> float:
    """Seconds from the namespace's DELETE to its being gone."""
    start = time.perf_counter()
    await request(serve.url, "DELETE", f"/api/v1/namespaces/{namespace}")
    while time.perf_counter() - start < timeout:
        status, _ = await request(serve.url, "GET", f"/api/v1/namespaces/{namespace}")
        if status == 404:
            return time.perf_counter() - start
        await asyncio.sleep(0.1)
    raise TimeoutError(f"namespace {namespace} not gone after {timeout} s")


async def records(serve: Serve) -> tuple[int, int]:
    """(how many DeletionRecords, their stored bytes)."""
    count = size = 0
    token = ""
    while True:
        _, page = await request(serve.url, "GET", "/apis/kubegc.io/v1/deletionrecords?limit=5000"
                                + (f"&continue={token}" if token else ""))
        count += len(page["items"])
        size += sum(len(orjson.dumps(item)) for item in page["items"])
        token = page["metadata"].get("continue", "")
        if not token:
            return count, size


async def settled_store(serve: Serve, interval: float, timeout: float) -> int:
    """The database file's size once two compaction windows have passed and it no longer
    shrinks."""
    await asyncio.sleep(2 * interval)
    deadline = time.perf_counter() + timeout
    last = serve.store_bytes()
    while time.perf_counter() < deadline:
        await asyncio.sleep(max(1.0, interval))
        now = serve.store_bytes()
        if now == last:
            return now
        last = now
    return last


# -- the run --------------------------------------------------------------------------------------


_STARTED = time.perf_counter()


def step(what: str) -> None:
    """A progress line on stderr (a run at 1M takes most of an hour)."""
    print(f"  [{time.perf_counter() - _STARTED:7.0f} s] {what}", file=sys.stderr, flush=True)


async def empty_server(flags: list[str], timeout: float) -> dict[str, float]:
    serve = Serve(*flags, prefix="bench-scale-empty-")
    try:
        await serve.ready(timeout)
        await serve.settle(timeout)
        return {"rss": serve.rss(), "anon": serve.rss_anon(), "store": serve.store_bytes()}
    finally:
        serve.stop()


async def scale_run(n: int, cascades: list[int], flags: list[str], interval: float,
                    timeout: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    root = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    serve = Serve(*flags, root=root)
    try:
        await serve.ready(timeout)
        step(f"creating {n:,} ConfigMaps")
        out["create_per_s"] = await populate(serve, NS, n, per_owner=PER_OWNER)
        await serve.settle(timeout)
        out["rss_created"] = serve.rss()
        out["anon_created"] = serve.rss_anon()
        out["store_created"] = serve.store_bytes()
        _, one = await request(serve.url, "GET", f"/api/v1/namespaces/{NS}/configmaps/cm-0000000")
        out["sample"] = one
        step("LIST of all, streamed then whole")
        out["list_streamed"] = await list_all(serve, whole=False)
        out["list_whole"] = await list_all(serve, whole=True)
        serve.stop()
        step("restart")
        serve = Serve(*flags, root=root)
        out["restart_s"] = await serve.ready(timeout)
        out["rss_restarted"] = serve.rss()
        _, listed = await request(serve.url, "GET", "/api/v1/namespaces?limit=1")
        out["revision_restarted"] = int(listed["metadata"]["resourceVersion"])
        await serve.settle(timeout)
        out["rss_restarted_settled"] = serve.rss()
        out["cascades"] = {}
        for size in cascades:
            ns = f"cascade-{size}"
            step(f"GC cascade of {size:,} dependents")
            await populate(serve, ns, size, per_owner=size)
            await serve.settle(timeout)
            seconds = await real_cascade(serve, size, "Background", timeout, namespace=ns,
                                         owner="owner-0")
            out["cascades"][size] = size / seconds
        deleted = n + (n + PER_OWNER - 1) // PER_OWNER
        step(f"deleting the namespace of {n:,}")
        out["namespace_per_s"] = deleted / await namespace_gone(serve, NS, timeout)
        await serve.settle(timeout)
        step("after the deletion: compaction windows")
        out["store_after"] = await settled_store(serve, interval, timeout)
        out["rss_after"] = serve.rss()
        out["anon_after"] = serve.rss_anon()
        out["records"], out["records_bytes"] = await records(serve)
        _, listed = await request(serve.url, "GET", "/api/v1/namespaces?limit=1")
        out["revision"] = int(listed["metadata"]["resourceVersion"])
    finally:
        serve.stop()
        shutil.rmtree(root)
    return out


def ratios(n: int, run: dict[str, Any], base: dict[str, float], keep: int) -> dict[str, Any]:
    """Every figure as a ratio to its baseline of the same run, with the issue's verdict."""
    per_object = (run["rss_created"] - base["empty_rss"]) / n
    sample = orjson.dumps(run["sample"])
    events_kept = min(DEFAULT_CAPACITY, run["revision"] - run["revision_restarted"] + keep)
    retained_rss = events_kept * base["event_bytes"]
    retained_store = run["records_bytes"] + keep * len(sample)
    streamed, whole = run["list_streamed"], run["list_whole"]
    out: dict[str, Any] = {
        "objects": n,
        "create_per_s": run["create_per_s"],
        "create_vs_raw_inserts": run["create_per_s"] / base["raw_inserts"],
        "bytes_per_object": per_object,
        "bytes_per_object_vs_dict": per_object / base["dict_bytes"],
        "restart_s": run["restart_s"],
        "restart_s_at_1m_linear": run["restart_s"] * 1_000_000 / n,
        "restarted_bytes_per_object": (run["rss_restarted_settled"] - base["empty_rss"]) / n,
        "list_s": streamed["seconds"], "list_bytes": streamed["bytes"],
        "list_growth_vs_answer": streamed["growth"] / streamed["bytes"],
        "list_whole_growth_vs_answer": whole["growth"] / whole["bytes"],
        "cascades_vs_tombstones": {str(k): v / base["raw_tombstones"]
                                   for k, v in run["cascades"].items()},
        "cascades_per_s": {str(k): v for k, v in run["cascades"].items()},
        "namespace_per_s": run["namespace_per_s"],
        "namespace_vs_tombstones": run["namespace_per_s"] / base["raw_tombstones"],
        "rss_after_vs_empty_plus_retained": run["rss_after"] / (base["empty_rss"]
                                                                + retained_rss),
        "anon_after_vs_empty_plus_retained": run["anon_after"] / (base["empty_anon"]
                                                                  + retained_rss),
        "anon_bytes_per_object": (run["anon_created"] - base["empty_anon"]) / n,
        "store_after_vs_empty_plus_retained": run["store_after"] / (base["empty_store"]
                                                                    + retained_store),
        "store_after_vs_created": run["store_after"] / run["store_created"],
        "retained": {"watch_cache_events": events_kept, "watch_cache_bytes": retained_rss,
                     "deletion_records": run["records"], "records_bytes": run["records_bytes"],
                     "window_rows": keep},
    }
    return out


def report(r: dict[str, Any], run: dict[str, Any], base: dict[str, float]) -> None:
    mb = 1 << 20
    n = r["objects"]
    print(f"  create ({IN_FLIGHT} in flight)        {r['create_per_s']:>9,.0f}/s = "
          f"{r['create_vs_raw_inserts']:.3f}x raw durable SQLite inserts "
          f"({base['raw_inserts']:,.0f} rows/s, {TOMBSTONE_BATCH}/commit)  target — ")
    mapped = (run["rss_created"] - run["anon_created"]) / mb
    print(f"  memory after creating {n:,}  heap {run['anon_created'] / mb:,.0f} MB = "
          f"{r['anon_bytes_per_object']:,.0f} B/object = "
          f"{r['anon_bytes_per_object'] / base['dict_bytes']:.2f}x a bare dict of the same "
          f"objects ({base['dict_bytes']:,.0f} B)  target <= 2 KB "
          f"[{verdict(r['anon_bytes_per_object'], TARGET_BYTES_PER_OBJECT, at_most=True)}]")
    print(f"    RSS {run['rss_created'] / mb:,.0f} MB = {r['bytes_per_object']:,.0f} B/object "
          f"({r['bytes_per_object_vs_dict']:.2f}x the dict): the heap and {mapped:,.0f} MB of "
          f"file pages, mostly the database's, read through its memory map (the kernel's page "
          f"cache, which it reclaims under pressure, at most {MMAP_SIZE >> 20:,} MiB whatever "
          "the number of objects)")
    print(f"  restart to ready              {r['restart_s']:>9.1f} s; x{1_000_000 / n:.0f} "
          f"(linear) = {r['restart_s_at_1m_linear']:.0f} s at 1M  target <= 15 s "
          f"[{verdict(r['restart_s_at_1m_linear'], TARGET_RESTART_AT_1M, at_most=True)}]; "
          f"RSS {r['restarted_bytes_per_object']:,.0f} B/object once settled")
    s, w = run["list_streamed"], run["list_whole"]
    print(f"  LIST of all, one request      {s['seconds']:>9.1f} s, {s['bytes'] / mb:,.0f} MB;"
          f" server peak RSS growth {s['growth'] / mb:,.0f} MB = "
          f"{r['list_growth_vs_answer']:.2f}x the answer (answered whole: "
          f"{w['growth'] / mb:,.0f} MB = {r['list_whole_growth_vs_answer']:.2f}x, "
          f"{w['seconds']:.1f} s)  target streamed (<= {TARGET_LIST_GROWTH}x) "
          f"[{verdict(r['list_growth_vs_answer'], TARGET_LIST_GROWTH, at_most=True)}]")
    for size, ratio in r["cascades_vs_tombstones"].items():
        print(f"  GC cascade of {int(size):,} dependents {r['cascades_per_s'][size]:>7,.0f}/s = "
              f"{ratio:.3f}x raw durable tombstones ({base['raw_tombstones']:,.0f}/s)  "
              f"target >= 1/3 [{verdict(ratio, TARGET_TOMBSTONE_RATIO)}]")
    print(f"  namespace of {n:,} deleted    {r['namespace_per_s']:>9,.0f}/s = "
          f"{r['namespace_vs_tombstones']:.3f}x raw durable tombstones  target >= 1/3 "
          f"[{verdict(r['namespace_vs_tombstones'], TARGET_TOMBSTONE_RATIO)}]")
    kept = r["retained"]
    after = r["rss_after_vs_empty_plus_retained"]
    print(f"  after the deletion + a compaction window: RSS {run['rss_after'] / mb:,.0f} MB = "
          f"{after:.2f}x an empty server's ({base['empty_rss'] / mb:,.0f} MB) + the watch "
          f"cache's {kept['watch_cache_events']:,} events ({kept['watch_cache_bytes'] / mb:,.0f}"
          f" MB; heap alone {r['anon_after_vs_empty_plus_retained']:.2f}x)  target <= 1.2x "
          f"[{verdict(after, TARGET_AFTER_DELETION, at_most=True)}]")
    store = r["store_after_vs_empty_plus_retained"]
    print(f"    database file {run['store_after'] / mb:,.1f} MB = "
          f"{r['store_after_vs_created']:.2f}x its size with the objects, {store:.2f}x an "
          f"empty server's ({base['empty_store'] / mb:,.1f} MB) + the "
          f"{kept['deletion_records']:,} DeletionRecords ({kept['records_bytes'] / mb:,.1f} MB)"
          f" + {kept['window_rows']:,} rows of the compaction window  target <= 1.2x "
          f"[{verdict(store, TARGET_AFTER_DELETION, at_most=True)}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--objects", type=int, default=1_000_000)
    parser.add_argument("--cascades", default="10000,50000", help="dependents per GC cascade")
    parser.add_argument("--quick", action="store_true",
                        help="the CI smoke: 20,000 objects, one cascade of 5,000")
    parser.add_argument("--compaction-interval", type=float, default=5.0,
                        help="kubegc serve --etcd-compaction-interval, seconds")
    parser.add_argument("--compact-min-retain", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--dir", default=tempfile.gettempdir(), help="where raw DBs go")
    parser.add_argument("--json", action="store_true", help="also print the ratios as JSON")
    args = parser.parse_args()
    n = 20_000 if args.quick else args.objects
    cascades = [5000] if args.quick else [int(c) for c in args.cascades.split(",") if c]
    flags = ["--etcd-compaction-interval", f"{args.compaction_interval:g}",
             "--compact-min-retain", str(args.compact_min_retain)]
    header("bench_scale", f"{n:,} ConfigMaps, cascades {cascades}, kubegc serve (SQLite, "
                          f"all controllers) {' '.join(flags)}")
    value = orjson.dumps(configmap("cm-0000000", NS))
    rows = min(n, BASELINE_ROWS)
    step(f"baselines: raw durable SQLite inserts and tombstones of {rows:,} rows, an empty "
         "server")
    base: dict[str, float] = {
        "raw_inserts": raw_inserts(args.dir, rows, TOMBSTONE_BATCH, value),
        "raw_tombstones": raw_tombstones(args.dir, rows, TOMBSTONE_BATCH, value),
    }
    empty = asyncio.run(empty_server(flags, args.timeout))
    base["empty_rss"], base["empty_anon"] = empty["rss"], empty["anon"]
    base["empty_store"] = empty["store"]
    run = asyncio.run(scale_run(n, cascades, flags, args.compaction_interval, args.timeout))
    base["dict_bytes"] = dict_bytes_per_object(run["sample"], rows)
    base["event_bytes"] = cached_event_bytes(orjson.dumps(run["sample"]))
    r = ratios(n, run, base, args.compact_min_retain)
    report(r, run, base)
    if args.json:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
