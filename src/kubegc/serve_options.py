"""``kubegc serve``'s flags and the ``ClusterConfig`` they ask for (as kube-apiserver's
``cmd/kube-apiserver/app/options`` and kube-controller-manager's
``KubeControllerManagerOptions.Config`` turn flags into a configuration). Every default is
the configuration's (``kubegc.cluster_config``, ``kubegc.component.config``), shown by
``--help``; each value is checked where it is parsed (``kubegc.cliflags``).
"""

from __future__ import annotations

import argparse

from kubegc import cliflags
from kubegc.api.features import FeatureGate, feature_gate, parse_feature_gates
from kubegc.api.version import (
    BINARY_VERSION,
    EMULATION_VERSION_FLOOR,
    EffectiveVersion,
    parse_emulated_version,
)
from kubegc.cluster_config import (
    AUDIT_LOG_FORMATS,
    AuditConfiguration,
    ClusterConfig,
    RequestHeaderConfiguration,
)
from kubegc.component.config import (
    ControllerManagerConfiguration,
    EphemeralVolumeControllerConfiguration,
    EventTTLConfiguration,
    GarbageCollectorControllerConfiguration,
    KubeletConfiguration,
    LeaderElectionConfiguration,
    NodeLifecycleControllerConfiguration,
    TTLAfterFinishedControllerConfiguration,
)
from kubegc.planner_cluster import ClusterSimulationFactory
from kubegc.storage import default_data_dir
from kubegc.storage.endpoint import STORAGE_FORMS
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


