"""HTTP throughput of ``kubegc serve`` next to kmock (the Python Kubernetes mock server),
both measured in the same run with the same requests; prints rates and kubegc/kmock ratios.

Usage: ``python bench/bench_http.py [--quick] [--duration 5] [--connections 50]
[--watchers 100] [--watch-events 300] [--servers kubegc-sqlite,kubegc-memory,kmock]``

Each server runs as its own subprocess pinned to CPU 0 (``taskset``); the load generator
(``wrk -t1``, else an aiohttp client) and the watch client run in other processes pinned to
CPU 1. Servers:
  * ``kubegc-sqlite``: ``kubegc serve --storage sqlite --insecure-http --controllers ''``
    (durable: SQLite WAL, synchronous=FULL, group commit) — what the targets are about;
  * ``kubegc-memory``: the same with ``--storage memory``;
  * ``kmock``: ``kmock.KubernetesEmulator`` behind ``kmock.Server`` (aiohttp).
Requests (identical for every server):
  * create: POST a ~1.6 KB Pod with a unique name (wrk Lua), 201 expected; "create,
    distinct" gives every Pod a different spec too (an env value), so nothing computed
    from one spec (kubegc memoizes managedFields and field checks by spec) is reused;
  * get: GET one Pod; list: GET a namespace of 100 Pods;
  * watch fan-out: ``--watchers`` watches on one namespace while a writer POSTs
    ``--watch-events`` Pods (32 in flight); events/s = events delivered to all watchers /
    time from the first POST to the last watcher's last event.
Issue 3 targets (durable store, this 2-core machine): creates >= 6k/s, gets >= 10k/s,
>= 2x kmock for the same requests, 100 watchers fed >= 100k events/s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import aiohttp
import orjson
from _common import (
    child_env,
    cpu_seconds,
    free_port,
    header,
    pinned,
    pod,
    verdict,
    wait_ready,
)

HERE = Path(__file__).resolve()
SERVER_CPU, CLIENT_CPU = 0, 1
NS, NS_LIST, NS_WATCH = "bench", "bench-list", "bench-watch"
LIST_SIZE = 100
ALL_SERVERS = ("kubegc-sqlite", "kubegc-memory", "kmock")
#: "create, distinct" holds the same target: Pods whose specs all differ.
TARGETS = {"create": 6_000.0, "create, distinct": 6_000.0, "get": 10_000.0}
TARGET_VS_KMOCK = 2.0
TARGET_WATCH_EVENTS = 100_000.0


# -- servers --------------------------------------------------------------------------------


@dataclass
class Server:
    name: str
    proc: subprocess.Popen[bytes]
    url: str
    tmp: tempfile.TemporaryDirectory[str]
    log: Path

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.tmp.cleanup()

    @property
    def pid(self) -> int:
        # taskset execs the program, so the Popen pid is the server's pid
        return self.proc.pid


def start_server(name: str) -> Server:
    port = free_port()
    tmp = tempfile.TemporaryDirectory(prefix=f"bench-{name}-")
    log = Path(tmp.name) / "server.log"
    if name == "kmock":
        argv = [sys.executable, str(HERE), "--serve-kmock", str(port)]
    else:
        storage = name.removeprefix("kubegc-")
        argv = [sys.executable, "-m", "kubegc.cli", "serve", "--storage", storage,
                "--insecure-http", "--controllers", "", "--host", "127.0.0.1",
                "--port", str(port), "--data-dir", str(Path(tmp.name) / "data")]
    with log.open("wb") as out:
        proc = subprocess.Popen(pinned(SERVER_CPU, argv), stdout=out, stderr=subprocess.STDOUT,
                                env=child_env())
    server = Server(name, proc, f"http://127.0.0.1:{port}", tmp, log)
    asyncio.run(wait_ready(server.url, server.proc, server.log, path="/version"))
    return server


def serve_kmock(port: int) -> None:
    """Child mode: kmock's Kubernetes emulator on ``port`` until SIGTERM."""
    import kmock

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with kmock.KubernetesEmulator() as emulator, kmock.Server(
                emulator, host="127.0.0.1", port=port):
            await stop.wait()

    asyncio.run(run())


