"""Where a process's memory goes after its objects are deleted (issue 27: nothing kept for
what is gone), in-process, so that the allocators can be asked.

Usage: ``python bench/bench_after_deletion.py [--objects 20000] [--quick]``

A ``Cluster`` (SQLite, every controller, no HTTP) gets a namespace of N ConfigMaps (~1.1
KB, one owner per 1,000), created through its client; what was built is frozen out of the
cyclic GC's sight as ``kubegc serve`` does (``cli.tune_cyclic_gc``); then the namespace is
deleted (its peak anonymous RSS sampled every 10 ms: the transients of DeleteCollection
and the cascades), the store compacted and the heap trimmed (``malloc_trim``, as the
compactor does).
At each step it prints the anonymous RSS next to what each allocator holds: glibc's
``mallinfo2`` (bytes in use, free bytes it keeps) and pymalloc's
(``sys._debugmallocstats``: arenas of 1 MiB, bytes in live blocks), and at the end the
largest tables still reachable from the cluster and the frozen objects that were cyclic
garbage (none should be).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import ctypes
import gc
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import PeakSampler, rss_anon_bytes

from kubegc.api.resources import GroupVersionResource
from kubegc.cli import tune_cyclic_gc
from kubegc.cluster import Cluster
from kubegc.cluster_config import ClusterConfig
from kubegc.storage.compactor import trim_heap

CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")
MB = 1 << 20


class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def pymalloc() -> dict[str, int]:
    """Arenas and bytes in live blocks, from ``sys._debugmallocstats`` (it writes to fd 2)."""
    saved = os.dup(2)
    with tempfile.TemporaryFile() as out:
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read().decode()
    found = {}
    for key in ("arenas allocated current", "bytes in allocated blocks"):
        match = re.search("# " + key + r"\s*=\s*([\d,]+)", text)
        found[key] = int(match.group(1).replace(",", "")) if match else 0
    return found


def report(label: str) -> dict[str, float]:
    gc.collect()
    trim_heap()
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = MallInfo2
    info = libc.mallinfo2()
    py = pymalloc()
    row = {"rss_anon": rss_anon_bytes() / MB, "glibc_in_use": info.uordblks / MB,
           "glibc_free": info.fordblks / MB, "pymalloc_arenas": py["arenas allocated current"],
           "pymalloc_live": py["bytes in allocated blocks"] / MB}
    print(f"  {label:<22} RSS anon {row['rss_anon']:6.0f} MB | glibc in use "
          f"{row['glibc_in_use']:5.0f} MB, free kept {row['glibc_free']:4.0f} MB | pymalloc "
          f"{row['pymalloc_arenas']:4.0f} arenas (MiB), live blocks {row['pymalloc_live']:4.0f}"
          " MB", flush=True)
    return row


def largest_tables(root: object, at_least: int = 64 << 10) -> list[tuple[int, int, str]]:
    """(bytes, entries, path) of the containers reachable from ``root`` above ``at_least``."""
    seen, out = {id(root)}, []
    todo: collections.deque[tuple[Any, str]] = collections.deque([(root, "cluster")])
    while todo:
        obj, path = todo.popleft()
        if isinstance(obj, (dict, set, list, collections.deque)) and \
                sys.getsizeof(obj) >= at_least:
            out.append((sys.getsizeof(obj), len(obj), path))
        if isinstance(obj, (str, bytes, int, float, type)) or (callable(obj) and \
                not hasattr(obj, "__self__")):
            continue
        if isinstance(obj, dict):
            items = [(v, f"{path}[{str(k)[:24]!r}]") for k, v in list(obj.items())[:100]]
        elif hasattr(obj, "__dict__") or hasattr(type(obj), "__slots__"):
            names = list(getattr(obj, "__dict__", {})) + list(getattr(type(obj), "__slots__", ()))
            items = [(getattr(obj, n), f"{path}.{n}") for n in names if hasattr(obj, n)]
        else:
            items = [(r, path + "[]") for r in gc.get_referents(obj)[:100]]
        for value, where in items:
            if id(value) not in seen:
                seen.add(id(value))
                todo.append((value, where))
    return sorted(out, reverse=True)


async def fill(cluster: Cluster, n: int) -> None:
    client = cluster.client
    assert client is not None
    await client.create(NAMESPACES, {"metadata": {"name": "big"}})
    owner: dict[str, Any] = {}
    for i in range(n):
        meta: dict[str, Any] = {"name": f"cm-{i:07d}", "namespace": "big",
                                "labels": {"app": "bench"}}
        if i % 1000:
            meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name":
                                        owner["metadata"]["name"],
                                        "uid": owner["metadata"]["uid"]}]
        created = await client.create(CONFIGMAPS, {"metadata": meta,
                                                   "data": {"k": "v" * 1000}}, namespace="big")
        owner = owner if i % 1000 else created


async def gone(cluster: Cluster, timeout: float = 600.0) -> None:
    client = cluster.client
    assert client is not None
    await client.delete(NAMESPACES, "big")
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        listed = await client.list(NAMESPACES)
        if all(ns["metadata"]["name"] != "big" for ns in listed["items"]):
            return
        await asyncio.sleep(0.2)
    raise TimeoutError("namespace big not gone")


async def run(n: int) -> None:
    directory = Path(tempfile.mkdtemp(prefix="bench-after-deletion-"))
    cluster = Cluster(ClusterConfig(data_dir=directory, port=0, tls=False, serve_http=False,
                                    compaction_interval=0))
    await cluster.start()
    try:
        await cluster.settle(timeout=60)
        report("empty")
        await fill(cluster, n)
        await cluster.settle(timeout=600)
        created = report(f"{n:,} created")
        tune_cyclic_gc()
        with PeakSampler(os.getpid(), period=0.01) as peak:  # the deletion's transients
            await gone(cluster)
            await cluster.settle(timeout=600)
        print(f"  peak anon RSS while deleting: {peak.peak / MB:6.0f} MB "
              f"({peak.peak / MB - created['rss_anon']:+.0f} MB on the created state's)",
              flush=True)
        assert cluster.kv is not None
        await cluster.kv.compact(cluster.kv.current_revision - 1000)
        report("deleted, compacted")
        if cluster.registry is not None:
            ring = cluster.registry.cache._ring
            print(f"  the watch cache's ring: {len(ring):,} events in {ring.chunks} memory "
                  "maps of 4 MiB (event_ring.CHUNK)")
        for size, entries, where in largest_tables(cluster)[:8]:
            print(f"    {size / 1024:7.0f} KiB {entries:>8,} entries  {where}")
        gc.unfreeze()
        print(f"  frozen objects that were cyclic garbage: {gc.collect()}")
    finally:
        await cluster.stop()
        shutil.rmtree(directory)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--objects", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="2,000 objects")
    args = parser.parse_args()
    asyncio.run(run(2000 if args.quick else args.objects))


if __name__ == "__main__":
    main()
