"""The components ``kubegc serve`` runs, by the names ``--controllers`` uses (upstream's
kube-controller-manager names where one exists), with the section of the configuration
each is handed and the identity it acts as (cf. ``NewControllerDescriptors`` in
cmd/kube-controller-manager/app, and each start function's
``ClientBuilder.ClientOrDie("<name>")``).

Identities, as kube-controller-manager's with ``--use-service-account-credentials``: each
controller acts as its ServiceAccount in kube-system (``system:serviceaccount:kube-system:
<name>``), which the bootstrap policy binds to ``system:controller:<name>``; the shared
informers and leader election are the manager's own (``system:kube-controller-manager``).
The scheduler is ``system:kube-scheduler``, as kube-scheduler's kubeconfig names it. The
simulated kubelets act for every node as one user, ``system:kubegc:kubelet`` in
``system:nodes``, bound to ``system:node`` (kubegc has no Node authorizer to tell nodes
apart). Event expiry is the API server's own work upstream (etcd leases): it acts as
``system:apiserver``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kubegc.api.auth import (
    ALL_AUTHENTICATED,
    APISERVER,
    KUBE_SCHEDULER,
    NODES_GROUP,
    UserInfo,
)
from kubegc.component.config import ControllerManagerConfiguration
from kubegc.component.context import Controller, ControllerContext
from kubegc.controllermanager.deleters import recorded
from kubegc.controllermanager.garbagecollector import GarbageCollectorController
from kubegc.controllers.certificates.rootcacertpublisher import Publisher
from kubegc.controllers.clusterroleaggregation import ClusterRoleAggregationController
from kubegc.controllers.cronjob import CronJobController
from kubegc.controllers.daemon import DaemonSetsController
from kubegc.controllers.deployment import DeploymentController
from kubegc.controllers.disruption import DisruptionController
from kubegc.controllers.endpoint import EndpointsController
from kubegc.controllers.eventttl import EventTTLController
from kubegc.controllers.job import JobController
from kubegc.controllers.namespace import NamespaceController
from kubegc.controllers.nodelifecycle import NodeLifecycleController
from kubegc.controllers.podgc import PodGCController
from kubegc.controllers.replicaset import ReplicaSetController
from kubegc.controllers.replication import ReplicationManager
from kubegc.controllers.serviceaccount import ServiceAccountsController, TokensController
from kubegc.controllers.servicecidrs import ServiceCIDRsController
from kubegc.controllers.statefulset import StatefulSetController
from kubegc.controllers.tainteviction import TaintEvictionController
from kubegc.controllers.ttlafterfinished import TTLAfterFinishedController
from kubegc.controllers.volume.ephemeral import EphemeralController
from kubegc.controllers.volume.pvcprotection import PVCProtectionController
from kubegc.controllers.volume.pvprotection import PVProtectionController
from kubegc.kubelet import Kubelet
from kubegc.scheduler import Scheduler


class ControllerConstructor(Protocol):
    """A component's class: its ``name``, the ``component`` its events are recorded
    under, and its constructor from a ``ControllerContext``."""

    name: str
    component: str

    def __call__(self, ctx: ControllerContext[Any], /) -> Controller: ...


def _no_options(_: ControllerManagerConfiguration) -> None:
    return None


#: the simulated kubelets' user (the bootstrap policy's ``kubegc:kubelet`` binding)
KUBELET = UserInfo("system:kubegc:kubelet", groups=(NODES_GROUP, ALL_AUTHENTICATED))
SCHEDULER = UserInfo(KUBE_SCHEDULER, groups=(ALL_AUTHENTICATED,))


@dataclass(frozen=True)
class ControllerDescriptor:
    constructor: ControllerConstructor
    #: the section of the configuration the component is handed as ``ctx.options``
    options: Callable[[ControllerManagerConfiguration], object] = _no_options
    #: the kube-system ServiceAccount it acts as (upstream's ``ClientOrDie`` name)
    service_account: str = ""
    #: a user of its own instead; neither: the controller manager's
    user: UserInfo | None = None


CONTROLLERS: dict[str, ControllerDescriptor] = {
    "garbagecollector": ControllerDescriptor(GarbageCollectorController,
                                             lambda c: c.garbage_collector,
                                             service_account="generic-garbage-collector"),
    "namespace": ControllerDescriptor(recorded(NamespaceController, hold_back=True),
                                      lambda c: c.namespace,
                                      service_account="namespace-controller"),
    "kubelet": ControllerDescriptor(Kubelet, lambda c: c.kubelet, user=KUBELET),
    "scheduler": ControllerDescriptor(Scheduler, user=SCHEDULER),
    "endpoints": ControllerDescriptor(recorded(EndpointsController),
                                      lambda c: c.endpoint,
                                      service_account="endpoint-controller"),
    "podgc": ControllerDescriptor(recorded(PodGCController), lambda c: c.pod_gc,
                                  service_account="pod-garbage-collector"),
    "nodelifecycle": ControllerDescriptor(NodeLifecycleController, lambda c: c.node_lifecycle,
                                          service_account="node-controller"),
    # startTaintEvictionController: "taint-manager uses existing cluster role from
    # node-controller"
    "taint-eviction-controller": ControllerDescriptor(recorded(TaintEvictionController),
                                                      service_account="node-controller"),
    "eventttl": ControllerDescriptor(EventTTLController, lambda c: c.event_ttl,
                                     user=APISERVER),
    "replicaset": ControllerDescriptor(recorded(ReplicaSetController),
                                       service_account="replicaset-controller"),
    "replicationcontroller": ControllerDescriptor(recorded(ReplicationManager),
                                                  service_account="replication-controller"),
    "deployment": ControllerDescriptor(recorded(DeploymentController),
                                       service_account="deployment-controller"),
    "job": ControllerDescriptor(recorded(JobController), service_account="job-controller"),
    "ttl-after-finished-controller": ControllerDescriptor(
        recorded(TTLAfterFinishedController), lambda c: c.ttl_after_finished,
        service_account="ttl-after-finished-controller"),
    "disruption": ControllerDescriptor(DisruptionController,
                                       service_account="disruption-controller"),
    "cronjob": ControllerDescriptor(recorded(CronJobController),
                                    service_account="cronjob-controller"),
    "statefulset": ControllerDescriptor(recorded(StatefulSetController),
                                        service_account="statefulset-controller"),
    "daemonset": ControllerDescriptor(recorded(DaemonSetsController),
                                      service_account="daemon-set-controller"),
    "serviceaccount": ControllerDescriptor(ServiceAccountsController,
                                           lambda c: c.service_account,
                                           service_account="service-account-controller"),
    # upstream's runs on the controller manager's root client (rootClientBuilder)
    "serviceaccount-token": ControllerDescriptor(recorded(TokensController),
                                                 lambda c: c.service_account_token),
    "root-ca-cert-publisher": ControllerDescriptor(Publisher,
                                                   lambda c: c.root_ca_cert_publisher,
                                                   service_account="root-ca-cert-publisher"),
    "clusterrole-aggregation": ControllerDescriptor(
        ClusterRoleAggregationController,
        service_account="clusterrole-aggregation-controller"),
    "ephemeral-volume-controller": ControllerDescriptor(
        EphemeralController, lambda c: c.ephemeral_volume,
        service_account="ephemeral-volume-controller"),
    "persistentvolumeclaim-protection-controller": ControllerDescriptor(
        PVCProtectionController, service_account="pvc-protection-controller"),
    "persistentvolume-protection-controller": ControllerDescriptor(
        PVProtectionController, service_account="pv-protection-controller"),
    "service-cidr-controller": ControllerDescriptor(
        ServiceCIDRsController, service_account="service-cidrs-controller"),
}
