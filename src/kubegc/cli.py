"""``kubegc`` command line (thin: parse, call, print).

    kubegc serve [--host 127.0.0.1] [--port 6443] [--data-dir DIR] [--storage sqlite|memory]
                 [--kubeconfig PATH] [--insecure-http] [--controllers LIST] ...
    kubegc doctor [-n NS | -A] [--kubeconfig K | --from FILE] [-o text|json|dot|svg]
    kubegc plan delete KIND/NAME [-n NS] [--cascade background|foreground|orphan]
    kubegc tree KIND/NAME [-n NS] [--owners]
    kubegc why KIND/NAME [-n NS] [--uid UID]
(the last four are also ``kubectl gc ...``; see kubegc.tools.commands and docs/tools.md)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

DEFAULT_DATA_DIR = Path(os.environ.get("KUBEGC_DATA_DIR", "~/.kubegc")).expanduser()
#: Python's cyclic-GC thresholds in kubegc serve (after start-up) and the tools
#: (bench/README.md: full collections otherwise walk every cached object every few
#: thousand allocations)
SERVE_GC_THRESHOLDS = (50_000, 50, 100)

if TYPE_CHECKING:
    from kubegc.cluster import Cluster


def _serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="run the API server and the controllers",
                       description="Run a kubegc API server (kubectl-compatible) with its "
                                   "controllers until interrupted.")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument("--port", type=int, default=6443, help="port to listen on (0: any free port)")
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR,
                   help="where the store, the CA and the kubeconfig live (default ~/.kubegc)")
    p.add_argument("--storage", default="sqlite",
                   help="sqlite (default, in the data dir), memory, or etcd://HOST:PORT[/PREFIX]")
    p.add_argument("--kubeconfig", type=Path, default=None,
                   help="where to write the kubeconfig (default <data-dir>/kubeconfig)")
    p.add_argument("--insecure-http", action="store_true",
                   help="serve plain HTTP without authentication (loopback only)")
    p.add_argument("--controllers", default="*",
                   help="comma-separated controllers to run; '*' for all, '-name' to disable "
                        "one (e.g. '*,-kubelet'); '' for none")
    p.add_argument("--concurrent-gc-syncs", type=int, default=20,
                   help="garbage collector workers (upstream default 20)")
    p.add_argument("--gc-sync-period", type=float, default=30.0,
                   help="seconds between GC resource re-discovery")
    p.add_argument("--nodes", type=int, default=1, help="simulated nodes to register")
    p.add_argument("--event-ttl", type=float, default=3600.0,
                   help="seconds an Event lives (upstream default 1h)")
    p.add_argument("--decision-ttl", type=float, default=7 * 24 * 3600.0,
                   help="seconds GC deletion records are kept (default 7 days)")
    p.add_argument("--pod-exit-delay", type=float, default=0.0, metavar="SECONDS",
                   help="how long simulated pods take to exit after TERM (default: at once); "
                        "per pod: annotation kubegc.io/exit-delay-seconds")
    p.add_argument("--pod-prestop-delay", type=float, default=0.0, metavar="SECONDS",
                   help="how long a preStop hook runs; per pod: kubegc.io/prestop-seconds")
    p.add_argument("--pod-ignore-term", action="store_true",
                   help="simulated processes ignore TERM and die only at KILL when the grace "
                        "period ends; per pod: kubegc.io/ignore-term")
    p.add_argument("--job-pod-duration", type=float, default=0.0, metavar="SECONDS",
                   help="how long a Job's pod runs before it succeeds; per pod: "
                        "kubegc.io/run-seconds")
    p.add_argument("--node-max-pods", type=int, default=110,
                   help="pods each simulated node accepts")
    p.add_argument("--time-scale", type=float, default=1.0,
                   help="run the cluster's clock N times faster than real time (grace periods, "
                        "CronJob schedules, TTLs); for demos and tests. The clock's lead over "
                        "real time is kept in the data dir: a restart resumes from it, so "
                        "stored timestamps never lie in the cluster's future")
    p.add_argument("--loop", choices=("auto", "uvloop", "asyncio"), default="auto",
                   help="event loop: uvloop (~6%% less CPU per request here) or the standard "
                        "library's; auto: uvloop when it is installed")
    p.add_argument("-v", "--verbose", action="count", default=0, help="more logging")


def run_loop(main: Coroutine[Any, Any, int], loop: str = "auto") -> int:
    """Run ``main`` on uvloop when asked for or (``auto``) when installed, else on asyncio's
    loop. ``uvloop`` asked for but missing is an error, not a silent fallback."""
    if loop != "asyncio":
        try:
            import uvloop
        except ImportError:
            if loop == "uvloop":
                main.close()
                raise SystemExit("kubegc: --loop uvloop: uvloop is not installed "
                                 "(pip install uvloop)") from None
        else:
            return uvloop.run(main)
    return asyncio.run(main)


def build_parser(*, plugin: bool = False) -> argparse.ArgumentParser:
    """``kubegc``'s parser; with ``plugin``, ``kubectl gc``'s: the tools only (a kubectl
    plugin reads clusters, it does not serve one)."""
    from kubegc.tools.commands import add_parsers

    if plugin:
        parser = argparse.ArgumentParser(
            prog="kubectl gc", description="Explain deletions: stuck Terminating objects, "
                                           "what a delete would do, owner trees, why an "
                                           "object is gone (read-only).")
    else:
        parser = argparse.ArgumentParser(
            prog="kubegc", description="Kubernetes' deletion machinery, for real.")
    parser.set_defaults(prog=parser.prog)
    sub = parser.add_subparsers(dest="command", required=True)
    if not plugin:
        _serve_parser(sub)
    add_parsers(sub)
    return parser


async def _serve(args: argparse.Namespace) -> int:
    from kubegc.cluster import CLOCK_FILE, Cluster, ClusterConfig, DataDirInUse
    from kubegc.tools.model import human_duration

    if args.time_scale <= 0:
        print("kubegc: --time-scale must be positive", file=sys.stderr)
        return 2
    if args.insecure_http and args.host not in ("127.0.0.1", "localhost", "::1"):
        print("kubegc: --insecure-http serves only on loopback", file=sys.stderr)
        return 2
    controllers = [c.strip() for c in args.controllers.split(",") if c.strip()]
    config = ClusterConfig(
        data_dir=args.data_dir, storage=args.storage, host=args.host, port=args.port,
        tls=not args.insecure_http, kubeconfig=args.kubeconfig, controllers=controllers,
        concurrent_gc_syncs=args.concurrent_gc_syncs, gc_sync_period=args.gc_sync_period,
        nodes=args.nodes, event_ttl=args.event_ttl, decision_ttl=args.decision_ttl,
        pod_exit_delay=args.pod_exit_delay, pod_prestop_delay=args.pod_prestop_delay,
        pod_ignore_term=args.pod_ignore_term, job_pod_duration=args.job_pod_duration,
        node_max_pods=args.node_max_pods, time_scale=args.time_scale)
    started = time.monotonic()
    cluster = Cluster(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await cluster.start()
    except DataDirInUse as e:
        print(f"kubegc: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"kubegc: cannot serve on {args.host}:{args.port}: {e.strerror or e}",
              file=sys.stderr)
        await cluster.stop()
        return 1
    # Long-lived objects (schemas, caches, informer stores) need no cyclic-GC scans: move
    # what start-up built out of the collector's sight and scan less often (bench/README.md).
    gc.freeze()
    gc.set_threshold(*SERVE_GC_THRESHOLDS)
    server = cluster.server
    url = server.url if server is not None else "(no server)"
    print(f"kubegc serving on {url} (storage: {cluster._storage_spec()})", flush=True)
    lead = cluster.clock_lead
    if args.time_scale != 1.0 or lead >= 1.0:
        ahead = f", {human_duration(lead)} ahead of real time" if lead >= 1.0 else ""
        kept = (f" (kept in {args.data_dir / CLOCK_FILE})" if args.storage != "memory"
                else "")
        print(f"cluster clock: {args.time_scale:g}x real time{ahead}{kept}", flush=True)
    if cluster.kubeconfig_path is not None:
        print(f"kubeconfig: {cluster.kubeconfig_path}\n"
              f"  export KUBECONFIG={cluster.kubeconfig_path}\n"
              f"  kubectl get namespaces", flush=True)
    ready = asyncio.create_task(_say_when_ready(cluster, started), name="ready-line")
    await stop.wait()
    ready.cancel()
    print("kubegc: shutting down", flush=True)
    await cluster.stop()
    return 0


async def _say_when_ready(cluster: Cluster, started: float) -> None:
    """Print one line once ``/readyz`` would answer ok (controllers synced)."""
    server = cluster.server
    if server is None:
        return
    while not server.ctx.ready():
        await asyncio.sleep(0.01)
    print(f"kubegc: ready ({time.monotonic() - started:.2f} s after start)", flush=True)


def main(argv: Sequence[str] | None = None, *, plugin: bool = False) -> int:
    args = build_parser(plugin=plugin).parse_args(argv)
    level = logging.WARNING - 10 * min(getattr(args, "verbose", 0), 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.command == "serve":
        return run_loop(_serve(args), args.loop)
    from kubegc.tools.commands import TOOLS, run

    if args.command in TOOLS:
        # A tool reads a whole cluster into memory (and the planner runs a kubegc on it):
        # hundreds of thousands of long-lived dicts that full collections of the cyclic
        # GC would walk again and again; scan as rarely as kubegc serve does.
        gc.set_threshold(*SERVE_GC_THRESHOLDS)
        return asyncio.run(run(args, plan_factory=ClusterSimulationFactory()))
    return 2


class _ClusterSimulation:
    """A ``kubegc.tools.plan.Simulation`` over a ``Cluster`` (see ClusterSimulationFactory)."""

    def __init__(self, cluster: Any, controllers: list[str], decisions: Any) -> None:
        self.cluster = cluster
        self._controllers = controllers
        self._decisions = decisions  # an InMemoryDecisionSink

    @property
    def client(self) -> Any:
        return self.cluster.client

    @property
    def skipped(self) -> list[dict[str, Any]]:
        return list(self.cluster.skipped)

    @property
    def controllers(self) -> list[str]:
        return list(self._controllers)

    def records(self) -> Any:
        return self._decisions.records

    async def settle(self, timeout: float) -> None:
        # cluster.settle() only times out once the injected clock also passed the deadline,
        # which a ManualClock never does by itself: bound it in real time here.
        manager = self.cluster.controller_manager
        gc = manager.get("garbagecollector") if manager is not None else None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while gc is not None and not gc.gc.is_synced():
            if loop.time() > deadline:
                raise TimeoutError("the garbage collector did not sync")
            await asyncio.sleep(0.005)
        await asyncio.wait_for(self.cluster.settle(timeout),
                               max(0.001, deadline - loop.time()))


#: The simulation's watch cache: its watchers are in-process and never fall behind, and
#: the recorder starts each watch right after its list; a ring of 100,000 events would keep
#: the decoded objects of a whole 100,000-object cascade.
PLAN_WATCH_CACHE = 10_000


class ClusterSimulationFactory:
    """The planner's ``SimulationFactory``: an in-memory kubegc (no HTTP) loaded with the
    snapshot, running only the garbage collector, the kubelet simulator and the namespace
    controller (those of them this kubegc has) on the planner's clock."""

    def node_names(self, count: int) -> list[str]:
        from kubegc.controllers.nodes import node_names

        return node_names(count)

    @contextlib.asynccontextmanager
    async def start(self, objects: list[dict[str, Any]], *, clock: Any, nodes: int
                    ) -> AsyncIterator[_ClusterSimulation]:
        from kubegc.cluster import Cluster, ClusterConfig
        from kubegc.controllers.garbagecollector.records import InMemoryDecisionSink
        from kubegc.controllers.registry import CONTROLLERS
        from kubegc.tools.plan import PLAN_CONTROLLERS

        controllers = [c for c in PLAN_CONTROLLERS if c in CONTROLLERS]
        decisions = InMemoryDecisionSink()
        cluster = Cluster(ClusterConfig(
            storage="memory", serve_http=False, snapshot=objects, controllers=controllers,
            clock=clock, nodes=nodes, compaction_interval=0, gc_sync_period=30.0,
            decision_sink=decisions, watch_cache_capacity=PLAN_WATCH_CACHE))
        await cluster.start()
        try:
            yield _ClusterSimulation(cluster, controllers, decisions)
        finally:
            await cluster.stop()


def kubectl_plugin_main() -> int:
    """``kubectl gc ...`` (kubectl finds ``kubectl-gc`` on PATH)."""
    return main(sys.argv[1:], plugin=True)


if __name__ == "__main__":
    sys.exit(main())
