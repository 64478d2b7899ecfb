"""The controllers ``kubegc serve`` knows, by the names ``--controllers`` uses (upstream's
kube-controller-manager names where one exists)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kubegc.controllers.cronjob import CronJobController
from kubegc.controllers.daemonset import DaemonSetsController
from kubegc.controllers.deployment import DeploymentController
from kubegc.controllers.endpoints import EndpointsController
from kubegc.controllers.eventttl import EventTTLController
from kubegc.controllers.gc_controller import GarbageCollectorController
from kubegc.controllers.job import JobController
from kubegc.controllers.kubelet import Kubelet
from kubegc.controllers.namespace import NamespaceController
from kubegc.controllers.podgc import PodGCController
from kubegc.controllers.replicaset import ReplicaSetController, ReplicationManager
from kubegc.controllers.scheduler import Scheduler
from kubegc.controllers.statefulset import StatefulSetController

if TYPE_CHECKING:
    from kubegc.controllers.manager import Controller, ControllerManager

Factory = Callable[["ControllerManager"], "Controller"]

CONTROLLERS: dict[str, Factory] = {
    "garbagecollector": GarbageCollectorController,
    "namespace": NamespaceController,
    "kubelet": Kubelet,
    "scheduler": Scheduler,
    "endpoints": EndpointsController,
    "podgc": PodGCController,
    "eventttl": EventTTLController,
    "replicaset": ReplicaSetController,
    "replicationcontroller": ReplicationManager,
    "deployment": DeploymentController,
    "job": JobController,
    "cronjob": CronJobController,
    "statefulset": StatefulSetController,
    "daemonset": DaemonSetsController,
}
