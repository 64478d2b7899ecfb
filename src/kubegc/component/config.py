"""The components' configuration, each default written once (cf. upstream's component
configs: ``KubeControllerManagerConfiguration`` with one section per controller, each
defaulted in ``pkg/controller/<name>/config/v1alpha1/defaults.go``, and the kubelet's
``KubeletConfiguration``).

``ControllerManagerConfiguration`` is the controller manager's part of the cluster's
configuration (``kubegc.cluster_config.ClusterConfig``); its sections are what each component is
handed as ``ControllerContext.options``. ``kubegc serve``'s flags, ``kubegc.testing.Cluster``,
the components' constructors and the benches take their defaults from these fields (read
them off the class: ``KubeletConfiguration.nodes``); nothing else writes a default for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubegc.api.features import FeatureGate
from kubegc.tokens import ServiceAccountKey


@dataclass
class GarbageCollectorControllerConfiguration:
    #: workers deciding deletions (upstream ``--concurrent-gc-syncs``)
    concurrent_gc_syncs: int = 20
    #: seconds between re-discoveries of the deletable resources (upstream: 30 s, fixed,
    #: in ``startGarbageCollectorController``)
    gc_sync_period: float = 30.0
    #: seconds the ``DeletionRecord`` of a decision is kept (kubegc's own)
    decision_ttl: float = 7 * 24 * 3600.0
    #: keep the decisions in memory (``GarbageCollectorController.memory``) instead of
    #: writing DeletionRecords through the API: the planner's simulation
    records_in_memory: bool = False


@dataclass
class NamespaceControllerConfiguration:
    #: namespaces emptied at once (upstream ``--concurrent-namespace-syncs``)
    concurrent_namespace_syncs: int = 10


@dataclass
class EndpointControllerConfiguration:
    #: Services synced at once (upstream ``--concurrent-endpoint-syncs``)
    concurrent_endpoint_syncs: int = 5


@dataclass
class TTLAfterFinishedControllerConfiguration:
    #: Jobs checked at once (upstream ``--concurrent-ttl-after-finished-syncs``,
    #: ``TTLAfterFinishedControllerConfiguration.ConcurrentTTLSyncs``)
    concurrent_ttl_syncs: int = 5


@dataclass
class EphemeralVolumeControllerConfiguration:
    #: Pods whose ephemeral volumes are handled at once (upstream
    #: ``--concurrent-ephemeralvolume-syncs``, ``EphemeralVolumeControllerConfiguration.
    #: ConcurrentEphemeralVolumeSyncs``)
    concurrent_ephemeral_volume_syncs: int = 5


@dataclass
class PodGCControllerConfiguration:
    #: terminated pods kept before the oldest are deleted, 0: keep all (upstream
    #: ``--terminated-pod-gc-threshold``)
    terminated_pod_gc_threshold: int = 12500
    #: seconds between pod GC passes (upstream ``gcCheckPeriod``)
    gc_check_period: float = 20.0
    #: seconds a missing node is awaited before its pods go (upstream ``quarantineTime``)
    quarantine_time: float = 40.0


@dataclass
class NodeLifecycleControllerConfiguration:
    """The node lifecycle controller (upstream ``NodeLifecycleControllerConfiguration`` and
    kube-controller-manager's flags of the same names)."""

    #: seconds a running node may go without a heartbeat (status or Lease) before it is
    #: marked Unknown (``--node-monitor-grace-period``: 50 s from 1.32, kubernetes#126287)
    node_monitor_grace_period: float = 50.0
    #: the same for a node that never posted a Ready condition
    #: (``--node-startup-grace-period``)
    node_startup_grace_period: float = 60.0
    #: seconds between two looks at every node (``--node-monitor-period``)
    node_monitor_period: float = 5.0
    #: nodes tainted per second in a healthy zone (``--node-eviction-rate``)
    node_eviction_rate: float = 0.1
    #: nodes tainted per second in a partially disrupted zone
    #: (``--secondary-node-eviction-rate``; 0 in zones of at most the threshold below)
    secondary_node_eviction_rate: float = 0.01
    #: zone size above which the secondary rate applies (``--large-cluster-size-threshold``)
    large_cluster_size_threshold: int = 50
    #: fraction of not-Ready nodes (and more than 2) that makes a zone partially disrupted
    #: (``--unhealthy-zone-threshold``)
    unhealthy_zone_threshold: float = 0.55


@dataclass
class EventTTLConfiguration:
    #: seconds an Event lives after its last write (kube-apiserver ``--event-ttl``)
    event_ttl: float = 3600.0


@dataclass
class ServiceAccountControllerConfiguration:
    #: ServiceAccounts ensured in every active namespace (upstream
    #: ``ServiceAccountsControllerOptions.ServiceAccounts``)
    service_accounts: list[str] = field(default_factory=lambda: ["default"])


@dataclass
class ServiceAccountTokenControllerConfiguration:
    """The tokens controller (kube-controller-manager's ``--service-account-private-key-file``
    and ``--root-ca-file``); ``kubegc.cluster`` hands it the ServiceAccount key the API
    server verifies with and the serving CA. Without a key it does nothing."""

    key: ServiceAccountKey | None = field(default=None, repr=False)
    #: PEM written as ``ca.crt`` into every token Secret ("" with TLS off: left out)
    root_ca: str = ""


@dataclass
class RootCACertPublisherConfiguration:
    #: PEM of the CA bundle published as ``kube-root-ca.crt`` in every namespace (upstream:
    #: ``--root-ca-file``, else the CA of the controller manager's client config).
    #: ``kubegc.cluster`` fills it with the serving CA; with TLS off it stays ``""``.
    root_ca: str = ""


@dataclass
class KubeletConfiguration:
    """The simulated kubelets; pods' ``kubegc.io/*`` annotations override the pod
    defaults (docs/kubelet.md)."""

    #: simulated nodes, one kubelet each
    nodes: int = 1
    #: allocatable pods of each node (upstream ``maxPods``)
    node_max_pods: int = 110
    #: seconds a pod's processes take to exit after TERM
    pod_exit_delay: float = 0.0
    #: seconds a preStop hook runs
    pod_prestop_delay: float = 0.0
    #: processes ignore TERM and die only at KILL
    pod_ignore_term: bool = False
    #: seconds a ``Never``/``OnFailure`` pod (a Job's) runs before it exits
    job_pod_duration: float = 0.0


@dataclass
class LeaderElectionConfiguration:
    """Which server of several on one store runs the components (upstream's
    ``LeaderElectionConfiguration`` of k8s.io/component-base, defaulted by
    ``RecommendedDefaultLeaderElectionConfiguration``; kube-controller-manager's
    ``--leader-elect*`` flags). Durations are real seconds, whatever ``--time-scale``."""

    #: run the components only while holding the Lease (off: run them, write no Lease)
    leader_elect: bool = True
    #: how long a standby waits, after it last saw the Lease renewed, before taking it
    lease_duration: float = 15.0
    #: how long the leader keeps trying to renew before it stops leading
    renew_deadline: float = 10.0
    #: seconds between tries to acquire or renew
    retry_period: float = 2.0
    resource_name: str = "kube-controller-manager"
    resource_namespace: str = "kube-system"


@dataclass
class ControllerManagerConfiguration:
    """What the controller manager runs, and each component's section."""

    #: ``*`` for all, a name to add one, ``-name`` to drop one (``kubegc serve --controllers``)
    controllers: list[str] = field(default_factory=lambda: ["*"])
    #: the feature gates at the emulated version (``--feature-gates``,
    #: ``--emulated-version``); the composition root sets them from
    #: ``ClusterConfig.feature_gate``, which the API server follows too
    feature_gate: FeatureGate = field(default_factory=FeatureGate)
    #: the deleting controllers besides the garbage collector (pod GC, taint eviction ...)
    #: hand their ``Deletion``s to one in-memory sink (``ControllerManager.deletions``)
    #: instead of writing DeletionRecords through the API: the planner's simulation
    deletions_in_memory: bool = False
    leader_election: LeaderElectionConfiguration = field(
        default_factory=LeaderElectionConfiguration)
    garbage_collector: GarbageCollectorControllerConfiguration = field(
        default_factory=GarbageCollectorControllerConfiguration)
    namespace: NamespaceControllerConfiguration = field(
        default_factory=NamespaceControllerConfiguration)
    endpoint: EndpointControllerConfiguration = field(
        default_factory=EndpointControllerConfiguration)
    pod_gc: PodGCControllerConfiguration = field(default_factory=PodGCControllerConfiguration)
    ttl_after_finished: TTLAfterFinishedControllerConfiguration = field(
        default_factory=TTLAfterFinishedControllerConfiguration)
    ephemeral_volume: EphemeralVolumeControllerConfiguration = field(
        default_factory=EphemeralVolumeControllerConfiguration)
    node_lifecycle: NodeLifecycleControllerConfiguration = field(
        default_factory=NodeLifecycleControllerConfiguration)
    event_ttl: EventTTLConfiguration = field(default_factory=EventTTLConfiguration)
    kubelet: KubeletConfiguration = field(default_factory=KubeletConfiguration)
    service_account: ServiceAccountControllerConfiguration = field(
        default_factory=ServiceAccountControllerConfiguration)
    root_ca_cert_publisher: RootCACertPublisherConfiguration = field(
        default_factory=RootCACertPublisherConfiguration)
    service_account_token: ServiceAccountTokenControllerConfiguration = field(
        default_factory=ServiceAccountTokenControllerConfiguration)