# -- setup over HTTP ----------------------------------------------------------------------------


def pod_body(name: str, namespace: str) -> bytes:
    return orjson.dumps(pod(name, namespace))


async def setup(url: str) -> list[str]:
    """Namespaces, one Pod to GET and LIST_SIZE Pods to LIST (same for every server);
    returns notes on what the server could not do."""
    notes: list[str] = []
    async with aiohttp.ClientSession(headers={"Content-Type": "application/json"}) as s:
        for ns in (NS, NS_LIST, NS_WATCH):
            async with s.post(f"{url}/api/v1/namespaces",
                              data=orjson.dumps({"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": ns}})) as r:
                await r.read()
                if r.status >= 300 and not notes:
                    notes.append(f"POST /api/v1/namespaces answered {r.status} (namespaces "
                                 "cannot be created; the namespaced requests work without)")
        async with s.post(f"{url}/api/v1/namespaces/{NS}/pods",
                          data=pod_body("target", NS)) as r:
            if r.status >= 300:
                raise RuntimeError(f"setup create failed: {r.status} {await r.text()}")
        for i in range(LIST_SIZE):
            async with s.post(f"{url}/api/v1/namespaces/{NS_LIST}/pods",
                              data=pod_body(f"item-{i:04d}", NS_LIST)) as r:
                await r.read()
    return notes


# -- load generation ----------------------------------------------------------------------------


@dataclass
class Load:
    rate: float
    errors: int = 0
    p50_ms: float | None = None
    p99_ms: float | None = None
    note: str = ""
    requests: int = 0  # completed (wrk); 0 when unknown
    server_cpu_us: float | None = None  # server CPU (all threads) per completed request


_LUA_POST = """
local counter = 0
local template = [==[%s]==]
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  counter = counter + 1
  local body = string.gsub(template, "__NAME__", "%s" .. counter)
  return wrk.format(nil, nil, nil, body)
end
"""


def wrk_latency(text: str, pct: str) -> float | None:
    m = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
    if not m:
        return None
    value, unit = float(m.group(1)), m.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


def run_wrk(url: str, duration: float, connections: int, lua: Path | None = None) -> Load:
    argv = ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(duration))}s", "--latency"]
    if lua is not None:
        argv += ["-s", str(lua)]
    out = subprocess.run(pinned(CLIENT_CPU, [*argv, url]), capture_output=True, text=True,
                         check=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    done = re.search(r"(\d+) requests in", out)
    errors = 0
    m = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    if m:
        errors += int(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if m:
        errors += sum(int(g) for g in m.groups())
    return Load(rate, errors, wrk_latency(out, "50"), wrk_latency(out, "99"),
                requests=int(done.group(1)) if done else 0)


async def aiohttp_load(url: str, duration: float, connections: int, method: str,
                       prefix: str, namespace: str) -> dict[str, Any]:
    """Fallback load generator (no wrk): ``connections`` coroutines for ``duration`` s."""
    done = 0
    errors = 0
    stop_at = time.perf_counter() + duration
    counter = iter(range(10**9))
    conn = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=conn,
                                     headers={"Content-Type": "application/json"}) as s:
        async def worker() -> None:
            nonlocal done, errors
            while time.perf_counter() < stop_at:
                if method == "POST":
                    body = pod_body(f"{prefix}{next(counter)}", namespace)
                    async with s.post(url, data=body) as r:
                        await r.read()
                        ok = r.status < 300
                else:
                    async with s.get(url) as r:
                        await r.read()
                        ok = r.status < 300
                done += 1
                errors += not ok

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(connections)))
        return {"rate": done / (time.perf_counter() - start), "errors": errors,
                "requests": done}


