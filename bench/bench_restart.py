"""Memory per object and restart to ready of ``kubegc serve`` holding N ConfigMaps
(issue 27), for this checkout and a baseline commit in the same run.

For each code version (this checkout's ``src``; with ``--baseline REV``, also that commit,
checked out with ``git worktree`` into a temporary directory): start ``kubegc serve`` (all
controllers, durable SQLite, plain HTTP) on a fresh data directory, create N ConfigMaps of
~300 bytes over HTTP (64 in flight, one owner per 1,000, as issue 27's measurement), wait
until the cluster is quiet (``/debug/kubegc/settle``) and read the process's RSS; stop it
(SIGTERM) and start it again on the same directory: time process start → ``/readyz`` 200
(the components' caches synced), then → quiet (the GC graph built too), and the RSS then;
then, where the code writes the informers' caches while it runs (``--informer-cache-interval``,
here 5 s), wait for one such write after it is quiet, kill it (SIGKILL: a crash, which
leaves the caches of that write, ``client.cache.snapshot``; older code leaves none) and
time a third start → ``/readyz`` 200 (from those caches, or every object listed).

Baselines in the same run: the RSS of the same server empty (per-object figures are
(RSS - empty RSS) / N, of the anonymous memory: the process's own, which the objects it
holds take; its RSS also counts the pages of the database file it read through SQLite's
memory map, page cache the kernel may drop, printed apart), a bare Python dict of the same
N objects decoded by orjson, and the baseline commit's figures (printed as new/old ratios).

Usage: python bench/bench_restart.py --objects 50000 200000 --baseline main~5
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import orjson
from _common import free_port, header, rss_bytes, stop_processes, wait_ready

ROOT = Path(__file__).resolve().parents[1]
PER_OWNER = 1000
IN_FLIGHT = 64


@dataclass
class Figures:
    empty_rss: int
    create_s: float
    live_rss: int
    ready_s: float
    quiet_s: float
    restart_rss: int
    live_file: int
    restart_file: int
    crash_ready_s: float


def memory(pid: int) -> tuple[int, int]:
    """(anonymous, file-backed) resident bytes of process ``pid``."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("RssAnon", "RssFile", "RssShmem"):
            fields[name] = int(value.split()[0]) * 1024
    return fields["RssAnon"], fields["RssFile"] + fields.get("RssShmem", 0)


def configmap(i: int, owner: dict[str, str] | None) -> bytes:
    meta: dict[str, object] = {"name": f"cm-{i:07d}", "namespace": "default",
                               "labels": {"app": "web", "shard": f"s{i % 16}"}}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", **owner}]
    return orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
                         "data": {"config.yaml": "x" * 200}})


def serve(src: Path, data: Path, port: int, log: Path, *extra: str
          ) -> subprocess.Popen[bytes]:
    env = {"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"}
    return subprocess.Popen(
        [sys.executable, "-m", "kubegc.cli", "serve", "--port", str(port), "--data-dir",
         str(data), "--insecure-http", *extra], env=env, stdout=log.open("wb"),
        stderr=subprocess.STDOUT)


def periodic_caches(src: Path) -> tuple[str, ...]:
    """The flag that writes the informers' caches every 5 s, if ``src`` has it."""
    options = (src / "kubegc" / "serve_options.py").read_text()
    return ("--informer-cache-interval", "5s") if "informer-cache-interval" in options else ()


async def written_after(path: Path, moment: float, timeout: float = 120) -> None:
    """Wait until ``path`` was (re)written after ``moment`` (``time.time()``)."""
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.stat().st_mtime > moment):
        if time.monotonic() > deadline:
            raise SystemExit(f"{path}: not written within {timeout} s")
        await asyncio.sleep(0.1)


async def create_all(url: str, n: int) -> float:
    path = f"{url}/api/v1/namespaces/default/configmaps"
    start = time.perf_counter()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=IN_FLIGHT)) as s:
        async def post(i: int, owner: dict[str, str] | None) -> dict[str, str]:
            async with s.post(path, data=configmap(i, owner),
                              headers={"Content-Type": "application/json"}) as resp:
                body = await resp.json()
                if resp.status != 201:
                    raise SystemExit(f"create {i}: {resp.status} {body}")
                meta = body["metadata"]
                return {"name": meta["name"], "uid": meta["uid"]}

        for base in range(0, n, PER_OWNER):
            owner = await post(base, None)
            todo = iter(range(base + 1, min(n, base + PER_OWNER)))

            async def worker(todo: Iterator[int], owner: dict[str, str]) -> None:
                for i in todo:
                    await post(i, owner)

            await asyncio.gather(*(worker(todo, owner) for _ in range(IN_FLIGHT)))
    return time.perf_counter() - start


