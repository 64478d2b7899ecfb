"""Aggregate request rate of 1, 2 and 3 ``kubegc serve`` on one etcd (docs/several-servers.md).

    python bench/bench_servers.py --etcd http://127.0.0.1:2379[,http://...]
    python bench/bench_servers.py --quick          # etcd from $KUBEGC_TEST_ETCD_CLUSTER

For each server count, fresh servers on a fresh etcd prefix (server i on member i of the
etcd endpoints given, round robin), ``--insecure-http --controllers ''`` (the API alone: the
controllers run on the leader only, and would add the scheduling and running of the created
Pods to one of the servers), then for ``--duration`` s each: GET of one Pod and POST of
~1.6 KB Pods, ``--connections`` connections spread evenly over the servers by
``--clients`` load-generator processes (aiohttp). Prints requests/s, each as a ratio of the
one-server rate measured in the same run (the baseline), errors, and the servers' CPU µs
per request. The rate is bounded by this machine's cores: servers, clients and etcd share
them, so on 2 cores the ratio shows that several servers cost nothing, not that they scale.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from _common import child_env, cpu_seconds, free_port, header, pod, stop_processes, wait_ready

from kubegc.storage import etcd_storage

HERE = Path(__file__).resolve()
NS = "bench"


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    url: str
    log: Path


def start_servers(count: int, members: list[str], root: Path) -> list[Server]:
    prefix = f"/kubegc-bench/{uuid.uuid4().hex}"
    servers = []
    for i in range(count):
        port = free_port()
        log = root / f"server-{count}-{i}.log"
        argv = [sys.executable, "-m", "kubegc.cli", "serve", "--insecure-http",
                "--controllers", "", "--port", str(port), "--data-dir",
                str(root / f"data-{count}-{i}"), "--storage",
                str(etcd_storage(members[i % len(members)], prefix))]
        with log.open("wb") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                    env=child_env())
        servers.append(Server(proc, f"http://127.0.0.1:{port}", log))
    asyncio.run(_ready(servers))
    return servers


async def _ready(servers: list[Server]) -> None:
    for server in servers:
        await wait_ready(server.url, server.proc, server.log)


def stop_servers(servers: list[Server]) -> None:
    stop_processes([server.proc for server in servers])


async def setup(servers: list[Server]) -> None:
    """The namespace and the Pod to GET, created through the first server and visible
    through every one."""
    async with aiohttp.ClientSession(headers={"Content-Type": "application/json"}) as s:
        first = servers[0].url
        async with s.post(first + "/api/v1/namespaces",
                          json={"metadata": {"name": NS}}) as r:
            await r.read()
        async with s.post(f"{first}/api/v1/namespaces/{NS}/pods",
                          json=pod("target", NS)) as r:
            await r.read()
        for server in servers:
            async with s.get(f"{server.url}/api/v1/namespaces/{NS}/pods/target") as r:
                if r.status != 200:
                    raise SystemExit(f"{server.url} does not see the Pod: {r.status}")


# -- the load generator (a child process) ------------------------------------------------------

async def client_load(urls: list[str], op: str, duration: float, connections: int,
                      tag: str) -> dict[str, Any]:
    done = errors = 0
    counter = iter(range(10**9))
    stop_at = time.perf_counter() + duration
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                     headers={"Content-Type": "application/json"}) as s:
        async def worker(url: str) -> None:
            nonlocal done, errors
            get = f"{url}/api/v1/namespaces/{NS}/pods/target"
            post = f"{url}/api/v1/namespaces/{NS}/pods"
            while time.perf_counter() < stop_at:
                if op == "create":
                    body = json.dumps(pod(f"{tag}-{next(counter)}", NS)).encode()
                    request = s.post(post, data=body)
                else:
                    request = s.get(get)
                async with request as r:
                    await r.read()
                    done += 1
                    errors += r.status >= 300

        start = time.perf_counter()
        await asyncio.gather(*(worker(urls[i % len(urls)]) for i in range(connections)))
        return {"requests": done, "errors": errors, "elapsed": time.perf_counter() - start}


def run_load(servers: list[Server], op: str, args: argparse.Namespace) -> dict[str, float]:
    urls = [s.url for s in servers]
    per_client = max(1, args.connections // args.clients)
    before = sum(cpu_seconds(s.proc.pid) for s in servers)
    clients = [subprocess.Popen(
        [sys.executable, str(HERE), "--client", ",".join(urls[i:] + urls[:i]), "--op", op,
         "--duration", str(args.duration), "--connections", str(per_client),
         "--tag", f"c{i}-{uuid.uuid4().hex[:6]}"],
        stdout=subprocess.PIPE, env=child_env()) for i in range(args.clients)]
    results = [json.loads(c.communicate()[0]) for c in clients]
    cpu = sum(cpu_seconds(s.proc.pid) for s in servers) - before
    requests = sum(r["requests"] for r in results)
    elapsed = max(r["elapsed"] for r in results)
    return {"rate": requests / elapsed, "errors": sum(r["errors"] for r in results),
            "cpu_us": cpu / requests * 1e6 if requests else 0.0}


# -- main ------------------------------------------------------------------------------------

def members_from(args: argparse.Namespace) -> list[str]:
    text = args.etcd or os.environ.get("KUBEGC_TEST_ETCD_CLUSTER") or os.environ.get(
        "KUBEGC_TEST_ETCD", "")
    members = [m for m in text.split(",") if m]
    if not members:
        raise SystemExit("bench_servers: needs etcd: --etcd http://127.0.0.1:2379[,...] "
                         "(e.g. .ci/etcd-cluster start /tmp/etcd 3 23790 23800)")
    return members


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--etcd", default="", help="etcd client URLs, comma-separated "
                   "(default $KUBEGC_TEST_ETCD_CLUSTER, then $KUBEGC_TEST_ETCD)")
    p.add_argument("--servers", default="1,2,3", help="server counts to measure")
    p.add_argument("--duration", type=float, default=5.0, help="seconds per test")
    p.add_argument("--connections", type=int, default=48, help="connections in all")
    p.add_argument("--clients", type=int, default=2, help="load-generator processes")
    p.add_argument("--quick", action="store_true", help="2 s per test")
    p.add_argument("--client", help=argparse.SUPPRESS)
    p.add_argument("--op", default="get", help=argparse.SUPPRESS)
    p.add_argument("--tag", default="p", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.client:
        result = asyncio.run(client_load(args.client.split(","), args.op, args.duration,
                                         args.connections, args.tag))
        print(json.dumps(result))
        return
    if args.quick:
        args.duration = 2.0
    members = members_from(args)
    counts = [int(n) for n in args.servers.split(",")]
    header("bench_servers", f"etcd members: {len(members)}, {args.connections} connections, "
                            f"{args.clients} clients, {args.duration:g} s per test")
    rows: dict[int, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-servers-") as tmp:
        for count in counts:
            servers = start_servers(count, members, Path(tmp))
            try:
                asyncio.run(setup(servers))
                rows[count] = {op: run_load(servers, op, args) for op in ("get", "create")}
            finally:
                stop_servers(servers)
            print(f"  {count} server(s) measured", flush=True)
    report(rows, counts)


def report(rows: dict[int, dict[str, dict[str, float]]], counts: list[int]) -> None:
    base = rows[counts[0]]
    print(f"\n{'servers':>7} | {'GET/s':>8} {'ratio':>6} {'µs CPU':>7} {'err':>4} | "
          f"{'POST/s':>8} {'ratio':>6} {'µs CPU':>7} {'err':>4}")
    for count in counts:
        cells = []
        for op in ("get", "create"):
            r = rows[count][op]
            cells.append(f"{r['rate']:>8,.0f} {r['rate'] / base[op]['rate']:>5.2f}x "
                         f"{r['cpu_us']:>7.0f} {r['errors']:>4.0f}")
        print(f"{count:>7} | {cells[0]} | {cells[1]}")
    print(f"(ratio: of the {counts[0]}-server rate of this run; µs CPU: all servers' CPU per "
          f"request)")


if __name__ == "__main__":
    main()
