"""Shared helpers of the bench scripts: realistic objects, raw SQLite baselines, timing,
reporting, process pinning and /proc readings.

Every bench prints rates next to a baseline measured in the same process and run, as a
ratio, so that machine noise cancels. Nothing here needs a dependency beyond the package's
own (aiohttp, orjson); CPU and memory come from /proc (Linux).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

# -- realistic objects ------------------------------------------------------------------------


def pod(name: str, namespace: str = "default", *, index: int = 0,
        owner: dict[str, Any] | None = None) -> dict[str, Any]:
    """A realistic Deployment-made Pod manifest, ~1.6 KB as stored (the shape of a kind-created Pod:
    labels, annotations, a controller ownerReference, one container with ports, env,
    resources and probes)."""
    meta: dict[str, Any] = {
        "name": name, "namespace": namespace,
        "labels": {"app": "web", "tier": "frontend", "pod-template-hash": "5d4f8c7b9f",
                   "shard": f"s{index % 16}"},
        "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090",
                        "kubectl.kubernetes.io/default-container": "web"},
    }
    if owner is not None:
        meta["ownerReferences"] = [owner]
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": meta,
        "spec": {
            "containers": [{
                "name": "web", "image": "registry.example.com/team/web:1.27.3",
                "imagePullPolicy": "IfNotPresent",
                "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"},
                          {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
                "env": [{"name": "LOG_LEVEL", "value": "info"},
                        {"name": "CACHE_SIZE", "value": "256"},
                        {"name": "UPSTREAM_URL", "value": "http://api.backend.svc:8080"},
                        {"name": "POD_NAME", "valueFrom": {"fieldRef": {
                            "fieldPath": "metadata.name"}}}],
                "resources": {"requests": {"cpu": "250m", "memory": "256Mi"},
                              "limits": {"cpu": "1", "memory": "512Mi"}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080},
                                   "periodSeconds": 5, "failureThreshold": 3},
                "volumeMounts": [{"name": "config", "mountPath": "/etc/web"}],
            }],
            "volumes": [{"name": "config", "configMap": {"name": "web-config"}}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst", "serviceAccountName": "default",
            "nodeName": "node-1", "priority": 0,
        },
    }


def configmap(name: str, namespace: str = "default", *,
              owner: dict[str, Any] | None = None, size: int = 1200) -> dict[str, Any]:
    """A ConfigMap of about ``size`` bytes of data (deleted at once, unlike a Pod)."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": {"app": "web"}}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
            "data": {"config.yaml": "x" * size}}


# -- raw SQLite baselines -----------------------------------------------------------------------


def fresh_db(directory: str) -> Path:
    fd, name = tempfile.mkstemp(suffix=".db", dir=directory)
    os.close(fd)
    os.unlink(name)
    return Path(name)


def remove_db(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def raw_inserts(directory: str, n: int, per_txn: int, value: bytes,
                synchronous: str = "FULL") -> float:
    """Rows/s inserting ``n`` rows of ``value`` into a plain table, ``per_txn`` rows per
    ``BEGIN IMMEDIATE ... COMMIT`` (stdlib sqlite3, WAL)."""
    path = fresh_db(directory)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)")
    start = time.perf_counter()
    for base in range(0, n, per_txn):
        conn.execute("BEGIN IMMEDIATE")
        if per_txn == 1:
            conn.execute("INSERT INTO t (id, v) VALUES (?, ?)", (base + 1, value))
        else:
            conn.executemany("INSERT INTO t (id, v) VALUES (?, ?)",
                             [(base + j + 1, value) for j in range(min(per_txn, n - base))])
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    remove_db(path)
    return n / elapsed


def raw_deletes(directory: str, n: int, per_txn: int, value: bytes,
                synchronous: str = "FULL") -> float:
    """Rows/s deleting ``n`` rows by primary key, ``per_txn`` per transaction."""
    path = fresh_db(directory)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)")
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO t (id, v) VALUES (?, ?)", [(i + 1, value) for i in range(n)])
    conn.execute("COMMIT")
    start = time.perf_counter()
    for base in range(0, n, per_txn):
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("DELETE FROM t WHERE id = ?",
                         [(base + j + 1,) for j in range(min(per_txn, n - base))])
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    remove_db(path)
    return n / elapsed


