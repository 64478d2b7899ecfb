"""The configuration a kubegc is built from (``kubegc.cluster.Cluster``), each default
written once: serving, storage, the clock here, the components' sections in
``kubegc.component.config``. ``kubegc serve``'s flags and ``kubegc.testing.Cluster`` read
their defaults from these fields (``ClusterConfig.port``); ``kubegc serve --help`` shows them.

A module of its own (not part of ``kubegc.cluster``) so that the command line can read the
defaults without importing the whole server.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kubegc.api.features import FeatureGate
from kubegc.api.types import Obj
from kubegc.api.version import EffectiveVersion
from kubegc.component.config import ControllerManagerConfiguration
from kubegc.storage.endpoint import DATA_DIR_SQLITE, StorageEndpoint

if TYPE_CHECKING:
    from kubegc.api.clock import Clock
    from kubegc.storage import KV
    from kubegc.tools.plan import SimulationFactory


#: ``--audit-log-format``'s values (the log backend, ``kubegc.server.audit.log``, writes
#: each)
AUDIT_LOG_FORMATS = ("json", "legacy")


@dataclass(frozen=True)
class AuditConfiguration:
    """kube-apiserver's auditing flags: ``--audit-policy-file`` and the log backend's
    ``--audit-log-*`` (both needed for any event to be written, as upstream)."""

    policy_file: Path | None = None
    log_path: str | None = None  # "-": standard output
    log_maxage: int = 0  # days; 0: no removal by age
    log_maxbackup: int = 0  # 0: every rotated file kept
    log_maxsize: int = 0  # megabytes; 0: lumberjack's 100
    log_format: str = "json"  # or "legacy"
    log_compress: bool = False

    @property
    def enabled(self) -> bool:
        return self.policy_file is not None and bool(self.log_path)


#: the front-proxy client certificate's common name (kubeadm's), and so the default of
#: ``--requestheader-allowed-names``
FRONT_PROXY_CLIENT = "front-proxy-client"


@dataclass(frozen=True)
class RequestHeaderConfiguration:
    """kube-apiserver's front-proxy flags: the client certificate the aggregator presents
    to the backends (``--proxy-client-cert-file``/``--proxy-client-key-file``), the CA a
    backend verifies it with (``--requestheader-client-ca-file``), the common names allowed
    (``--requestheader-allowed-names``; empty: any) and the header names
    (``--requestheader-*-headers``), published in the ``extension-apiserver-authentication``
    ConfigMap. Defaults are kubeadm's; with no file given (and TLS on) kubegc makes the
    front-proxy CA and client certificate in the data directory's ``pki/``, as kubeadm
    does."""

    proxy_client_cert_file: Path | None = None
    proxy_client_key_file: Path | None = None
    client_ca_file: Path | None = None
    allowed_names: tuple[str, ...] = (FRONT_PROXY_CLIENT,)
    username_headers: tuple[str, ...] = ("X-Remote-User",)
    group_headers: tuple[str, ...] = ("X-Remote-Group",)
    extra_headers_prefix: tuple[str, ...] = ("X-Remote-Extra-",)

    @property
    def generated(self) -> bool:
        """Whether kubegc makes the credentials (no file given)."""
        return (self.proxy_client_cert_file is None and self.proxy_client_key_file is None
                and self.client_ca_file is None)


@dataclass
class ClusterConfig:
    """Everything ``kubegc.cluster.Cluster`` builds a kubegc from."""

    data_dir: Path | None = None  # None: nothing on disk (memory storage, plain HTTP)
    #: ``kubegc.storage.parse_storage``'s: sqlite (the data directory's), memory, etcd://...
    storage: StorageEndpoint = DATA_DIR_SQLITE
    host: str = "127.0.0.1"
    port: int = 6443  # 0: a free port
    tls: bool = True
    kubeconfig: Path | None = None  # default <data_dir>/kubeconfig
    serve_http: bool = True
    #: None: real time, or ``time_scale`` times faster — resumed, for a durable store, from
    #: the lead the cluster's clock had over real time when it last ran (``CLOCK_FILE``)
    clock: Clock | None = None
    time_scale: float = 1.0
    kv: KV | None = None  # an already open store (the planner's)
    #: objects to load as they are before controllers start (the planner's dump); the
    #: default namespaces are then not created
    snapshot: list[Obj] | None = None
    #: seconds between compactions, 0: never (kube-apiserver's ``--etcd-compaction-interval``)
    compaction_interval: float = 300.0
    #: revisions kept for watches to resume
    compaction_keep: int = 100_000
    #: real seconds between two writes of the GC's metadata informers' caches to the data
    #: directory while the controllers run (``cluster_caches``), so that the start after a
    #: crash resumes from them; 0: written at a clean stop only
    informer_cache_interval: float = 60.0
    #: events the watch cache keeps for watches to resume from (None: the registry's
    #: default, 100,000); each keeps its object once an in-process watcher decoded it
    watch_cache_capacity: int | None = None
    controller_manager: ControllerManagerConfiguration = field(
        default_factory=ControllerManagerConfiguration)
    #: serve the owner-graph page at /ui/ (``kubegc serve``); its what-if runs on
    #: ``ui_planner`` (``kubegc.planner_cluster.ClusterSimulationFactory``)
    ui: bool = False
    ui_planner: SimulationFactory | None = None
    # authentication, authorization and admission: kube-apiserver's flags of these names
    #: --authorization-mode: the authorizers, in order (RBAC, AlwaysAllow, AlwaysDeny);
    #: ``system:masters`` is allowed everything before any of them, as upstream
    authorization_mode: tuple[str, ...] = ("RBAC",)
    #: --token-auth-file: a CSV of token,user,uid[,"group1,group2"]
    token_auth_file: Path | None = None
    #: --anonymous-auth: a request without a credential is system:anonymous
    anonymous_auth: bool = True
    #: --enable-admission-plugins / --disable-admission-plugins (upstream's names)
    enable_admission_plugins: tuple[str, ...] = ()
    disable_admission_plugins: tuple[str, ...] = ()
    #: --service-account-issuer: the ``iss`` of the ServiceAccount tokens this kubegc signs
    service_account_issuer: str = "https://kubernetes.default.svc.cluster.local"
    audit: AuditConfiguration = field(default_factory=AuditConfiguration)
    #: --proxy-client-* and --requestheader-*: the front proxy's credentials
    request_header: RequestHeaderConfiguration = field(
        default_factory=RequestHeaderConfiguration)
    #: --emulated-version and --feature-gates: the version every version-dependent
    #: behaviour follows (``/version``, the controllers' gates; docs/versions.md)
    feature_gate: FeatureGate = field(default_factory=FeatureGate)

    @property
    def effective_version(self) -> EffectiveVersion:
        return EffectiveVersion(self.feature_gate.emulation)