def load(url: str, path: str, duration: float, connections: int, *, method: str = "GET",
         prefix: str = "p", namespace: str = NS, tmp: Path, pid: int,
         distinct: bool = False) -> Load:
    """One load test; ``distinct`` POSTs give every Pod a different spec (an env value),
    so that nothing computed from one spec can be reused for the next."""
    target = url + path
    cpu0 = cpu_seconds(pid)
    if shutil.which("wrk"):
        lua = None
        if method == "POST":
            lua = tmp / f"post-{prefix}.lua"
            body = pod("__NAME__", namespace)
            if distinct:
                body["spec"]["containers"][0]["env"].append(
                    {"name": "REQUEST_ID", "value": "__NAME__"})
            lua.write_text(_LUA_POST % (orjson.dumps(body).decode(), prefix))
        result = run_wrk(target, duration, connections, lua)
    else:
        argv = [sys.executable, str(HERE), "--load-client",
                json.dumps({"url": target, "duration": duration, "connections": connections,
                            "method": method, "prefix": prefix, "namespace": namespace})]
        out = subprocess.run(pinned(CLIENT_CPU, argv), capture_output=True, text=True,
                             check=True, env=child_env()).stdout
        parsed = json.loads(out.strip().splitlines()[-1])
        result = Load(parsed["rate"], parsed["errors"], note="aiohttp client (client-bound)",
                      requests=parsed.get("requests", 0))
    if result.requests:
        result.server_cpu_us = 1e6 * (cpu_seconds(pid) - cpu0) / result.requests
    return result


# -- watch fan-out --------------------------------------------------------------------------------


async def watch_client(url: str, namespace: str, watchers: int, events: int,
                       timeout: float) -> dict[str, Any]:
    """``watchers`` watches on ``namespace``, then up to ``events`` creates (32 in flight,
    for at most ``timeout``/2 s); counts the delivered events (newline-delimited) of every
    watcher until each has them all or ``timeout`` s have passed."""
    counts = [0] * watchers
    last = [0.0] * watchers
    established = asyncio.Semaphore(0)
    conn = aiohttp.TCPConnector(limit=0)
    timeout_cfg = aiohttp.ClientTimeout(total=None, sock_read=None)
    async with aiohttp.ClientSession(connector=conn, timeout=timeout_cfg) as s:
        async def watcher(k: int) -> None:
            async with s.get(f"{url}/api/v1/namespaces/{namespace}/pods",
                             params={"watch": "true"}) as resp:
                established.release()
                if resp.status != 200:
                    raise RuntimeError(f"watch failed: {resp.status} {await resp.text()}")
                async for chunk in resp.content.iter_any():
                    counts[k] += chunk.count(b"\n")
                    last[k] = time.perf_counter()

        tasks = [asyncio.create_task(watcher(k)) for k in range(watchers)]
        for _ in range(watchers):
            await asyncio.wait_for(established.acquire(), 30)
        await asyncio.sleep(0.5)  # kmock subscribes after sending the headers
        names = iter(range(events))
        created = 0
        cpu0 = cpu_seconds()
        start = time.perf_counter()
        write_deadline = start + timeout / 2

        async def writer() -> None:
            nonlocal created
            for i in names:
                if time.perf_counter() > write_deadline:
                    return
                async with s.post(f"{url}/api/v1/namespaces/{namespace}/pods",
                                  data=pod_body(f"w-{i:06d}", namespace),
                                  headers={"Content-Type": "application/json"}) as r:
                    await r.read()
                    created += r.status < 300

        await asyncio.gather(*(writer() for _ in range(32)))
        writes_done = time.perf_counter()
        deadline = start + timeout
        while min(counts) < created and time.perf_counter() < deadline:
            await asyncio.sleep(0.01)
        complete = min(counts) >= created
        end = max(last) if complete else time.perf_counter()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    delivered = sum(min(c, created) for c in counts)
    return {
        "delivered": delivered, "expected": watchers * created, "complete": complete,
        "seconds": end - start, "events_per_s": delivered / (end - start),
        "creates_per_s": created / (writes_done - start),
        "client_cpu_s": cpu_seconds() - cpu0,
    }


