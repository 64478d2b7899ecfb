"""``kubegc`` command line (thin: parse, call, print).

    kubegc serve [--host 127.0.0.1] [--port 6443] [--data-dir DIR] [--storage sqlite|memory]
                 [--kubeconfig PATH] [--insecure-http] [--controllers LIST] ...
    kubegc doctor [-n NS | -A] [--kubeconfig K | --from FILE] [-o text|json|dot|svg]
    kubegc doctor KIND/NAME [-n NS] | -f FILE  [--as USER [--as-group G]...] [-o text|json]
    kubegc plan delete KIND/NAME [-n NS] [--cascade background|foreground|orphan]
    kubegc tree KIND/NAME [-n NS] [--owners]
    kubegc why KIND/NAME [-n NS] [--uid UID]
    kubegc ui [--kubeconfig K | --context C | --from FILE] [--port P] [--open]
    kubegc kubeconfig --user NAME [--group G]... [-o FILE] [--data-dir DIR] [--expiration D]
(doctor, plan, tree and why are also ``kubectl gc ...``; see kubegc.tools.commands,
kubegc.tools.ui and docs/tools.md)
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import ipaddress
import logging
import os
import re
import signal
import sys
import time
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubegc import cliflags
from kubegc.cluster_config import ClusterConfig
from kubegc.component.config import (
    ControllerManagerConfiguration,
    EventTTLConfiguration,
    GarbageCollectorControllerConfiguration,
    KubeletConfiguration,
    LeaderElectionConfiguration,
)
from kubegc.planner_cluster import ClusterSimulationFactory
from kubegc.tools.flags import (
    HelpFormatter,
    examples,
    non_negative_int,
    non_negative_seconds,
    port,
    positive_int,
    positive_number,
    positive_seconds,
)

DEFAULT_DATA_DIR = Path(os.environ.get("KUBEGC_DATA_DIR", "~/.kubegc")).expanduser()

if TYPE_CHECKING:
    from kubegc.cluster import Cluster


class _DefaultsFormatter(HelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Shows each flag's default, unless there is none to show (None, a switch's False)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


_GO_DURATION = re.compile(r"(?:(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))")
_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def go_duration(text: str) -> float:
    """Seconds of a Go duration (``15s``, ``1m30s``, ``500ms``), as kube-controller-manager's
    duration flags take them; a bare number is seconds, as kubegc's other flags."""
    try:
        return float(text)
    except ValueError:
        pass
    if text and _GO_DURATION.sub("", text) == "":
        return sum(float(n) * _GO_UNITS[u] for n, u in _GO_DURATION.findall(text))
    raise argparse.ArgumentTypeError(f"invalid duration {text!r} (e.g. 15s, 1m30s, 500ms)")


def _bool_flag(text: str) -> bool:
    """``--flag=true|false`` as Go's flag package reads a boolean."""
    value = text.lower()
    if value in ("1", "t", "true"):
        return True
    if value in ("0", "f", "false"):
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean {text!r} (true or false)")


def _leader_election_flags(p: argparse.ArgumentParser) -> None:
    le = LeaderElectionConfiguration
    g = p.add_argument_group("leader election (kube-controller-manager's flags)")
    g.add_argument("--leader-elect", type=_bool_flag, nargs="?", const=True,
                   default=le.leader_elect, metavar="BOOL",
                   help="run the controllers only while holding the leader-election Lease, "
                        "so that of several servers on one etcd exactly one runs them")
    g.add_argument("--leader-elect-lease-duration", type=go_duration,
                   default=f"{le.lease_duration:g}s", metavar="DURATION",
                   help="how long a standby waits after it last saw the Lease renewed "
                        "before it takes over")
    g.add_argument("--leader-elect-renew-deadline", type=go_duration,
                   default=f"{le.renew_deadline:g}s", metavar="DURATION",
                   help="how long the leader tries to renew before it stops leading "
                        "(less than the lease duration)")
    g.add_argument("--leader-elect-retry-period", type=go_duration,
                   default=f"{le.retry_period:g}s", metavar="DURATION",
                   help="time between tries to acquire or renew the Lease")
    g.add_argument("--leader-elect-resource-name", default=le.resource_name, metavar="NAME",
                   help="name of the leader-election Lease")
    g.add_argument("--leader-elect-resource-namespace", default=le.resource_namespace,
                   metavar="NAMESPACE", help="namespace of the leader-election Lease")