class DefaultsFormatter(HelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Shows each flag's default, unless there is none to show (None, a switch's False)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def _leader_election_flags(p: argparse.ArgumentParser) -> None:
    le = LeaderElectionConfiguration
    g = p.add_argument_group("leader election (kube-controller-manager's flags)")
    g.add_argument("--leader-elect", type=cliflags.bool_flag, nargs="?", const=True,
                   default=le.leader_elect, metavar="BOOL",
                   help="run the controllers only while holding the leader-election Lease, "
                        "so that of several servers on one etcd exactly one runs them")
    g.add_argument("--leader-elect-lease-duration", type=cliflags.go_duration,
                   default=f"{le.lease_duration:g}s", metavar="DURATION",
                   help="how long a standby waits after it last saw the Lease renewed "
                        "before it takes over")
    g.add_argument("--leader-elect-renew-deadline", type=cliflags.go_duration,
                   default=f"{le.renew_deadline:g}s", metavar="DURATION",
                   help="how long the leader tries to renew before it stops leading "
                        "(less than the lease duration)")
    g.add_argument("--leader-elect-retry-period", type=cliflags.go_duration,
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


def add_serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    # every default is the configuration's (kubegc.cluster_config, kubegc.component.config)
    cfg, gc, kubelet = ClusterConfig, GarbageCollectorControllerConfiguration, KubeletConfiguration
    p = sub.add_parser("serve", help="run the API server and the controllers",
                       formatter_class=DefaultsFormatter,
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
    p.add_argument("--data-dir", type=cliflags.data_dir, default=str(default_data_dir()),
                   help="where the store, the CA and the kubeconfig live ($KUBEGC_DATA_DIR)")
    p.add_argument("--storage", type=cliflags.storage, default=cfg.storage,
                   help=f"{STORAGE_FORMS} (etcd: pip install 'kubegc[etcd]')")
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
    p.add_argument("--concurrent-ttl-after-finished-syncs", type=positive_int,
                   default=TTLAfterFinishedControllerConfiguration.concurrent_ttl_syncs,
                   help="TTL-after-finished workers (upstream's flag of that name)")
    p.add_argument("--concurrent-ephemeralvolume-syncs", type=positive_int,
                   default=EphemeralVolumeControllerConfiguration.
                   concurrent_ephemeral_volume_syncs,
                   help="ephemeral-volume controller workers (upstream's flag of that name)")
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
    _front_proxy_flags(p)
    _audit_flags(p)
    _node_lifecycle_flags(p)
    _compaction_flags(p)
    _leader_election_flags(p)
    _version_flags(p)
    p.add_argument("-v", "--verbose", action="count", default=0, help="more logging")


def _node_lifecycle_flags(p: argparse.ArgumentParser) -> None:
    nl = NodeLifecycleControllerConfiguration
    g = p.add_argument_group("node lifecycle (kube-controller-manager's flags; cluster time: "
                             "scaled by --time-scale)")
    g.add_argument("--node-monitor-grace-period", type=cliflags.go_duration,
                   default=f"{nl.node_monitor_grace_period:g}s", metavar="DURATION",
                   help="how long a node may go without a heartbeat (status or Lease) before "
                        "it is marked Unknown and tainted unreachable")
    g.add_argument("--node-startup-grace-period", type=cliflags.go_duration,
                   default=f"{nl.node_startup_grace_period:g}s", metavar="DURATION",
                   help="the same for a node that never posted its Ready condition")
    g.add_argument("--node-monitor-period", type=cliflags.go_duration,
                   default=f"{nl.node_monitor_period:g}s", metavar="DURATION",
                   help="time between two looks at every node's health")


def _compaction_flags(p: argparse.ArgumentParser) -> None:
    cfg = ClusterConfig
    g = p.add_argument_group("compaction (kube-apiserver's and kine's flags)")
    g.add_argument("--etcd-compaction-interval", type=cliflags.go_duration,
                   default=f"{cfg.compaction_interval:g}s", metavar="DURATION",
                   help="time between two compactions of the store's history; 0 never "
                        "compacts (then the SQLite file never shrinks)")
    g.add_argument("--compact-min-retain", type=non_negative_int, default=cfg.compaction_keep,
                   metavar="REVISIONS",
                   help="revisions a compaction keeps for watches and paged lists to resume")
    g.add_argument("--informer-cache-interval", type=cliflags.go_duration,
                   default=f"{cfg.informer_cache_interval:g}s", metavar="DURATION",
                   help="time between two writes of the GC informers' caches to the data "
                        "directory, from which the start after a crash resumes instead of "
                        "listing every object; 0 writes them at a clean stop only")


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
    g.add_argument("--anonymous-auth", type=cliflags.bool_flag, nargs="?", const=True,
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


def _front_proxy_flags(p: argparse.ArgumentParser) -> None:
    rh = RequestHeaderConfiguration
    g = p.add_argument_group("the aggregator's front-proxy identity (kube-apiserver's flags; "
                             "none given: kubegc makes front-proxy-ca.crt and "
                             "front-proxy-client.crt in <data-dir>/pki, as kubeadm does)")
    g.add_argument("--proxy-client-cert-file", type=cliflags.pem_file, default=None,
                   metavar="FILE", help="the client certificate the aggregator presents to "
                                        "the backends of APIServices")
    g.add_argument("--proxy-client-key-file", type=cliflags.pem_file, default=None,
                   metavar="FILE", help="its key")
    g.add_argument("--requestheader-client-ca-file", type=cliflags.pem_file, default=None,
                   metavar="FILE", help="the CA of that certificate, published in "
                                        "kube-system/extension-apiserver-authentication")
    for name, default, what in (
            ("allowed-names", rh.allowed_names,
             "common names a front proxy's certificate may have (empty: any)"),
            ("username-headers", rh.username_headers, "headers of the user name"),
            ("group-headers", rh.group_headers, "headers of the groups"),
            ("extra-headers-prefix", rh.extra_headers_prefix,
             "prefixes of the headers of the user's extra values")):
        g.add_argument(f"--requestheader-{name}", type=cliflags.string_slice,
                       default=",".join(default), metavar="LIST",
                       help=f"comma-separated {what}, published in the ConfigMap")


def request_header_config(args: argparse.Namespace) -> RequestHeaderConfiguration:
    """The front-proxy flags; ``ValueError`` when a certificate comes without its key."""
    if (args.proxy_client_cert_file is None) != (args.proxy_client_key_file is None):
        raise ValueError("--proxy-client-cert-file and --proxy-client-key-file go together")
    return RequestHeaderConfiguration(
        proxy_client_cert_file=args.proxy_client_cert_file,
        proxy_client_key_file=args.proxy_client_key_file,
        client_ca_file=args.requestheader_client_ca_file,
        allowed_names=_slice(args.requestheader_allowed_names),
        username_headers=_slice(args.requestheader_username_headers),
        group_headers=_slice(args.requestheader_group_headers),
        extra_headers_prefix=_slice(args.requestheader_extra_headers_prefix))


def _slice(value: str | tuple[str, ...]) -> tuple[str, ...]:
    """An argparse default stays the text it was given; a parsed flag is a tuple."""
    return cliflags.string_slice(value) if isinstance(value, str) else value


def _audit_flags(p: argparse.ArgumentParser) -> None:
    cfg = AuditConfiguration
    g = p.add_argument_group("auditing (kube-apiserver's flags; off unless both a policy "
                             "and a log are given)")
    g.add_argument("--audit-policy-file", type=cliflags.audit_policy_file, default=None,
                   metavar="FILE", help="an audit.k8s.io/v1 Policy: which requests are "
                                        "audited at which level")
    g.add_argument("--audit-log-path", default=None, metavar="PATH",
                   help="the audit log (one audit.k8s.io/v1 Event per line); - for "
                        "standard output")
    g.add_argument("--audit-log-maxage", type=non_negative_int, default=cfg.log_maxage,
                   metavar="DAYS", help="remove rotated logs older than this (0: never)")
    g.add_argument("--audit-log-maxbackup", type=non_negative_int,
                   default=cfg.log_maxbackup, metavar="N",
                   help="rotated logs to keep (0: all)")
    g.add_argument("--audit-log-maxsize", type=non_negative_int, default=cfg.log_maxsize,
                   metavar="MB", help="rotate the log past this size (0: 100 MB)")
    g.add_argument("--audit-log-format", choices=AUDIT_LOG_FORMATS, default=cfg.log_format,
                   help="json: one Event per line; legacy: upstream's one-line text")
    g.add_argument("--audit-log-compress", type=cliflags.bool_flag, nargs="?", const=True,
                   default=cfg.log_compress, metavar="BOOL",
                   help="gzip rotated logs")


def audit_config(args: argparse.Namespace) -> AuditConfiguration:
    return AuditConfiguration(
        policy_file=args.audit_policy_file, log_path=args.audit_log_path,
        log_maxage=args.audit_log_maxage, log_maxbackup=args.audit_log_maxbackup,
        log_maxsize=args.audit_log_maxsize, log_format=args.audit_log_format,
        log_compress=args.audit_log_compress)


def _version_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("the Kubernetes version emulated (kube-apiserver's and "
                             "kube-controller-manager's flags; docs/versions.md)")
    g.add_argument("--emulated-version", type=cliflags.emulated_version,
                   default=str(BINARY_VERSION), metavar="VERSION",
                   help=f"behave as this Kubernetes version: {EMULATION_VERSION_FLOOR}.."
                        f"{BINARY_VERSION} (or kube=1.N); /version reports it and the "
                        "feature gates take its defaults")
    g.add_argument("--feature-gates", type=cliflags.feature_gates, default=None,
                   metavar="NAME=BOOL,...",
                   help="feature gates to set, at the emulated version's defaults and locks "
                        "otherwise. Options are: " + "; ".join(
                            FeatureGate(BINARY_VERSION).known_features()))


def feature_gate_config(args: argparse.Namespace) -> FeatureGate:
    """``--emulated-version`` and ``--feature-gates`` together; ``ValueError`` with
    upstream's messages."""
    emulation = parse_emulated_version(args.emulated_version)
    problems = EffectiveVersion(emulation).validate()
    if problems:
        raise ValueError(f"--emulated-version: {'; '.join(problems)}")
    try:
        return feature_gate(emulation, parse_feature_gates(args.feature_gates or ""))
    except ValueError as e:
        raise ValueError(f'invalid argument "{args.feature_gates}" for "--feature-gates" '
                         f"flag: {e}") from e


def serve_config(args: argparse.Namespace) -> ClusterConfig:
    """The configuration ``kubegc serve``'s flags ask for; ``ValueError`` (naming the
    flags) when they cannot work together."""
    controllers = [c.strip() for c in args.controllers.split(",") if c.strip()]
    try:
        leader_election = leader_election_config(args)
    except ValueError as e:
        raise ValueError(f"--leader-elect-*: {e}") from e
    return ClusterConfig(
        data_dir=args.data_dir, storage=args.storage, host=args.host, port=args.port,
        tls=not args.insecure_http, kubeconfig=args.kubeconfig, time_scale=args.time_scale,
        ui=not args.no_ui, ui_planner=ClusterSimulationFactory(),
        authorization_mode=tuple(args.authorization_mode.split(",")),
        token_auth_file=args.token_auth_file, anonymous_auth=args.anonymous_auth,
        enable_admission_plugins=_names(args.enable_admission_plugins),
        disable_admission_plugins=_names(args.disable_admission_plugins),
        service_account_issuer=args.service_account_issuer, audit=audit_config(args),
        request_header=request_header_config(args),
        feature_gate=feature_gate_config(args),
        compaction_interval=args.etcd_compaction_interval,
        compaction_keep=args.compact_min_retain,
        informer_cache_interval=args.informer_cache_interval,
        controller_manager=ControllerManagerConfiguration(
            controllers=controllers, leader_election=leader_election,
            garbage_collector=GarbageCollectorControllerConfiguration(
                concurrent_gc_syncs=args.concurrent_gc_syncs,
                gc_sync_period=args.gc_sync_period, decision_ttl=args.decision_ttl),
            event_ttl=EventTTLConfiguration(event_ttl=args.event_ttl),
            ttl_after_finished=TTLAfterFinishedControllerConfiguration(
                concurrent_ttl_syncs=args.concurrent_ttl_after_finished_syncs),
            ephemeral_volume=EphemeralVolumeControllerConfiguration(
                concurrent_ephemeral_volume_syncs=args.concurrent_ephemeralvolume_syncs),
            node_lifecycle=NodeLifecycleControllerConfiguration(
                node_monitor_grace_period=args.node_monitor_grace_period,
                node_startup_grace_period=args.node_startup_grace_period,
                node_monitor_period=args.node_monitor_period),
            kubelet=KubeletConfiguration(
                nodes=args.nodes, node_max_pods=args.node_max_pods,
                pod_exit_delay=args.pod_exit_delay, pod_prestop_delay=args.pod_prestop_delay,
                pod_ignore_term=args.pod_ignore_term, job_pod_duration=args.job_pod_duration)))


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())