async def ready(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    """The controllers started (their debug documents are served: ``/readyz`` can answer
    200 a moment before, while the manager stands for election) and synced (``/readyz``)."""
    await wait_ready(url, proc, log, path="/debug/kubegc/watchers", timeout=timeout)
    await wait_ready(url, proc, log, timeout=timeout)


async def settle(url: str) -> None:
    async with aiohttp.ClientSession() as s, s.get(
            f"{url}/debug/kubegc/settle?timeout=1200",
            timeout=aiohttp.ClientTimeout(total=1300)) as resp:
        if resp.status != 200:
            raise SystemExit(f"{url}: not quiet: {resp.status} {await resp.text()}")


async def measure(src: Path, n: int, work: Path) -> Figures:
    data, log = work / "data", work / "serve.log"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = serve(src, data, port, log)
    try:
        await ready(url, proc, log, 120)
        await settle(url)
        empty, _ = memory(proc.pid)
        create_s = await create_all(url, n)
        await settle(url)
        live, live_file = memory(proc.pid)
    finally:
        stop_processes([proc])
    start = time.perf_counter()
    periodic = periodic_caches(src)
    proc = serve(src, data, port, log, *periodic)
    try:
        await ready(url, proc, log, 1200)
        ready_s = time.perf_counter() - start
        await settle(url)
        quiet = time.perf_counter() - start
        restarted, restart_file = memory(proc.pid)
        if periodic:  # the caches a crash leaves: written while it ran, after it was quiet
            await written_after(data / "informer-caches.jsonl", time.time())
        proc.kill()  # a crash: no clean stop
        proc.wait()
    finally:
        stop_processes([proc])
    start = time.perf_counter()
    proc = serve(src, data, port, log)
    try:
        await ready(url, proc, log, 1200)
        crash_ready_s = time.perf_counter() - start
    finally:
        stop_processes([proc])
    return Figures(empty, create_s, live, ready_s, quiet, restarted, live_file, restart_file,
                   crash_ready_s)


def dict_baseline(n: int) -> float:
    """Bytes per object of a bare dict of the same N objects, decoded by orjson."""
    gc.collect()
    before = rss_bytes()
    held = {i: orjson.loads(configmap(i, {"name": "cm-0000000", "uid": "u" * 36}))
            for i in range(n)}
    per = (rss_bytes() - before) / n
    del held
    return per


def report(label: str, n: int, f: Figures) -> None:
    print(f"  {label:<10} create {n / f.create_s:>6,.0f}/s  live: anon {f.live_rss / 1e6:>5,.0f} MB"
          f" ({(f.live_rss - f.empty_rss) / n:>5,.0f} B/object over empty "
          f"{f.empty_rss / 1e6:,.0f} MB) + file {f.live_file / 1e6:,.0f} MB   restart: ready "
          f"{f.ready_s:>5.1f} s, quiet {f.quiet_s:>5.1f} s, anon {f.restart_rss / 1e6:>5,.0f} MB "
          f"({(f.restart_rss - f.empty_rss) / n:>5,.0f} B/object) + file "
          f"{f.restart_file / 1e6:,.0f} MB   after a crash: ready {f.crash_ready_s:>5.1f} s",
          flush=True)


def ratios(baseline: str, n: int, new: Figures, old: Figures) -> None:
    def per(rss: int, f: Figures) -> float:
        return (rss - f.empty_rss) / n

    print(f"  this/{baseline}: live B/object "
          f"{per(new.live_rss, new) / per(old.live_rss, old):.2f}x, restarted B/object "
          f"{per(new.restart_rss, new) / per(old.restart_rss, old):.2f}x, ready "
          f"{new.ready_s / old.ready_s:.2f}x, quiet {new.quiet_s / old.quiet_s:.2f}x, "
          f"ready after a crash {new.crash_ready_s / old.crash_ready_s:.2f}x", flush=True)


def checkout(rev: str, into: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(into), rev],
                   check=True, capture_output=True)
    return into / "src"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, nargs="+", default=[50_000])
    parser.add_argument("--baseline", help="a git revision to measure in the same run")
    parser.add_argument("--quick", action="store_true", help="5,000 ConfigMaps (a smoke run)")
    parser.add_argument("--alone", action="store_true",
                        help="allow more than 300,000 objects: nothing else runs on the machine")
    args = parser.parse_args()
    if args.quick:
        args.objects = [5_000]
    if max(args.objects) > 300_000 and not args.alone:
        raise SystemExit("at most 300,000 objects on a shared machine (--alone: more, with "
                         "nothing else running)")
    header("bench_restart", "kubegc serve, all controllers, SQLite FULL, N ConfigMaps")
    with tempfile.TemporaryDirectory(prefix="bench-restart-") as tmp:
        versions = {"this": ROOT / "src"}
        if args.baseline:
            versions[args.baseline] = checkout(args.baseline, Path(tmp) / "baseline")
        try:
            for n in args.objects:
                print(f"{n:,} ConfigMaps  (a bare dict of them: {dict_baseline(n):,.0f} B/object)")
                figures: dict[str, Figures] = {}
                for label, src in versions.items():
                    work = Path(tmp) / f"{label.replace('/', '_')}-{n}"
                    work.mkdir()
                    figures[label] = f = await measure(src, n, work)
                    report(label, n, f)
                if len(figures) == 2:
                    ratios(args.baseline, n, figures["this"], figures[args.baseline])
        finally:
            if args.baseline:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(Path(tmp) / "baseline")], check=False)


if __name__ == "__main__":
    asyncio.run(main())