def leader_election_config(args: argparse.Namespace) -> LeaderElectionConfiguration:
    """The ``--leader-elect*`` flags; ``ValueError`` (upstream's message) when the
    durations cannot work together."""
    from kubegc.client.leaderelection import check_timing

    config = LeaderElectionConfiguration(
        leader_elect=args.leader_elect, lease_duration=args.leader_elect_lease_duration,
        renew_deadline=args.leader_elect_renew_deadline,
        retry_period=args.leader_elect_retry_period,
        resource_name=args.leader_elect_resource_name,
        resource_namespace=args.leader_elect_resource_namespace)
    if config.leader_elect:
        check_timing(lease_duration=config.lease_duration,
                     renew_deadline=config.renew_deadline, retry_period=config.retry_period)
    return config


def _serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    # every default is the configuration's (kubegc.component.config), shown by --help
    cfg, gc, kubelet = ClusterConfig, GarbageCollectorControllerConfiguration, KubeletConfiguration
    p = sub.add_parser("serve", help="run the API server and the controllers",
                       formatter_class=_DefaultsFormatter,
                       description="Run a kubegc API server (kubectl-compatible) with its "
                                   "controllers until interrupted.",
                       epilog=examples(
                           "%(prog)s                                  https://127.0.0.1:6443, "
                           "data in ~/.kubegc",
                           "%(prog)s --storage memory --port 0        throwaway, on a free port",
                           "%(prog)s --storage etcd://127.0.0.1:2379/kubegc",
                           "%(prog)s --controllers '*,-kubelet'       all but the kubelet "
                           "simulator",
                           "%(prog)s --time-scale 60 --pod-exit-delay 10   a minute of "
                           "cluster time a second"))
    p.add_argument("--host", default=cfg.host, help="address to listen on")
    p.add_argument("--port", type=port, default=cfg.port,
                   help="port to listen on (0: any free port)")
    p.add_argument("--data-dir", type=cliflags.data_dir, default=str(DEFAULT_DATA_DIR),
                   help="where the store, the CA and the kubeconfig live ($KUBEGC_DATA_DIR)")
    p.add_argument("--storage", type=cliflags.storage, default=cfg.storage,
                   help="sqlite (in the data dir), memory, or etcd://HOST:PORT[/PREFIX] "
                        "(pip install 'kubegc[etcd]')")
    p.add_argument("--kubeconfig", type=cliflags.kubeconfig_path, default=None,
                   help="where to write the kubeconfig (default: <data-dir>/kubeconfig)")
    p.add_argument("--insecure-http", action="store_true",
                   help="serve plain HTTP without authentication (loopback only)")
    p.add_argument("--controllers", type=cliflags.controllers,
                   default=",".join(ControllerManagerConfiguration().controllers),
                   help="comma-separated controllers to run; '*' for all, '-name' to disable "
                        "one (e.g. '*,-kubelet'); '' for none")
    p.add_argument("--concurrent-gc-syncs", type=positive_int, default=gc.concurrent_gc_syncs,
                   help="garbage collector workers (upstream's --concurrent-gc-syncs)")
    p.add_argument("--gc-sync-period", type=positive_seconds, default=gc.gc_sync_period,
                   help="seconds between GC resource re-discovery")
    p.add_argument("--nodes", type=non_negative_int, default=kubelet.nodes,
                   help="simulated nodes to register")
    p.add_argument("--event-ttl", type=positive_seconds, default=EventTTLConfiguration.event_ttl,
                   help="seconds an Event lives (kube-apiserver's --event-ttl)")
    p.add_argument("--decision-ttl", type=positive_seconds, default=gc.decision_ttl,
                   help="seconds GC deletion records are kept (604800: 7 days)")
    p.add_argument("--pod-exit-delay", type=non_negative_seconds, default=kubelet.pod_exit_delay,
                   metavar="SECONDS",
                   help="how long simulated pods take to exit after TERM (0: at once); "
                        "per pod: annotation kubegc.io/exit-delay-seconds")
    p.add_argument("--pod-prestop-delay", type=non_negative_seconds,
                   default=kubelet.pod_prestop_delay,
                   metavar="SECONDS",
                   help="how long a preStop hook runs; per pod: kubegc.io/prestop-seconds")
    p.add_argument("--pod-ignore-term", action="store_true", default=kubelet.pod_ignore_term,
                   help="simulated processes ignore TERM and die only at KILL when the grace "
                        "period ends; per pod: kubegc.io/ignore-term")
    p.add_argument("--job-pod-duration", type=non_negative_seconds,
                   default=kubelet.job_pod_duration,
                   metavar="SECONDS",
                   help="how long a Job's pod runs before it succeeds; per pod: "
                        "kubegc.io/run-seconds")
    p.add_argument("--node-max-pods", type=positive_int, default=kubelet.node_max_pods,
                   help="pods each simulated node accepts")
    p.add_argument("--time-scale", type=positive_number, default=cfg.time_scale,
                   help="run the cluster's clock N times faster than real time (grace periods, "
                        "CronJob schedules, TTLs); for demos and tests. The clock's lead over "
                        "real time is kept in the data dir: a restart resumes from it, so "
                        "stored timestamps never lie in the cluster's future")
    p.add_argument("--loop", choices=("auto", "uvloop", "asyncio"), default="auto",
                   help="event loop: uvloop (~6%% less CPU per request here) or the standard "
                        "library's; auto: uvloop when it is installed")
    p.add_argument("--no-ui", action="store_true",
                   help="do not serve the owner-graph page at /ui/ (nor print its login URL)")
    _access_flags(p)
    _leader_election_flags(p)
    p.add_argument("-v", "--verbose", action="count", default=0, help="more logging")