async def replay_client(url: str, namespace: str, watchers: int, events: int,
                        timeout: float) -> dict[str, Any]:
    """``events`` Pods created first, then ``watchers`` watches from the resourceVersion
    before them: each replays them all (kubegc: from the watch cache; kmock: as its
    initial ADDED events). No writer competes, so this is the delivery rate alone."""
    counts = [0] * watchers
    last = [0.0] * watchers
    conn = aiohttp.TCPConnector(limit=0)
    timeout_cfg = aiohttp.ClientTimeout(total=None, sock_read=None)
    base = f"{url}/api/v1/namespaces/{namespace}/pods"
    async with aiohttp.ClientSession(connector=conn, timeout=timeout_cfg) as s:
        async with s.get(base) as r:
            rv = str((await r.json(content_type=None)).get("metadata", {})
                     .get("resourceVersion", ""))
        names = iter(range(events))
        write_deadline = time.perf_counter() + timeout / 2
        created = 0

        async def writer() -> None:
            nonlocal created
            for i in names:
                if time.perf_counter() > write_deadline:
                    return
                async with s.post(base, data=pod_body(f"r-{i:06d}", namespace),
                                  headers={"Content-Type": "application/json"}) as r:
                    await r.read()
                    created += r.status < 300

        await asyncio.gather(*(writer() for _ in range(32)))
        events = created
        params = {"watch": "true"}
        if rv.isdigit():
            params["resourceVersion"] = rv

        async def watcher(k: int) -> None:
            async with s.get(base, params=params) as resp:
                if resp.status != 200:
                    raise RuntimeError(f"watch failed: {resp.status} {await resp.text()}")
                async for chunk in resp.content.iter_any():
                    counts[k] += chunk.count(b"\n")
                    last[k] = time.perf_counter()
                    if counts[k] >= events:
                        return

        cpu0 = cpu_seconds()
        start = time.perf_counter()
        tasks = [asyncio.create_task(watcher(k)) for k in range(watchers)]
        _, pending = await asyncio.wait(tasks, timeout=timeout)
        for t in pending:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        complete = not pending and all(c >= events for c in counts)
        end = max(last) if complete else time.perf_counter()
    delivered = sum(min(c, events) for c in counts)
    return {
        "delivered": delivered, "expected": watchers * events, "complete": complete,
        "seconds": end - start, "events_per_s": delivered / (end - start),
        "client_cpu_s": cpu_seconds() - cpu0,
    }


def watch_fanout(server: Server, watchers: int, events: int, timeout: float, *,
                 mode: str = "live") -> dict[str, Any]:
    argv = [sys.executable, str(HERE), "--watch-client",
            json.dumps({"url": server.url, "namespace": NS_WATCH, "watchers": watchers,
                        "events": events, "timeout": timeout, "mode": mode})]
    cpu0 = cpu_seconds(server.pid)
    proc = subprocess.run(pinned(CLIENT_CPU, argv), capture_output=True, text=True,
                          env=child_env())
    server_cpu = cpu_seconds(server.pid) - cpu0
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed"}
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["server_cpu_s"] = server_cpu
    return result


# -- main -------------------------------------------------------------------------------------


@dataclass
class ServerResults:
    loads: dict[str, Load] = field(default_factory=dict)
    watch: dict[str, dict[str, Any]] = field(default_factory=dict)


class Servers:
    """Hands out a server for each test: a fresh process after the same setup (default),
    or one shared process (``reuse``, for ``--quick``)."""

    def __init__(self, name: str, reuse: bool) -> None:
        self.name = name
        self.reuse = reuse
        self.shared: Server | None = None
        self.noted = False

    def get(self) -> Server:
        if self.shared is not None:
            return self.shared
        server = start_server(self.name)
        try:
            notes = asyncio.run(setup(server.url))  # 100+ requests: the warm-up too
        except BaseException:
            server.stop()
            raise
        if notes and not self.noted:
            self.noted = True
            print(f"  {self.name:<14} note: {'; '.join(notes)}", flush=True)
        if self.reuse:
            self.shared = server
        return server

    def done(self, server: Server) -> None:
        if not self.reuse:
            server.stop()

    def close(self) -> None:
        if self.shared is not None:
            self.shared.stop()
            self.shared = None