def raw_tombstones(directory: str, n: int, per_txn: int, value: bytes, *,
                   runs: int = 3) -> float:
    """Issue 27's baseline, "the raw durable SQLite tombstone rate": rows/s writing ``n``
    tombstones of ``value`` as ``SqliteKV`` writes a delete (a row of its log table,
    ``deleted`` = 1, carrying the old value, under the ``(name, id)`` index), with its
    durability (WAL, ``synchronous=FULL``, each transaction committed before the next
    starts), ``per_txn`` rows per ``BEGIN IMMEDIATE ... COMMIT``: with ``per_txn`` =
    the writers acknowledged only after their commit (the GC's 20 workers), the most
    group commit of that many writers can reach; with ~1000, what the disk allows.
    Plain ``sqlite3`` statements, no Python store above them; the median of ``runs``
    runs (this machine's fsync time drifts)."""
    from kubegc.storage import sqlite_schema as sql

    rates = []
    for _ in range(runs):
        path = fresh_db(directory)
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.executescript(sql.SCHEMA)
        rows = [(n + i + 1, f"/registry/configmaps/bench/dep-{i:07d}", 0, 1, i + 1, i + 1,
                 value) for i in range(n)]
        start = time.perf_counter()
        for base in range(0, n, per_txn):
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(sql.INSERT, rows[base:base + per_txn])
            conn.execute("COMMIT")
        rates.append(n / (time.perf_counter() - start))
        conn.close()
        remove_db(path)
    return statistics.median(rates)


# -- timing -------------------------------------------------------------------------------------


async def timed(n: int, workers: int, op: Callable[[int], Awaitable[object]]) -> float:
    """Ops/s running ``op(0..n-1)`` from ``workers`` concurrent coroutines."""
    todo = iter(range(n))

    async def worker() -> None:
        for i in todo:
            await op(i)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(workers)))
    return n / (time.perf_counter() - start)


class Results:
    """Named series of rates (one value per run); best and median."""

    def __init__(self) -> None:
        self.series: dict[str, list[float]] = {}

    def add(self, name: str, value: float) -> None:
        self.series.setdefault(name, []).append(value)

    def best(self, name: str) -> float:
        return max(self.series[name])

    def median(self, name: str) -> float:
        return statistics.median(self.series[name])

    def line(self, name: str, unit: str = "/s", width: int = 56, shown: str = "") -> str:
        """``name``'s best value (and median), labelled ``shown`` (default: ``name``)."""
        values = self.series[name]
        label = shown or name
        if len(values) == 1:
            return f"  {label:<{width}}{values[0]:>10,.0f}{unit}"
        return (f"  {label:<{width}}{max(values):>10,.0f}{unit}"
                f"  (median {statistics.median(values):,.0f})")


def verdict(value: float, target: float, *, at_most: bool = False) -> str:
    ok = value <= target if at_most else value >= target
    return "MET" if ok else "MISSED"


def header(title: str, extra: str = "") -> None:
    print(f"{title}  [Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}, "
          f"{os.cpu_count()} CPUs]{'  ' + extra if extra else ''}", flush=True)


# -- processes --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pinned(cpu: int | None, argv: Sequence[str]) -> list[str]:
    """``argv`` run under ``taskset -c cpu`` when possible (and ``cpu`` is not None)."""
    if cpu is None or shutil.which("taskset") is None or (os.cpu_count() or 1) < 2:
        return list(argv)
    return ["taskset", "-c", str(cpu), *argv]


def cpu_seconds(pid: int | str = "self") -> float:
    """User + system CPU seconds of a process (and its reaped children excluded)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def rss_bytes(pid: int | str = "self") -> int:
    pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


async def wait_ready(url: str, proc: Any, log: Path, *, path: str = "/readyz",
                     timeout: float = 30.0) -> None:
    """Until the server at ``url`` answers ``path`` with 200; exits with the end of its
    ``log`` if the process ``proc`` (a ``subprocess.Popen``) died, or after ``timeout``."""
    import contextlib

    import aiohttp

    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as session:
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"{url}: the server exited:\n{log.read_text()[-3000:]}")
            with contextlib.suppress(aiohttp.ClientError):
                async with session.get(url + path) as resp:
                    if resp.status == 200:
                        return
            if time.monotonic() > deadline:
                raise SystemExit(f"{url}: the server is not ready after {timeout} s")
            await asyncio.sleep(0.05)


def child_env() -> dict[str, str]:
    """This environment, with this checkout's ``src`` first on the path of a child process
    (the ``kubegc serve`` a bench starts runs the code under test)."""
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    return env


def stop_processes(procs: Sequence[Any]) -> None:
    """Terminate every process (``subprocess.Popen``), then wait for each; kill one that
    does not exit within 15 s."""
    import subprocess

    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
