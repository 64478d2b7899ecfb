"""The components ``kubegc serve`` runs, by the names ``--controllers`` uses (upstream's
kube-controller-manager names where one exists), with the section of the configuration
each is handed (cf. ``NewControllerDescriptors`` in cmd/kube-controller-manager/app)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kubegc.component.config import ControllerManagerConfiguration
from kubegc.component.context import Controller, ControllerContext
from kubegc.controllermanager.garbagecollector import GarbageCollectorController
from kubegc.controllers.certificates.rootcacertpublisher import Publisher
from kubegc.controllers.cronjob import CronJobController
from kubegc.controllers.daemon import DaemonSetsController
from kubegc.controllers.deployment import DeploymentController
from kubegc.controllers.endpoint import EndpointsController
from kubegc.controllers.eventttl import EventTTLController
from kubegc.controllers.job import JobController
from kubegc.controllers.namespace import NamespaceController
from kubegc.controllers.podgc import PodGCController
from kubegc.controllers.replicaset import ReplicaSetController
from kubegc.controllers.replication import ReplicationManager
from kubegc.controllers.serviceaccount import ServiceAccountsController, TokensController
from kubegc.controllers.statefulset import StatefulSetController
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


@dataclass(frozen=True)
class ControllerDescriptor:
    constructor: ControllerConstructor
    #: the section of the configuration the component is handed as ``ctx.options``
    options: Callable[[ControllerManagerConfiguration], object] = _no_options


CONTROLLERS: dict[str, ControllerDescriptor] = {
    "garbagecollector": ControllerDescriptor(GarbageCollectorController,
                                             lambda c: c.garbage_collector),
    "namespace": ControllerDescriptor(NamespaceController, lambda c: c.namespace),
    "kubelet": ControllerDescriptor(Kubelet, lambda c: c.kubelet),
    "scheduler": ControllerDescriptor(Scheduler),
    "endpoints": ControllerDescriptor(EndpointsController, lambda c: c.endpoint),
    "podgc": ControllerDescriptor(PodGCController, lambda c: c.pod_gc),
    "eventttl": ControllerDescriptor(EventTTLController, lambda c: c.event_ttl),
    "replicaset": ControllerDescriptor(ReplicaSetController),
    "replicationcontroller": ControllerDescriptor(ReplicationManager),
    "deployment": ControllerDescriptor(DeploymentController),
    "job": ControllerDescriptor(JobController),
    "cronjob": ControllerDescriptor(CronJobController),
    "statefulset": ControllerDescriptor(StatefulSetController),
    "daemonset": ControllerDescriptor(DaemonSetsController),
    "serviceaccount": ControllerDescriptor(ServiceAccountsController,
                                           lambda c: c.service_account),
    "serviceaccount-token": ControllerDescriptor(TokensController,
                                                 lambda c: c.service_account_token),
    "root-ca-cert-publisher": ControllerDescriptor(Publisher,
                                                   lambda c: c.root_ca_cert_publisher),
}