def bench_server(name: str, args: argparse.Namespace) -> ServerResults:
    """Every test on a fresh server process unless ``--reuse-server`` (kmock slows down
    with every request it has logged, and creates grow the store)."""
    out = ServerResults()
    plan = [
        ("get", f"/api/v1/namespaces/{NS}/pods/target", "GET"),
        (f"list ({LIST_SIZE} pods)", f"/api/v1/namespaces/{NS_LIST}/pods", "GET"),
        ("create", f"/api/v1/namespaces/{NS}/pods", "POST"),
        ("create, distinct", f"/api/v1/namespaces/{NS}/pods", "POST"),
    ]
    servers = Servers(name, args.reuse_server)
    try:
        for label, path, method in plan:
            server = servers.get()
            try:
                result = load(server.url, path, args.duration, args.connections,
                              method=method, prefix="d" if "distinct" in label else "m",
                              tmp=Path(server.tmp.name), pid=server.pid,
                              distinct="distinct" in label)
            finally:
                servers.done(server)
            out.loads[label] = result
            print(f"  {name:<14} {label:<17} {result.rate:>9,.0f}/s  errors {result.errors}"
                  + (f"  p50 {result.p50_ms:.2f} ms p99 {result.p99_ms:.2f} ms"
                     if result.p50_ms and result.p99_ms else "")
                  + (f"  server {result.server_cpu_us:.0f} CPU us/req"
                     f" (a whole core: {1e6 / result.server_cpu_us:,.0f}/s)"
                     if result.server_cpu_us else "")
                  + (f"  [{result.note}]" if result.note else ""), flush=True)
        for mode in ("live", "replay"):
            server = servers.get()
            try:
                w = watch_fanout(server, args.watchers, args.watch_events, args.watch_timeout,
                                 mode=mode)
            finally:
                servers.done(server)
            out.watch[mode] = w
            print_watch(name, mode, w, args.watchers)
    finally:
        servers.close()
    return out


def print_watch(name: str, mode: str, w: dict[str, Any], watchers: int) -> None:
    label = f"watch, {mode}"
    if "error" in w:
        print(f"  {name:<14} {label:<17} FAILED: {w['error']}", flush=True)
        return
    line = (f"  {name:<14} {label:<17} {w['events_per_s']:>9,.0f} events/s "
            f"({w['delivered']:,}/{w['expected']:,} delivered"
            f"{'' if w['complete'] else ', INCOMPLETE'} in {w['seconds']:.2f} s; ")
    if mode == "live":
        line += (f"writer {w['creates_per_s']:,.0f} creates/s, so at most "
                 f"{w['creates_per_s'] * watchers:,.0f} events/s; ")
    line += (f"server {1e6 * w['server_cpu_s'] / max(w['delivered'], 1):.1f} CPU us/event"
             f"{' incl. creates' if mode == 'live' else ''}; client CPU "
             f"{w['client_cpu_s']:.1f} s)")
    print(line, flush=True)


def _rate(results: ServerResults, row: str) -> tuple[float, str]:
    """(rate, mark): a watch row's rate counts delivered events even if incomplete ("*")."""
    if row.startswith("watch, "):
        w = results.watch.get(row.removeprefix("watch, "), {})
        if "events_per_s" not in w:
            return 0.0, ""
        return float(w["events_per_s"]), "" if w.get("complete") else "*"
    return results.loads[row].rate, ""


