"""The planner's simulations: an in-memory kubegc built through the composition root
(``kubegc.cluster.Cluster``), for ``kubegc plan`` and the owner-graph page's what-if
(``kubegc.tools.plan.SimulationFactory``).

A module of its own below the command line: ``kubegc serve``, ``kubegc plan`` and
``kubegc ui`` hand it to the tools, which may not import the cluster themselves. The
cluster is imported when a simulation starts, not with the command line.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from kubegc.api.auth import UserInfo
from kubegc.api.features import FeatureGate
from kubegc.api.version import BINARY_VERSION, MajorMinor
from kubegc.cluster_config import ClusterConfig
from kubegc.component.config import (
    ControllerManagerConfiguration,
    GarbageCollectorControllerConfiguration,
    KubeletConfiguration,
    LeaderElectionConfiguration,
)
from kubegc.storage.endpoint import MEMORY


class _ClusterSimulation:
    """A ``kubegc.tools.plan.Simulation`` over a ``Cluster`` (see ClusterSimulationFactory)."""

    def __init__(self, cluster: Any, controllers: list[str]) -> None:
        self.cluster = cluster
        self._controllers = controllers

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
        manager = self.cluster.controller_manager
        gc = manager.get("garbagecollector") if manager is not None else None
        return list(gc.memory.records) if gc is not None and gc.memory is not None else []

    def deletions(self) -> Any:
        manager = self.cluster.controller_manager
        memory = manager.deletions if manager is not None else None
        return list(memory.deletions) if memory is not None else []

    async def evict(self, namespace: str, name: str) -> None:
        from kubegc.api.auth import as_user
        from kubegc.registry.generic.rest import WriteOptions

        t, storage = self.cluster.registry.route("", "v1", "pods", namespace, "eviction")
        body = {"apiVersion": "policy/v1", "kind": "Eviction",
                "metadata": {"name": name, "namespace": namespace}}
        with as_user(PLAN_USER):  # the plan's user, as the DeletionRecord names it
            await storage.create_named(t, name, body, WriteOptions())

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


#: who sends the plan's evictions (``kubegc plan evict|drain``)
PLAN_USER = UserInfo("kubegc-plan", groups=("system:masters", "system:authenticated"))


#: The simulation's watch cache: its watchers are in-process and never fall behind, and
#: the recorder starts each watch right after its list; a ring of 100,000 events would keep
#: the decoded objects of a whole 100,000-object cascade.
PLAN_WATCH_CACHE = 10_000


class ClusterSimulationFactory:
    """The planner's ``SimulationFactory``: an in-memory kubegc (no HTTP) loaded with the
    snapshot, running only the controllers of ``PLAN_CONTROLLERS`` (those of them this
    kubegc has) on the planner's clock."""

    def node_names(self, count: int) -> list[str]:
        from kubegc.kubelet.nodes import node_names

        return node_names(count)

    @contextlib.asynccontextmanager
    async def start(self, objects: list[dict[str, Any]], *, clock: Any, nodes: int,
                    emulated_version: MajorMinor | None = None
                    ) -> AsyncIterator[_ClusterSimulation]:
        from kubegc.cluster import Cluster
        from kubegc.controllermanager import CONTROLLERS
        from kubegc.tools.plan import PLAN_CONTROLLERS

        controllers = [c for c in PLAN_CONTROLLERS if c in CONTROLLERS]
        cluster = Cluster(ClusterConfig(
            storage=MEMORY, serve_http=False, snapshot=objects, clock=clock,
            compaction_interval=0, watch_cache_capacity=PLAN_WATCH_CACHE,
            # the source's version, whatever kubegc's own: a version outside
            # --emulated-version's range still has its gates' defaults (pods first or not)
            feature_gate=FeatureGate(emulated_version or BINARY_VERSION),
            # a plan never calls the cluster's admission webhooks (it must not write to
            # anything outside its simulation)
            disable_admission_plugins=("MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"),
            controller_manager=ControllerManagerConfiguration(
                controllers=controllers, kubelet=KubeletConfiguration(nodes=nodes),
                deletions_in_memory=True,
                garbage_collector=GarbageCollectorControllerConfiguration(
                    records_in_memory=True),
                # the snapshot's own Lease names another cluster's leader: never wait on it
                leader_election=LeaderElectionConfiguration(leader_elect=False))))
        await cluster.start()
        # the snapshot's aggregated APIs as it recorded them: an unavailable one fails
        # discovery in the simulation as on the cluster (a namespace deletion waits on it)
        if cluster.registry is not None:
            cluster.registry.aggregation.load_recorded(
                [o for o in objects if o.get("kind") == "APIService"
                 and str(o.get("apiVersion") or "").startswith("apiregistration.k8s.io/")])
            cluster.registry.discovery_changed()
        try:
            yield _ClusterSimulation(cluster, controllers)
        finally:
            await cluster.stop()
