"""The node lifecycle controller (cf. pkg/controller/nodelifecycle/node_lifecycle_controller.go,
``Controller``), its taint-based part: every ``node_monitor_period`` seconds
(``monitorNodeHealth``) each node's health is judged from its status heartbeats and its
Lease (``health``); a node silent for the grace period gets its conditions set Unknown
(reason ``NodeStatusUnknown``, "Kubelet stopped posting node status."), the event
``NodeNotReady`` ("Node N status is now: NodeNotReady") and its pods' Ready condition set
False (``MarkPodsNotReady``: a Warning ``NodeNotReady`` "Node is not ready" on each).

``processTaintBaseEviction``: a node whose Ready condition is False is tainted
``node.kubernetes.io/not-ready:NoExecute``, one whose Ready is Unknown
``node.kubernetes.io/unreachable:NoExecute`` (swapped at once when it has the other one;
otherwise through its zone's rate-limited queue, ``doNoExecuteTaintingPass``, here run
after each monitor pass); a Ready node loses both (``markNodeAsReachable``). Zones
(``handleDisruption``): a zone whose nodes are all not Ready is fully disrupted; when every
zone is, the controller stops tainting and removes the taints from every node, as upstream
does when it cannot tell a control-plane partition from node failures — so a cluster of one
node that stops is never tainted. A zone with more than 2 not-Ready nodes and at least
``unhealthy_zone_threshold`` of them is partially disrupted: tainting goes on at
``secondary_node_eviction_rate`` in zones larger than ``large_cluster_size_threshold``, not
at all in smaller ones.

Not built: the pod-eviction path of clusters without taint-based eviction (gone upstream),
node labels reconciliation, the ``node.kubernetes.io/exclude-disruption`` label.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
from collections.abc import Awaitable, Callable

from kubegc.api.clock import format_time
from kubegc.api.errors import StatusError, is_conflict, is_not_found
from kubegc.api.meta import name_of, namespace_of
from kubegc.api.pod import NODES, PODS, update_pod_condition
from kubegc.api.resources import GroupVersionResource
from kubegc.api.taints import (
    NO_EXECUTE,
    TAINT_NODE_NOT_READY,
    TAINT_NODE_UNREACHABLE,
    Taint,
    taint_key_exists,
)
from kubegc.api.types import Obj
from kubegc.client.cache import FuncHandler
from kubegc.client.interface import PatchType
from kubegc.component.config import NodeLifecycleControllerConfiguration
from kubegc.component.context import ControllerContext
from kubegc.controllers.controller_utils import (
    POD_NODE_NAME_INDEX as NODE_INDEX,
)
from kubegc.controllers.controller_utils import (
    ensure_indexers,
    pod_node_name_index_func,
)
from kubegc.controllers.nodelifecycle.health import (
    NodeHealth,
    ZoneState,
    compute_zone_state,
    get_node_condition,
    grace_period,
    is_overdue,
    mark_unknown,
    observe,
    zone_key,
)

log = logging.getLogger(__name__)

LEASES = GroupVersionResource("coordination.k8s.io", "v1", "leases")
NODE_LEASE_NAMESPACE = "kube-node-lease"
#: upstream ``nodeStatusUpdateRetry`` / the taint helpers' retries
RETRIES = 5


class ZoneTainter:
    """One zone's ``RateLimitedTimedQueue`` of nodes to taint: a set in insertion order and
    a token bucket of burst 1 (``evictionLimiterBurst``) at ``qps`` (0: never)."""

    def __init__(self, qps: float) -> None:
        self.qps = qps
        self.queue: dict[str, None] = {}
        self._next_token = 0.0

    def add(self, name: str) -> bool:
        if name in self.queue:
            return False
        self.queue[name] = None
        return True

    def remove(self, name: str) -> None:
        self.queue.pop(name, None)

    def swap_limiter(self, qps: float) -> None:
        self.qps = qps

    async def try_each(self, now: float, fn: Callable[[str], Awaitable[bool]]) -> None:
        for name in list(self.queue):
            if self.qps <= 0 or now < self._next_token:
                return
            self._next_token = now + 1.0 / self.qps
            if await fn(name):
                self.queue.pop(name, None)


class NodeLifecycleController:
    name = "nodelifecycle"
    component = "node-controller"

    def __init__(self, ctx: ControllerContext[NodeLifecycleControllerConfiguration]) -> None:
        self.opts = ctx.options
        self.client, self.clock, self.recorder = ctx.client, ctx.clock, ctx.recorder
        self.nodes = ctx.informer_factory.for_resource(NODES)
        self.pods = ctx.informer_factory.for_resource(PODS)
        self.leases = ctx.informer_factory.for_resource(LEASES)
        self.node_health: dict[str, NodeHealth] = {}
        self.zone_states: dict[str, ZoneState] = {}
        self.zone_tainters: dict[str, ZoneTainter] = {}
        self.nodes_to_retry: set[str] = set()
        self._busy = False
        self._synced = False
        self._task: asyncio.Task[None] | None = None

    # -- Controller protocol ------------------------------------------------------------

    async def start(self) -> None:
        ensure_indexers(self.pods, {NODE_INDEX: pod_node_name_index_func})
        self.nodes.add_event_handler(FuncHandler(delete=self._on_node_delete))
        self.recorder.start()
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.recorder.stop()

    def is_idle(self) -> bool:
        """Not in a monitor pass; the next one waits on the clock."""
        return not self._busy and self.recorder.is_idle()

    def ready(self) -> bool:
        return self._synced

    def _on_node_delete(self, obj: object) -> None:
        node = getattr(obj, "obj", obj)
        if isinstance(node, dict):
            name = name_of(node)
            self.node_health.pop(name, None)
            self.nodes_to_retry.discard(name)
            for tainter in self.zone_tainters.values():
                tainter.remove(name)

    async def _run(self) -> None:
        self._busy = True
        try:
            await asyncio.gather(self.nodes.wait_for_sync(), self.pods.wait_for_sync(),
                                 self.leases.wait_for_sync())
            self._synced = True
        finally:
            self._busy = False
        while True:
            self._busy = True
            try:
                await self.monitor_node_health()
                await self.do_no_execute_tainting_pass()
            except Exception:
                log.exception("node lifecycle pass failed")
            finally:
                self._busy = False
            await self.clock.sleep(self.opts.node_monitor_period)

    # -- monitorNodeHealth ----------------------------------------------------------------

    async def monitor_node_health(self) -> None:
        nodes = sorted(self.nodes.indexer.list(), key=name_of)
        zone_conditions: dict[str, list[dict[str, object] | None]] = {}
        for node in nodes:
            zone = zone_key(node)
            if zone not in self.zone_tainters:
                self.zone_tainters[zone] = ZoneTainter(self.opts.node_eviction_rate)
                self.zone_states.setdefault(zone, ZoneState.INITIAL)
            try:
                observed, current = await self.try_update_node_health(node)
            except StatusError as exc:
                log.error("updating health of node %s failed: %s", name_of(node), exc)
                continue
            zone_conditions.setdefault(zone, []).append(current)
            if current is not None:
                await self._after_health(node, observed, current)
        await self.handle_disruption(zone_conditions, nodes)

    async def _after_health(self, node: Obj, observed: dict[str, object],
                            current: dict[str, object]) -> None:
        name = name_of(node)
        await self.process_taint_base_eviction(node, observed)
        status_changed = current.get("status") != "True" and observed.get("status") == "True"
        retry = name in self.nodes_to_retry and observed.get("status") != "True"
        if status_changed:
            self.recorder.event(node, "Normal", "NodeNotReady",
                                f"Node {name} status is now: NodeNotReady")
        if (status_changed or retry) and not await self.mark_pods_not_ready(name):
            self.nodes_to_retry.add(name)
            return
        self.nodes_to_retry.discard(name)

    async def try_update_node_health(self, node: Obj
                                     ) -> tuple[dict[str, object], dict[str, object] | None]:
        """``tryUpdateNodeHealth``: (the Ready condition as read, as it now is)."""
        name = name_of(node)
        now = self.clock.now()
        lease = self.leases.indexer.get_by_key(f"{NODE_LEASE_NAMESPACE}/{name}")
        health = observe(node, lease, self.node_health.get(name), now)
        self.node_health[name] = health
        ready = get_node_condition(node, "Ready")
        observed = ready or {"type": "Ready", "status": "Unknown"}
        grace = grace_period(node, monitor=self.opts.node_monitor_grace_period,
                             startup=self.opts.node_startup_grace_period)
        if not is_overdue(health, grace, now):
            return observed, ready
        updated = mark_unknown(node, now)
        current = get_node_condition(updated, "Ready")
        if current != ready:
            log.info("node %s hasn't been updated for %s; marking its conditions Unknown",
                     name, now - health.probe_timestamp)
            await self._update_status(updated)
        return observed, current

    async def _update_status(self, node: Obj) -> None:
        for _ in range(RETRIES):
            try:
                await self.client.update(NODES, node, subresource="status")
                return
            except StatusError as exc:
                if not is_conflict(exc):
                    raise
                live = await self.client.get(NODES, name_of(node))
                node = mark_unknown(live, self.clock.now())

    async def mark_pods_not_ready(self, node_name: str) -> bool:
        """``MarkPodsNotReady``: each pod's Ready condition False, a Warning each."""
        ok = True
        stamp = format_time(self.clock.now())
        for pod in self.pods.indexer.by_index(NODE_INDEX, node_name):
            status = copy.deepcopy(pod.get("status") or {})
            ready = next((c for c in status.get("conditions") or []
                          if c.get("type") == "Ready"), None)
            if ready is None or not update_pod_condition(status, {**ready, "status": "False"},
                                                         stamp):
                continue
            try:
                await self.client.patch(
                    PODS, name_of(pod), {"metadata": {"uid": pod["metadata"].get("uid")},
                                         "status": {"conditions": status["conditions"]}},
                    namespace=namespace_of(pod), patch_type=PatchType.MERGE,
                    subresource="status")
            except StatusError as exc:
                if is_not_found(exc):
                    continue
                log.info("failed to update status of pod %s: %s", name_of(pod), exc)
                ok = False
                continue
            self.recorder.event(pod, "Warning", "NodeNotReady", "Node is not ready")
        return ok

    # -- taints (processTaintBaseEviction, doNoExecuteTaintingPass) ------------------------

    async def process_taint_base_eviction(self, node: Obj, observed: dict[str, object]) -> None:
        taints = (node.get("spec") or {}).get("taints") or []
        status = observed.get("status")
        tainter = self.zone_tainters[zone_key(node)]
        name = name_of(node)
        if status == "False":
            if taint_key_exists(taints, TAINT_NODE_UNREACHABLE):
                await self.swap_node_controller_taint(name, TAINT_NODE_NOT_READY,
                                                      TAINT_NODE_UNREACHABLE)
            else:
                self._mark_for_tainting(tainter, name, taints, TAINT_NODE_NOT_READY)
        elif status == "Unknown":
            if taint_key_exists(taints, TAINT_NODE_NOT_READY):
                await self.swap_node_controller_taint(name, TAINT_NODE_UNREACHABLE,
                                                      TAINT_NODE_NOT_READY)
            else:
                self._mark_for_tainting(tainter, name, taints, TAINT_NODE_UNREACHABLE)
        elif status == "True":
            await self.mark_node_as_reachable(node)

    @staticmethod
    def _mark_for_tainting(tainter: ZoneTainter, name: str, taints: list[Taint],
                           key: str) -> None:
        if not taint_key_exists(taints, key):
            tainter.remove(name)
        tainter.add(name)

    async def do_no_execute_tainting_pass(self) -> None:
        now = self.clock.monotonic()
        for tainter in self.zone_tainters.values():
            await tainter.try_each(now, self._taint_one)

    async def _taint_one(self, name: str) -> bool:
        node = self.nodes.indexer.get_by_key(name)
        if node is None:
            return True
        ready = get_node_condition(node, "Ready")
        if ready is None or ready.get("status") == "True":
            return True
        add, remove = ((TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE)
                       if ready.get("status") == "False"
                       else (TAINT_NODE_UNREACHABLE, TAINT_NODE_NOT_READY))
        return await self.swap_node_controller_taint(name, add, remove)

    async def mark_node_as_reachable(self, node: Obj) -> None:
        taints = (node.get("spec") or {}).get("taints") or []
        if any(taint_key_exists(taints, k) for k in (TAINT_NODE_NOT_READY,
                                                     TAINT_NODE_UNREACHABLE)):
            await self.swap_node_controller_taint(name_of(node), None, TAINT_NODE_NOT_READY,
                                                  TAINT_NODE_UNREACHABLE)
        self.zone_tainters[zone_key(node)].remove(name_of(node))

    async def swap_node_controller_taint(self, name: str, add: str | None,
                                         *remove: str) -> bool:
        """``SwapNodeControllerTaint``: add the NoExecute taint ``add`` (``timeAdded``
        now), remove ``remove``, in one update of the node, retried on conflicts."""
        for _ in range(RETRIES):
            try:
                node = await self.client.get(NODES, name)
            except StatusError as exc:
                return is_not_found(exc)
            spec = node.setdefault("spec", {})
            old = list(spec.get("taints") or [])
            taints = [t for t in old if not (t.get("key") in remove
                                             and t.get("effect") == NO_EXECUTE)]
            if add is not None and not taint_key_exists(taints, add):
                taints.append({"key": add, "effect": NO_EXECUTE,
                               "timeAdded": format_time(self.clock.now())})
            if taints == old:
                return True
            spec["taints"] = taints
            try:
                await self.client.update(NODES, node)
                return True
            except StatusError as exc:
                if not is_conflict(exc):
                    log.error("unable to taint node %s: %s", name, exc)
                    return False
        return False

    # -- handleDisruption -----------------------------------------------------------------

    async def handle_disruption(self, zone_conditions: dict[str, list[dict[str, object] | None]],
                                nodes: list[Obj]) -> None:
        threshold = self.opts.unhealthy_zone_threshold
        new_states = {z: compute_zone_state(c, threshold)[1] for z, c in zone_conditions.items()}
        all_are = all(s == ZoneState.FULL_DISRUPTION for s in new_states.values())
        for zone in [z for z in self.zone_states if z not in zone_conditions]:
            del self.zone_states[zone]
        all_were = all(s == ZoneState.FULL_DISRUPTION for s in self.zone_states.values())
        if all_are and all_were:
            return
        if all_are:
            log.info("all nodes are not Ready: entering master disruption mode")
            for node in nodes:
                await self.mark_node_as_reachable(node)
            for zone in self.zone_states:
                self.zone_tainters[zone].swap_limiter(0.0)
                self.zone_states[zone] = ZoneState.FULL_DISRUPTION
            return
        if all_were:
            log.info("some nodes are Ready: exiting master disruption mode")
            now = self.clock.now()
            for health in self.node_health.values():
                health.probe_timestamp = now
        for zone, state in self.zone_states.items():
            new = new_states.get(zone, state)
            if state != new or all_were:
                self._set_limiter_in_zone(zone, len(zone_conditions.get(zone, [])), new)
                self.zone_states[zone] = new

    def _set_limiter_in_zone(self, zone: str, size: int, state: ZoneState) -> None:
        opts = self.opts
        qps = opts.node_eviction_rate
        if state == ZoneState.PARTIAL_DISRUPTION:
            qps = (opts.secondary_node_eviction_rate
                   if size > opts.large_cluster_size_threshold else 0.0)
        self.zone_tainters[zone].swap_limiter(qps)