def _access_flags(p: argparse.ArgumentParser) -> None:
    cfg = ClusterConfig
    g = p.add_argument_group("authentication, authorization, admission (kube-apiserver's "
                             "flags)")
    g.add_argument("--authorization-mode", type=cliflags.authorization_mode,
                   default=",".join(cfg.authorization_mode),
                   help="comma-separated authorizers in order: RBAC, AlwaysAllow, AlwaysDeny "
                        "(system:masters may do anything with each)")
    g.add_argument("--token-auth-file", type=cliflags.token_auth_file, default=None,
                   metavar="FILE",
                   help='bearer tokens: a CSV of token,user,uid,"group1,group2" per line')
    g.add_argument("--anonymous-auth", type=_bool_flag, nargs="?", const=True,
                   default=cfg.anonymous_auth, metavar="BOOL",
                   help="requests without a credential are system:anonymous (else 401)")
    g.add_argument("--enable-admission-plugins", type=cliflags.enable_admission_plugins,
                   default="", metavar="NAMES",
                   help="comma-separated admission plugins to run besides the default ones "
                        "(NamespaceLifecycle, DefaultTolerationSeconds): "
                        "OwnerReferencesPermissionEnforcement")
    g.add_argument("--disable-admission-plugins", type=cliflags.disable_admission_plugins,
                   default="", metavar="NAMES",
                   help="comma-separated default admission plugins not to run")
    g.add_argument("--service-account-issuer", default=cfg.service_account_issuer,
                   metavar="URL", help="the iss claim of the ServiceAccount tokens kubegc "
                                       "signs")


#: ``kubeadm kubeconfig user --validity-period``'s default
USER_CERT_EXPIRATION = "8760h"


def _kubeconfig_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "kubeconfig", help="write a kubeconfig for any user and groups (a client certificate)",
        formatter_class=_DefaultsFormatter,
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
                   default=str(DEFAULT_DATA_DIR),
                   help="the data directory of the kubegc whose CA signs ($KUBEGC_DATA_DIR)")
    p.add_argument("--expiration", type=go_duration, default=USER_CERT_EXPIRATION,
                   metavar="DURATION", help="how long the certificate is valid (e.g. 24h, "
                                            "30m)")
    p.add_argument("--server", default=None, metavar="URL",
                   help="the server's address (default: the one of <data-dir>/kubeconfig)")


