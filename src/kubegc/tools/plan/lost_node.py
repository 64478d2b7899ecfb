"""``plan stop-kubelet node/N``: the node is lost (its kubelet stops, as with the annotation
``kubegc.io/kubelet: stopped`` on kubegc, or a real machine that goes away).

The simulation sets that annotation on the node's simulated kubelet; then its node
lifecycle controller marks the node Ready=Unknown after ``--node-monitor-grace-period``
and taints it ``node.kubernetes.io/unreachable:NoExecute``, and its taint-eviction
controller deletes the pods once their tolerations run out (the 300 s
``DefaultTolerationSeconds`` most pods carry). With no kubelet, those pods stay
Terminating (until force-deleted, or until the node gets the out-of-service taint and pod
GC removes them): the plan reports them as hanging, as they would on the cluster.

Every node of the source is simulated, so the node's zone is judged as on the cluster
(a cluster whose every node is lost is never tainted: upstream's full-disruption mode).

Times are bounds: the controller notices a node between the grace period after its last
heartbeat and a monitor period later, and the kubelet renewed its Lease up to a renew
interval before it stopped. So the node's Unknown step and every step after it carry
``earliest``/``latest`` shifted by that range (``bounds_after_unknown``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from kubegc.api.errors import StatusError
from kubegc.api.pod import NODES
from kubegc.api.taints import (
    TAINT_NODE_NOT_READY,
    TAINT_NODE_UNREACHABLE,
    no_execute_taints,
    taint_string,
)
from kubegc.api.types import Obj
from kubegc.component.config import NodeLifecycleControllerConfiguration
from kubegc.tools.inventory import Inventory
from kubegc.tools.plan.operations import Operation, _node_pods_horizon, node_outcome, pods_on
from kubegc.tools.plan.report import Outcome, PlanReport, Step, StepAction
from kubegc.tools.plan.simulation import OpContext

KUBELET_ANNOTATION = "kubegc.io/kubelet"  # kubegc.kubelet.nodes.KUBELET_ANNOTATION
#: the simulated kubelet's Lease renewal interval (kubegc.kubelet.nodes.LEASE_RENEW_INTERVAL,
#: upstream: a quarter of the 40 s lease duration)
LEASE_RENEW_INTERVAL = 10.0
#: upstream's DefaultTolerationSeconds for not-ready and unreachable
DEFAULT_TOLERATION_SECONDS = 300.0
NODE_CONTROLLER = "node-controller (node lifecycle)"


def _ready_status(node: Obj) -> str:
    return next((str(c.get("status")) for c in (node.get("status") or {}).get("conditions") or []
                 if c.get("type") == "Ready"), "")


@dataclass
class StopKubeletOperation(Operation):
    verb: str = "stop-kubelet"
    config: NodeLifecycleControllerConfiguration = dataclasses.field(
        default_factory=NodeLifecycleControllerConfiguration)
    unknown_at: float | None = None
    tainted: tuple[str, ...] = ()

    def requested(self) -> tuple[StepAction, str]:
        return StepAction.KUBELET_STOPPED, f"annotation {KUBELET_ANNOTATION}: stopped"

    def nodes(self) -> list[str]:
        return [self.ref.name]

    def all_nodes(self) -> bool:
        return True

    def pods(self, inv: Inventory) -> list[Obj]:
        return pods_on(inv, self.ref.name)

    def extra_horizon(self, inv: Inventory) -> float:
        taints = [{"key": k, "effect": "NoExecute"}
                  for k in (TAINT_NODE_UNREACHABLE, TAINT_NODE_NOT_READY)]
        return (self.config.node_monitor_grace_period + self.config.node_monitor_period
                + max(DEFAULT_TOLERATION_SECONDS, _node_pods_horizon(inv, self.ref.name, taints)))

    async def issue(self, ctx: OpContext) -> str:
        name = ctx.node_map.get(self.ref.name, self.ref.name)
        await ctx.sim.client.patch(NODES, name, {"metadata": {"annotations": {
            KUBELET_ANNOTATION: "stopped"}}})
        return ""

    async def after_settle(self, ctx: OpContext) -> bool:
        """Note when the node became Unknown and what NoExecute taints it got."""
        try:
            node = await ctx.sim.client.get(NODES, ctx.node_map.get(self.ref.name, self.ref.name))
        except StatusError:
            return False
        if self.unknown_at is None and _ready_status(node) == "Unknown":
            self.unknown_at = ctx.clock.monotonic() - ctx.origin
            self.add_step(ctx, StepAction.NODE_UNKNOWN, self.ref,
                          "Kubelet stopped posting node status.", NODE_CONTROLLER,
                          "NodeStatusUnknown")
        taints = tuple(taint_string(t) for t in no_execute_taints(node))
        for taint in taints:
            if taint not in self.tainted:
                self.add_step(ctx, StepAction.TAINTED, self.ref, taint, NODE_CONTROLLER)
        self.tainted = taints
        return False

    def bounds_after_unknown(self, steps: list[Step]) -> list[Step]:
        """Steps from the node's Unknown on, with the range a real cluster may take."""
        if self.unknown_at is None:
            return steps
        earliest = self.config.node_monitor_grace_period - LEASE_RENEW_INTERVAL
        latest = self.config.node_monitor_grace_period + 2 * self.config.node_monitor_period
        low, high = min(0.0, earliest - self.unknown_at), max(0.0, latest - self.unknown_at)
        out = []
        for step in steps:
            if step.time >= self.unknown_at:
                top = step.latest if step.latest is not None else step.time
                step = dataclasses.replace(step, earliest=step.time + low, latest=top + high)
            out.append(step)
        return out

    def outcome(self, report: PlanReport) -> Outcome:
        if self.unknown_at is None:
            return Outcome(self.verb, "not-noticed", False,
                           f"node {self.ref.name}'s kubelet stops, but the node lifecycle "
                           "controller does not mark it Unknown within the plan "
                           "(see the notes)")
        out = node_outcome(self, report, f"node {self.ref.name} is Unknown by t+"
                           f"{self.unknown_at:.0f}s and tainted "
                           f"{', '.join(self.tainted) or '(no taint)'}")
        hanging = [f.object.short for f in report.hanging
                   if f.object.uid in {p["metadata"].get("uid") for p in self.pods_seen}]
        if hanging:
            out.text += (f"; {len(hanging)} pod(s) stay Terminating with no kubelet to finish "
                         "them (until force-deleted, or the node gets the "
                         "node.kubernetes.io/out-of-service taint and pod GC removes them)")
            out.completes = False
        return out
