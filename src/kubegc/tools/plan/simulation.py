"""What the planner needs from a simulated cluster, injected by the composition root.

The planner may not build a kubegc itself (tools sit below ``kubegc.cluster``), so it
takes a ``SimulationFactory``: given the objects of a snapshot it starts an in-memory
kubegc loaded with them as they are (uids, ownerReferences, finalizers and
deletionTimestamps kept), running only the controllers that act on a deletion
(``PLAN_CONTROLLERS``), on the planner's ``ManualClock``. ``kubegc.planner_cluster``
provides the real one (through ``kubegc.cluster``); tests may provide their own.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Protocol

from kubegc.api.clock import ManualClock
from kubegc.api.types import Obj
from kubegc.api.version import MajorMinor
from kubegc.client.interface import Client
from kubegc.component.deletions import Deletion
from kubegc.controllers.garbagecollector.records import DeletionRecord

#: The controllers a plan runs, and nothing else (no workload controllers: nothing is
#: recreated while the delete proceeds; ``workloads`` names the workloads that would react).
#: Pod GC deletes the pods of a deleted node. The
#: protection controllers release the finalizers of claims no pod uses any more and of
#: volumes not Bound: a claim deleted with its pod (an ephemeral volume's) goes once the pod
#: is gone, a claim in use waits for its pods. TTL-after-finished deletes the finished Jobs
#: whose TTL runs out within the horizon (an orphaned Job it deletes is no survivor). The
#: endpoints and token controllers delete a deleted Service's Endpoints and a deleted
#: ServiceAccount's token Secrets (``scope`` brings them in).
#: The taint-eviction controller deletes the pods of nodes tainted NoExecute (already in the
#: source, or by ``plan taint``), the node lifecycle controller taints a node whose kubelet
#: stopped (``plan stop-kubelet``), and the disruption controller keeps the budgets' status
#: that ``pods/eviction`` decides on (``plan evict``, ``plan drain``). The service-cidr
#: controller holds a deleted ServiceCIDR while IPAddresses of its range need it (1.33+).
PLAN_CONTROLLERS = ("garbagecollector", "kubelet", "namespace", "podgc",
                    "persistentvolumeclaim-protection-controller",
                    "persistentvolume-protection-controller",
                    "ttl-after-finished-controller", "endpoints", "serviceaccount-token",
                    "taint-eviction-controller", "nodelifecycle", "disruption",
                    "service-cidr-controller")


class Simulation(Protocol):
    """A running in-memory kubegc."""

    @property
    @abstractmethod
    def client(self) -> Client: ...

    @property
    @abstractmethod
    def skipped(self) -> list[Obj]:
        """Snapshot objects of kinds the simulation does not serve (not loaded)."""

    @property
    @abstractmethod
    def controllers(self) -> list[str]:
        """The controllers actually running (a subset of ``PLAN_CONTROLLERS``)."""

    @abstractmethod
    def records(self) -> Sequence[DeletionRecord]:
        """The garbage collector's decisions so far, oldest first (kept in memory: the
        simulation writes no DeletionRecord through its API)."""

    @abstractmethod
    def deletions(self) -> Sequence[Deletion]:
        """The other deleting controllers' DELETEs so far (pod GC's ...), oldest first
        (kept in memory as the garbage collector's records)."""

    @abstractmethod
    async def evict(self, namespace: str, name: str) -> None:
        """``POST pods/<name>/eviction`` (a policy/v1 Eviction) in the simulation, answered
        by its registry; raises the refusal's ``StatusError``."""

    @abstractmethod
    async def settle(self, timeout: float) -> None:
        """Return once nothing is in flight (informers caught up, queues drained; timers
        waiting on the clock do not count); raise ``TimeoutError`` after ``timeout``
        real seconds."""


@dataclass
class OpContext:
    """What an operation of the plan acts on: the running simulation, its clock, the
    source nodes' simulated names and the clock's reading when the operation was issued."""

    sim: Simulation
    clock: ManualClock
    node_map: dict[str, str] = field(default_factory=dict)
    origin: float = 0.0


class SimulationFactory(Protocol):
    @abstractmethod
    def node_names(self, count: int) -> list[str]:
        """The names of the ``count`` nodes whose pods the kubelet simulator runs."""

    @abstractmethod
    def start(self, objects: list[Obj], *, clock: ManualClock, nodes: int,
              emulated_version: MajorMinor | None = None
              ) -> AbstractAsyncContextManager[Simulation]:
        """Start a simulation loaded with ``objects``, behaving as Kubernetes
        ``emulated_version`` (the feature gates' defaults at it: the namespace controller's
        order; None: kubegc's own version); stopped when the context exits."""