def _kubeconfig(args: argparse.Namespace) -> int:
    """``kubegc kubeconfig``: the kubeconfig to stdout or ``-o``; errors in one line."""
    from datetime import timedelta

    import yaml

    from kubegc.client.kubeconfig import save_kubeconfig
    from kubegc.cluster import UserKubeconfigError, data_dir_user_kubeconfig

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


def serve_config(args: argparse.Namespace) -> ClusterConfig:
    """The configuration ``kubegc serve``'s flags ask for."""
    controllers = [c.strip() for c in args.controllers.split(",") if c.strip()]
    return ClusterConfig(
        data_dir=args.data_dir, storage=args.storage, host=args.host, port=args.port,
        tls=not args.insecure_http, kubeconfig=args.kubeconfig, time_scale=args.time_scale,
        ui=not args.no_ui, ui_planner=ClusterSimulationFactory(),
        authorization_mode=tuple(args.authorization_mode.split(",")),
        token_auth_file=args.token_auth_file, anonymous_auth=args.anonymous_auth,
        enable_admission_plugins=_names(args.enable_admission_plugins),
        disable_admission_plugins=_names(args.disable_admission_plugins),
        service_account_issuer=args.service_account_issuer,
        controller_manager=ControllerManagerConfiguration(
            controllers=controllers, leader_election=leader_election_config(args),
            garbage_collector=GarbageCollectorControllerConfiguration(
                concurrent_gc_syncs=args.concurrent_gc_syncs,
                gc_sync_period=args.gc_sync_period, decision_ttl=args.decision_ttl),
            event_ttl=EventTTLConfiguration(event_ttl=args.event_ttl),
            kubelet=KubeletConfiguration(
                nodes=args.nodes, node_max_pods=args.node_max_pods,
                pod_exit_delay=args.pod_exit_delay, pod_prestop_delay=args.pod_prestop_delay,
                pod_ignore_term=args.pod_ignore_term, job_pod_duration=args.job_pod_duration)))


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


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
                'eval "$(kubegc completion bash)"   complete kubegc in bash (or zsh, fish)',
                "kubegc COMMAND --help              a command's flags and examples"))
    parser.add_argument("--version", action="version", version=cliflags.version())
    parser.set_defaults(prog=parser.prog)
    sub = parser.add_subparsers(dest="command", required=True)
    if not plugin:
        _serve_parser(sub)
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
    from kubegc.cluster import CLOCK_FILE, Cluster, DataDirError
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
        print(f"kubegc: --leader-elect-*: {e}", file=sys.stderr)
        return 2
    started = cliflags.process_started()  # the ready line counts from launch
    cluster = Cluster(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await cluster.start()
    except DataDirError as e:
        print(f"kubegc: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        where = e.filename or f"cannot serve on {args.host}:{args.port}"
        print(f"kubegc: {where}: {e.strerror or e}", file=sys.stderr)
        await cluster.stop()
        return 1
    tune_cyclic_gc()
    server = cluster.server
    url = server.url if server is not None else "(no server)"
    print(f"kubegc serving on {url} (storage: {cluster._storage_spec()})", flush=True)
    warning = exposure_warning(args.host, args.data_dir / "pki" / "token",
                               cluster.kubeconfig_path)
    if warning:
        print(warning, file=sys.stderr, flush=True)
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
    if cluster.ui is not None:
        print(f"owner-graph page (login works once): {cluster.ui.login_url()}", flush=True)
    ready = asyncio.create_task(_say_when_ready(cluster, started), name="ready-line")
    await stop.wait()
    ready.cancel()
    print("kubegc: shutting down", flush=True)
    await cluster.stop()
    return 0


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
        from kubegc.cluster import serve_ui
        from kubegc.tools.ui.command import run as run_ui

        return asyncio.run(run_ui(args, serve=serve_ui, plan_factory=ClusterSimulationFactory()))
    from kubegc.tools.commands import TOOLS, run

    if args.command in TOOLS:
        if argv is None or plugin:  # this process is the command (not a caller's test)
            tune_cyclic_gc()
        return asyncio.run(run(args, plan_factory=ClusterSimulationFactory()))
    return 2


def kubectl_plugin_main() -> int:
    """``kubectl gc ...`` (kubectl finds ``kubectl-gc`` on PATH)."""
    return main(sys.argv[1:], plugin=True)


if __name__ == "__main__":
    sys.exit(main())