def report(results: dict[str, ServerResults], args: argparse.Namespace) -> None:
    names = list(results)
    kmock = results.get("kmock")
    print("\nSummary (requests/s; watch rows: events/s summed over all watchers; "
          "* = not every event arrived before the timeout)")
    print(f"  {'':<17}" + "".join(f"{n:>16}" for n in names)
          + ("".join(f"{n + '/kmock':>22}" for n in names if n != "kmock") if kmock else ""))
    rows = [*next(iter(results.values())).loads, "watch, live", "watch, replay"]
    for row in rows:
        rates = [_rate(results[n], row) for n in names]
        line = f"  {row:<17}" + "".join(
            f"{v:>15,.0f}{mark or ' '}" if v else f"{'n/a':>16}" for v, mark in rates)
        if kmock:
            k = rates[names.index("kmock")][0]
            for n, (v, _) in zip(names, rates, strict=True):
                if n != "kmock":
                    line += f"{v / k:>21.2f}x" if k and v else f"{'n/a':>22}"
        print(line)
    if kmock:
        for mode, w in kmock.watch.items():
            if "error" in w:
                print(f"  kmock watch ({mode}) failed: {w['error']}")
    durable = results.get("kubegc-sqlite")
    if durable is None:
        return
    print("Issue 3 targets (kubegc-sqlite, durable)")
    for row, target in TARGETS.items():
        rate = durable.loads[row].rate
        line = f"  {row:<17} {rate:>9,.0f}/s  target >= {target:,.0f}/s [{verdict(rate, target)}]"
        cpu = durable.loads[row].server_cpu_us
        if cpu:
            line += f"  ({cpu:.0f} CPU us/req: {1e6 / cpu:,.0f}/s on a whole core)"
        if kmock and kmock.loads[row].rate:
            ratio = rate / kmock.loads[row].rate
            line += (f"   {ratio:.1f}x kmock, target >= {TARGET_VS_KMOCK:.0f}x "
                     f"[{verdict(ratio, TARGET_VS_KMOCK)}]")
        elif kmock:
            line += "   (kmock completed no request in the test: ratio n/a)"
        print(line)
    for row in ("watch, live", "watch, replay"):
        rate, mark = _rate(durable, row)
        met = verdict(0.0 if mark else rate, TARGET_WATCH_EVENTS)
        print(f"  {row:<17} {rate:>9,.0f}/s{mark} to {args.watchers} watchers, target >= "
              f"{TARGET_WATCH_EVENTS:,.0f}/s [{met}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="~10-20 s smoke run")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per load test")
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--watchers", type=int, default=100)
    parser.add_argument("--watch-events", type=int, default=1000,
                        help="objects created while watching (each goes to every watcher)")
    parser.add_argument("--watch-timeout", type=float, default=20.0,
                        help="the writer stops after half of it; delivery waits the rest")
    parser.add_argument("--servers", default=None,
                        help=f"comma-separated, of {','.join(ALL_SERVERS)} (default all; "
                             "--quick: kubegc-sqlite,kmock)")
    parser.add_argument("--reuse-server", action="store_true",
                        help="one server process per server kind instead of one per test")
    parser.add_argument("--serve-kmock", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--watch-client", help=argparse.SUPPRESS)
    parser.add_argument("--load-client", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_kmock:
        serve_kmock(args.serve_kmock)
        return
    if args.watch_client:
        p = json.loads(args.watch_client)
        client = replay_client if p["mode"] == "replay" else watch_client
        print(json.dumps(asyncio.run(client(
            p["url"], p["namespace"], p["watchers"], p["events"], p["timeout"]))))
        return
    if args.load_client:
        p = json.loads(args.load_client)
        print(json.dumps(asyncio.run(aiohttp_load(
            p["url"], p["duration"], p["connections"], p["method"], p["prefix"],
            p["namespace"]))))
        return
    if args.quick:
        args.duration, args.watchers, args.watch_events = 1.0, 20, 100
        args.watch_timeout = min(args.watch_timeout, 10.0)
        args.reuse_server = True
        args.servers = args.servers or "kubegc-sqlite,kmock"
    servers = [s.strip() for s in (args.servers or ",".join(ALL_SERVERS)).split(",")
               if s.strip()]
    header("bench_http", f"{args.duration:g} s per test, {args.connections} connections, "
                         f"{args.watchers} watchers x {args.watch_events} events; "
                         + (f"server on CPU {SERVER_CPU}, clients on CPU {CLIENT_CPU}"
                            if pinned(0, []) else "processes not pinned (no taskset)")
                         + "; load generator: "
                         + ("wrk -t1" if shutil.which("wrk") else "aiohttp (no wrk found)"))
    started = time.perf_counter()
    results = {name: bench_server(name, args) for name in servers}
    report(results, args)
    print(f"done in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
