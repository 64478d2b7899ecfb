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


#: Rows per commit of the "what the disk allows" tombstone baseline.
TOMBSTONE_BATCH = 1000


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


def rss_anon_bytes(pid: int | str = "self") -> int:
    """The anonymous part of a process's RSS (its heap: without the pages of files it maps,
    such as SQLite's memory-mapped database, which the kernel drops under pressure)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) * 1024
    return rss_bytes(pid)


class PeakSampler:
    """The highest anonymous RSS of process ``pid`` while the ``with`` block runs, sampled
    every ``period`` seconds from a thread."""

    def __init__(self, pid: int, period: float = 0.002) -> None:
        import threading

        self.pid, self.period = pid, period
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_anon_bytes(self.pid))
            self._stop.wait(self.period)

    def __enter__(self) -> PeakSampler:
        self.peak = rss_anon_bytes(self.pid)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_anon_bytes(self.pid))


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


# -- kubegc serve over HTTP -----------------------------------------------------------------------


class Serve:
    """A ``kubegc serve`` process (SQLite, every controller, plain HTTP) on ``root``/data:
    a fresh temporary directory unless ``root`` is given (which ``stop`` then leaves, so
    that another ``Serve`` can restart on it). ``extra`` flags are appended."""

    def __init__(self, *extra: str, root: Path | None = None, prefix: str = "bench-") -> None:
        import subprocess

        self.tmp = None if root is not None else tempfile.TemporaryDirectory(prefix=prefix)
        self.root = root if root is not None else Path(self.tmp.name)  # type: ignore[union-attr]
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data = self.root / "data"
        from kubegc.storage import DataDir

        self.files = DataDir(self.data)
        self.kubeconfig = self.files.kubeconfig
        self.log = (self.root / "serve.log").open("ab")
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kubegc.cli", "serve", "--insecure-http", "--port",
             str(self.port), "--data-dir", str(self.data), "--storage", "sqlite", *extra],
            stdout=self.log, stderr=subprocess.STDOUT, env=child_env())

    async def ready(self, timeout: float = 60.0) -> float:
        """Seconds from the process's start to ``/readyz`` 200 (and its kubeconfig)."""
        import contextlib

        import aiohttp

        deadline = time.monotonic() + timeout
        async with aiohttp.ClientSession() as session:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError("kubegc serve exited:\n" + self.log_tail())
                with contextlib.suppress(aiohttp.ClientError):
                    async with session.get(self.url + "/readyz") as resp:
                        if resp.status == 200 and self.kubeconfig.exists():
                            return time.perf_counter() - self.started
                await asyncio.sleep(0.05)
        raise RuntimeError("kubegc serve not ready:\n" + self.log_tail())

    async def settle(self, timeout: float) -> None:
        import aiohttp

        async with aiohttp.ClientSession() as session, session.get(
                f"{self.url}/debug/kubegc/settle?timeout={timeout}",
                timeout=aiohttp.ClientTimeout(total=timeout + 30)) as resp:
            if resp.status != 200:
                raise RuntimeError(f"kubegc serve did not settle: {await resp.text()}")

    def rss(self) -> int:
        return rss_bytes(self.proc.pid)

    def rss_anon(self) -> int:
        return rss_anon_bytes(self.proc.pid)

    def store_bytes(self) -> int:
        """The SQLite database file's size (its WAL apart)."""
        return self.files.store.stat().st_size

    def log_tail(self, chars: int = 3000) -> str:
        self.log.flush()
        return (self.root / "serve.log").read_text(errors="replace")[-chars:]

    def stop(self) -> None:
        import subprocess

        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        if self.tmp is not None:
            self.tmp.cleanup()


async def real_cascade(serve: Serve, n: int, policy: str, timeout: float, *,
                       namespace: str, owner: str = "owner") -> float:
    """Seconds from the DELETE of ConfigMap ``owner`` (``policy`` propagation) to the last
    of its ``n`` dependents' DELETED watch event, on ``serve`` over HTTP."""
    from kubegc.api.meta import DeletionPropagation
    from kubegc.api.resources import GroupVersionResource
    from kubegc.client.interface import DeleteOptions, ListOptions, WatchOptions
    from kubegc.client.kubeconfig import load_kubeconfig
    from kubegc.client.rest import RestClient

    configmaps = GroupVersionResource("", "v1", "configmaps")
    client = RestClient(load_kubeconfig(str(serve.kubeconfig)))
    try:
        listed = await client.list(configmaps, namespace=namespace,
                                   options=ListOptions(limit=1))
        rv = listed["metadata"]["resourceVersion"]
        gone = 0
        done = asyncio.Event()
        last = 0.0

        async def observe() -> None:
            nonlocal gone, last
            async for event in client.watch(configmaps, namespace=namespace,
                                            options=WatchOptions(resource_version=rv)):
                if event.type == "DELETED" and event.object["metadata"]["name"] != owner:
                    gone += 1
                    last = time.perf_counter()
                    if gone == n:
                        done.set()
                        return

        watcher = asyncio.create_task(observe())
        await asyncio.sleep(0.2)  # the watch is open
        start = time.perf_counter()
        await client.delete(configmaps, owner, namespace=namespace,
                            options=DeleteOptions(propagation_policy=DeletionPropagation(policy)))
        await asyncio.wait_for(done.wait(), timeout)
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        return last - start
    finally:
        await client.close()
