"""``kubegc`` command line (thin: parse, call, print).

    kubegc serve [--host 127.0.0.1] [--port 6443] [--data-dir DIR] [--storage sqlite|memory]
                 [--kubeconfig PATH] [--insecure-http] [--controllers LIST] ...
    kubegc doctor [-n NS | -A] [--kubeconfig K | --from FILE] [-o text|json|dot|svg]
    kubegc doctor KIND/NAME [-n NS] | -f FILE  [--as USER [--as-group G]...] [-o text|json]
    kubegc plan delete KIND/NAME [-n NS] [--cascade background|foreground|orphan]
    kubegc plan evict pod/P [-n NS] | drain node/N [--ignore-daemonsets] [--force] ...
    kubegc plan taint node/N key[=value]:Effect | stop-kubelet node/N
    kubegc tree KIND/NAME [-n NS] [--owners]
    kubegc why KIND/NAME [-n NS] [--uid UID]
    kubegc ui [--kubeconfig K | --context C | --from FILE] [--port P] [--open]
    kubegc kubeconfig --user NAME [--group G]... [-o FILE] [--data-dir DIR] [--expiration D]
(doctor, plan, tree and why are also ``kubectl gc ...``; see kubegc.tools.commands,
kubegc.tools.ui and docs/tools.md). ``kubegc serve``'s flags and the configuration they
make are ``kubegc.serve_options``'; the values they take are checked in ``kubegc.cliflags``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import ipaddress
import logging
import signal
import sys
import time
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubegc import cliflags
from kubegc.planner_cluster import ClusterSimulationFactory
from kubegc.serve_options import DefaultsFormatter, add_serve_parser, serve_config
from kubegc.storage import DataDir, StorageEndpoint, StorageKind, default_data_dir
from kubegc.storage.errors import StorageError
from kubegc.tools.flags import HelpFormatter, examples
from kubegc.tools.process import exit_without_freeing, reads_a_dump_file

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from kubegc.cluster import Cluster


#: ``kubeadm kubeconfig user --validity-period``'s default
USER_CERT_EXPIRATION = "8760h"


def _kubeconfig_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "kubeconfig", help="write a kubeconfig for any user and groups (a client certificate)",
        formatter_class=DefaultsFormatter,
        description="Mint a client certificate for a user (CN) and groups (O), signed by the "
                    "CA of the kubegc serving from the data directory, and write a "
                    "kubeconfig with it (as kubeadm kubeconfig user does). What the user may "
                    "do is RBAC's to say; kubectl --kubeconfig FILE auth whoami shows who "
                    "it is.",
        epilog=examples(
            "%(prog)s --user jane -o jane.conf           a user",
            "%(prog)s --user ci --group dev --group qa    in two groups, to stdout",
            "%(prog)s --user system:serviceaccount:ns:op --group system:serviceaccounts "
            "--group system:serviceaccounts:ns   as a ServiceAccount"))
    p.add_argument("--user", required=True, metavar="NAME",
                   help="the user name (the certificate's common name)")
    p.add_argument("--group", action="append", default=None, metavar="GROUP",
                   help="a group of the user (an organization); repeat for more")
    p.add_argument("-o", "--output", type=cliflags.kubeconfig_path, default=None,
                   metavar="FILE", help="where to write the kubeconfig (default: stdout)")
    p.add_argument("--data-dir", type=lambda t: Path(t).expanduser(),
                   default=str(default_data_dir()),
                   help="the data directory of the kubegc whose CA signs ($KUBEGC_DATA_DIR)")
    p.add_argument("--expiration", type=cliflags.go_duration, default=USER_CERT_EXPIRATION,
                   metavar="DURATION", help="how long the certificate is valid (e.g. 24h, "
                                            "30m)")
    p.add_argument("--server", default=None, metavar="URL",
                   help="the server's address (default: the one of <data-dir>/kubeconfig)")


def _kubeconfig(args: argparse.Namespace) -> int:
    """``kubegc kubeconfig``: the kubeconfig to stdout or ``-o``; errors in one line."""
    from datetime import timedelta

    import yaml

    from kubegc.client.kubeconfig import save_kubeconfig
    from kubegc.user_kubeconfig import UserKubeconfigError, data_dir_user_kubeconfig

    prog = f"{args.prog} kubeconfig"
    if args.expiration <= 0:
        print(f"{prog}: --expiration must be positive", file=sys.stderr)
        return 2
    try:
        doc = data_dir_user_kubeconfig(args.data_dir, args.user, tuple(args.group or ()),
                                       validity=timedelta(seconds=args.expiration),
                                       server=args.server)
    except UserKubeconfigError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    if args.output is None:
        sys.stdout.write(yaml.safe_dump(doc, sort_keys=False))
    else:
        save_kubeconfig(args.output, doc)
    return 0


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
        parser: argparse.ArgumentParser = cliflags.Parser(
            prog="kubectl gc", formatter_class=HelpFormatter,
            description="Explain deletions: stuck Terminating objects, what a delete would "
                        "do, owner trees, why an object is gone (read-only).",
            epilog=examples("kubectl gc doctor -A                 what is stuck deleting, and why",
                            "kubectl gc plan delete deployment/web  what a delete would do",
                            "kubectl gc COMMAND --help            a command's flags and "
                            "examples"))
    else:
        parser = cliflags.Parser(
            prog="kubegc", description="Kubernetes' deletion machinery, for real.",
            formatter_class=HelpFormatter, epilog=examples(
                "kubegc serve                       run a cluster (kubectl-compatible)",
                "kubegc doctor -A                   what is stuck deleting, and why",
                "kubegc plan delete deployment/web  what a delete would do",
                "kubegc plan drain node/worker-1    what kubectl drain would do",
                'eval "$(kubegc completion bash)"   complete kubegc in bash (or zsh, fish)',
                "kubegc COMMAND --help              a command's flags and examples"))
    parser.add_argument("--version", action="version", version=cliflags.version())
    parser.set_defaults(prog=parser.prog)
    sub = parser.add_subparsers(dest="command", required=True)
    if not plugin:
        add_serve_parser(sub)
        _kubeconfig_parser(sub)
    add_parsers(sub)
    if not plugin:
        from kubegc.tools.ui.command import add_parser as add_ui_parser

        add_ui_parser(sub)
        cliflags.add_completion_parser(sub, HelpFormatter)
    return parser


def exposure_warning(host: str, token: Path, kubeconfig: Path | None) -> str:
    """What serving on a non-loopback address exposes (empty on loopback)."""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if loopback:
        return ""
    where = "every interface" if host in ("0.0.0.0", "::", "") else host
    holder = f"{kubeconfig} and " if kubeconfig is not None else ""
    return (f"kubegc: warning: serving on {where}, not loopback: other machines can reach "
            f"the API, and the admin token in {holder}{token} gives whoever "
            "holds it full access to every object, Secrets included (--host 127.0.0.1 "
            "serves this machine only)")


async def _serve(args: argparse.Namespace) -> int:
    from kubegc.cluster import Cluster
    from kubegc.data_dir_state import DataDirError
    from kubegc.tools.model import human_duration

    if args.insecure_http and args.host not in ("127.0.0.1", "localhost", "::1"):
        print("kubegc: --insecure-http serves only on loopback", file=sys.stderr)
        return 2
    overlap = cliflags.admission_plugins_overlap(args.enable_admission_plugins,
                                                 args.disable_admission_plugins)
    if overlap is not None:
        print(f"kubegc: {overlap}", file=sys.stderr)
        return 2
    try:
        config = serve_config(args)
    except ValueError as e:
        print(f"kubegc: {e}", file=sys.stderr)
        return 2
    started = cliflags.process_started()  # the ready line counts from launch
    cluster = Cluster(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await start_with_cyclic_gc_held(cluster)
    except DataDirError as e:
        print(f"kubegc: {e}", file=sys.stderr)
        return 1
    except StorageError as e:
        print(f"kubegc: {storage_failure(cluster.storage, e)}", file=sys.stderr)
        await cluster.stop()
        return 1
    except OSError as e:
        where = e.filename or f"cannot serve on {args.host}:{args.port}"
        fix = (f" (the data directory is not as kubegc leaves it: move {args.data_dir} aside "
               "or pass another --data-dir)"
               if e.filename and str(e.filename).startswith(str(args.data_dir)) else "")
        print(f"kubegc: {where}: {e.strerror or e}{fix}", file=sys.stderr)
        await cluster.stop()
        return 1
    collector = asyncio.create_task(collect_once_settled(cluster), name="cyclic-gc")
    server = cluster.server
    url = server.url if server is not None else "(no server)"
    print(f"kubegc serving on {url} (storage: {cluster.storage})", flush=True)
    warning = exposure_warning(args.host, DataDir(args.data_dir).token, cluster.kubeconfig_path)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    lead = cluster.clock_lead
    if args.time_scale != 1.0 or lead >= 1.0:
        ahead = f", {human_duration(lead)} ahead of real time" if lead >= 1.0 else ""
        kept = f" (kept in {cluster.clock_file})" if cluster.clock_file is not None else ""
        print(f"cluster clock: {args.time_scale:g}x real time{ahead}{kept}", flush=True)
    if cluster.kubeconfig_path is not None:
        print(f"kubeconfig: {cluster.kubeconfig_path}\n"
              f"  export KUBECONFIG={cluster.kubeconfig_path}\n"
              f"  kubectl get namespaces", flush=True)
    if cluster.ui is not None:
        print(f"owner-graph page (login works once): {cluster.ui.login_url()}", flush=True)
    ready = asyncio.create_task(_say_when_ready(cluster, started), name="ready-line")
    await stop.wait()
    ready.cancel()
    collector.cancel()
    print("kubegc: shutting down", flush=True)
    await cluster.stop()
    return 0


def storage_failure(endpoint: StorageEndpoint, error: Exception) -> str:
    """Why ``kubegc serve`` could not open its storage, in one line, with the fix."""
    reason = str(error).rsplit(": ", 1)[-1]
    if endpoint.kind is StorageKind.ETCD:
        return (f"cannot reach etcd at {endpoint.host}:{endpoint.port} ({reason}): start etcd "
                "there or point --storage at a running member, or leave --storage out to "
                "keep the data in --data-dir (sqlite)")
    if endpoint.kind is StorageKind.SQLITE:
        return (f"cannot open the database {endpoint.path} ({reason}): move it aside to start "
                "with an empty cluster, or pass another --data-dir")
    return f"cannot open the storage {endpoint}: {error}"


#: Python's cyclic-GC thresholds in kubegc serve (after start-up) and the tools
#: (bench/README.md: full collections otherwise walk every cached object every few
#: thousand allocations)
CYCLIC_GC_THRESHOLDS = (50_000, 50, 100)


def tune_cyclic_gc() -> None:
    """Long-lived objects (schemas, caches, informer stores, a tool's inventory) need no
    cyclic-GC scans: move what was built so far out of the collector's sight and scan
    less often. Full collections over every object of a 100k-object inventory otherwise
    double the time the tools take to read it (bench/README.md)."""
    gc.freeze()
    gc.set_threshold(*CYCLIC_GC_THRESHOLDS)


def tune_tool_cyclic_gc(args: argparse.Namespace) -> None:
    """``tune_cyclic_gc`` for a tool's own process; for ``kubegc doctor --from FILE`` the
    cyclic collector stays off for the whole command. A dump's objects are trees (decoded
    JSON: no cycles), read in one go and then only read: the collector walked each of the
    millions of containers once or twice as they were made and found nothing (~10 % of the
    doctor's CPU on a 200k-object dump, py-spy; issue 27). Reference counting still frees
    everything; the few cycles of one short command (its event loop) wait for its exit.
    Not for ``plan`` (a simulated cluster runs for as long as the plan takes) nor for live
    reads (an HTTP client's garbage)."""
    tune_cyclic_gc()
    if reads_a_dump_file(args):
        gc.disable()


#: the longest ``kubegc serve`` holds Python's cyclic GC off while it starts (seconds)
START_GC_HOLD = 120.0


async def start_with_cyclic_gc_held(cluster: Cluster) -> None:
    """``cluster.start()`` with Python's cyclic GC off: ``collect_once_settled`` turns it
    back on (a start that fails turns it back on at once)."""
    gc.disable()
    try:
        await cluster.start()
    except BaseException:
        gc.enable()
        raise


async def collect_once_settled(cluster: Cluster, hold: float = START_GC_HOLD) -> None:
    """Turn Python's cyclic GC back on (``tune_cyclic_gc``) once the cluster is ready
    (its informers synced) and has settled (the GC's graph built), or after ``hold``
    seconds.

    A restart decodes every stored object into the informers' caches and builds the GC's
    graph of them: millions of long-lived containers, which the collector's generations
    would scan again and again (a list of 200,000 decoded ConfigMaps took 25 µs per
    object with the collector on, 7 µs with it off; issue 27). What the start built is
    then frozen, out of the collector's sight, as it always was."""
    server = cluster.server
    try:
        async with asyncio.timeout(hold):
            while server is not None and not server.ctx.ready():
                await asyncio.sleep(0.01)
            await cluster.settle(hold)
    except TimeoutError:
        log.warning("not settled %.0f s after start: cyclic GC back on anyway", hold)
    finally:
        tune_cyclic_gc()
        gc.enable()


async def _say_when_ready(cluster: Cluster, started: float) -> None:
    """Print one line once ``/readyz`` would answer ok (controllers synced)."""
    server = cluster.server
    if server is None:
        return
    while not server.ctx.ready():
        await asyncio.sleep(0.01)
    print(f"kubegc: ready ({time.monotonic() - started:.2f} s after start)", flush=True)
    manager = cluster.controller_manager
    if manager is not None:
        print(f"kubegc: {manager.describe_leadership()}", flush=True)
        manager.leader_listeners.append(
            lambda _: print(f"kubegc: {manager.describe_leadership()}", flush=True))


def main(argv: Sequence[str] | None = None, *, plugin: bool = False) -> int:
    try:
        return _main(argv, plugin=plugin)
    except KeyboardInterrupt:  # Ctrl-C where the loop has no signal handlers (Windows)
        print(file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None, *, plugin: bool) -> int:
    parser = build_parser(plugin=plugin)
    cliflags.autocomplete(parser)  # answers the shell's completion request and exits
    args = parser.parse_args(cliflags.join_option_values(
        list(sys.argv[1:] if argv is None else argv), ("--now",)))
    level = logging.WARNING - 10 * min(getattr(args, "verbose", 0), 2)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.command == "serve":
        return run_loop(_serve(args), args.loop)
    if args.command == "kubeconfig":
        return _kubeconfig(args)
    if args.command == "completion":
        print(cliflags.completion_script(args.shell), end="")
        return 0
    if args.command == "ui":
        from kubegc.tools.ui.command import run as run_ui
        from kubegc.ui_server import serve_ui

        return asyncio.run(run_ui(args, serve=serve_ui, plan_factory=ClusterSimulationFactory()))
    from kubegc.tools.commands import TOOLS, run

    if args.command in TOOLS:
        own = argv is None or plugin  # this process is the command (not a caller's test)
        if own:
            tune_tool_cyclic_gc(args)
        keep: list[object] | None = [] if own and reads_a_dump_file(args) else None
        code = asyncio.run(run(args, plan_factory=ClusterSimulationFactory(), keep=keep))
        if keep is not None:
            exit_without_freeing(code)
        return code
    return 2


def kubectl_plugin_main() -> int:
    """``kubectl gc ...`` (kubectl finds ``kubectl-gc`` on PATH)."""
    return main(sys.argv[1:], plugin=True)


if __name__ == "__main__":
    sys.exit(main())
