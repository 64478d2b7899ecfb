"""The operations ``kubegc plan`` simulates: ``delete``, ``evict``, ``taint`` and
``stop-kubelet`` (``drain`` is in ``drain``).

An ``Operation`` says what the plan loads beside the target's cascade (``scope``: a pod's
PodDisruptionBudgets and the pods they count, a node's pods), how long to follow the
simulation (``extra_horizon``), issues itself in the simulation (``issue``), may act again
after each settle (``after_settle``: a drain's retries, a lost node's observed state) and
says its outcome first (``outcome``). Each one issues what its kubectl command sends: the
DELETE, the ``pods/eviction`` POST (the simulation's own registry answers, with the
disruption controller keeping the budgets' status), the Node patch of ``kubectl taint``,
the ``kubegc.io/kubelet: stopped`` annotation. Everything else is the controllers'.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubegc.api.errors import StatusError
from kubegc.api.meta import DeletionPropagation, name_of, namespace_of, uid_of
from kubegc.api.pod import NODES
from kubegc.api.taints import NO_EXECUTE, taint_string, tolerates_taint
from kubegc.api.types import Obj
from kubegc.client.interface import APIResource, DeleteOptions
from kubegc.component.deletions import Deletion, pod_reference
from kubegc.tools.inventory import Inventory
from kubegc.tools.model import ObjRef
from kubegc.tools.plan.report import Outcome, PlanReport, Step, StepAction
from kubegc.tools.plan.simulation import OpContext

EVICTION_API = "the Eviction API (pods/eviction)"
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def refusal_text(e: StatusError) -> str:
    """A refused eviction as the API answered it: code, message and causes."""
    causes = " ".join(c.message for c in e.details.causes)
    return f"{e.code}: {e.message}" + (f" {causes}" if causes else "")


@dataclass
class Operation:
    """``plan delete``; the other verbs override what differs (see the module docstring)."""

    target: Obj
    verb: str = "delete"
    steps: list[Step] = field(default_factory=list)
    deletions: list[Deletion] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: the pods ``pods`` named, as the source had them (set by the planner)
    pods_seen: list[Obj] = field(default_factory=list)

    @property
    def ref(self) -> ObjRef:
        return ObjRef.of(self.target)

    def requested(self) -> tuple[StepAction, str]:
        return StepAction.REQUESTED, ""

    def nodes(self) -> list[str]:
        """Source nodes simulated even if no pod of the scope runs there."""
        return []

    def all_nodes(self) -> bool:
        """Whether every node of the source is simulated (a lost node's zone)."""
        return False

    def pods(self, inv: Inventory) -> list[Obj]:
        """Pods whose cascade the plan loads beside the target's."""
        return []

    def extra_horizon(self, inv: Inventory) -> float:
        return 0.0

    async def issue(self, ctx: OpContext) -> str:
        """Issue the operation; the refusal's message, or ""."""
        raise NotImplementedError

    async def after_settle(self, ctx: OpContext) -> bool:
        return False

    def add_step(self, ctx: OpContext, action: StepAction, obj: ObjRef, detail: str = "",
                 by: str = "you", reason: str = "") -> None:
        self.steps.append(Step(0, ctx.clock.monotonic() - ctx.origin, action, obj, detail, by,
                               reason))

    def outcome(self, report: PlanReport) -> Outcome | None:
        return None

    def close(self) -> None:
        """Stop what ``issue`` left running (timers)."""


@dataclass
class DeleteOperation(Operation):
    resource: APIResource | None = None
    propagation: DeletionPropagation | None = None

    def requested(self) -> tuple[StepAction, str]:
        return StepAction.REQUESTED, f"propagationPolicy={self.propagation or '(default)'}"

    async def issue(self, ctx: OpContext) -> str:
        assert self.resource is not None
        try:
            await ctx.sim.client.delete(self.resource.gvr, self.ref.name,
                                        namespace=self.ref.namespace,
                                        options=DeleteOptions(propagation_policy=self.propagation))
        except StatusError as e:
            return e.message
        return ""


def evicted_deletion(ctx: OpContext, pod: Obj, by: str) -> Deletion:
    return Deletion(ctx.clock.now(), by, pod_reference(pod), "EvictionByEvictionAPI",
                    "evicted through pods/eviction: no PodDisruptionBudget refused it")


@dataclass
class EvictOperation(Operation):
    """``plan evict pod/P``: one POST to ``pods/eviction``, as ``kubectl drain`` sends."""

    verb: str = "evict"
    refused: StatusError | None = None

    def requested(self) -> tuple[StepAction, str]:
        return StepAction.EVICTION_REQUESTED, "POST pods/eviction (policy/v1 Eviction)"

    def pods(self, inv: Inventory) -> list[Obj]:
        return [self.target]

    async def issue(self, ctx: OpContext) -> str:
        try:
            await ctx.sim.evict(self.ref.namespace, self.ref.name)
        except StatusError as e:
            self.refused = e
            self.add_step(ctx, StepAction.EVICTION_REFUSED, self.ref, refusal_text(e),
                          EVICTION_API)
            return ""
        self.deletions.append(evicted_deletion(ctx, self.target, EVICTION_API))
        return ""

    def outcome(self, report: PlanReport) -> Outcome:
        if self.refused is not None:
            return Outcome(self.verb, "refused", False,
                           f"the eviction is refused ({refusal_text(self.refused)}); "
                           "nothing is deleted", error=self.refused.message)
        gone = next((s for s in report.steps if s.action is StepAction.DELETED
                     and s.object.uid == self.ref.uid), None)
        when = _when(gone)
        return Outcome(self.verb, "evicted", gone is not None,
                       f"{self.ref} is evicted: deleted gracefully" + (f" by {when}" if gone
                                                                       else ""),
                       finished_at=gone.time if gone else None,
                       finished_by=_latest(gone))


def _when(step: Step | None) -> str:
    if step is None:
        return ""
    if step.latest is not None and step.latest - step.time >= 0.5:
        return f"t+{step.time:.1f}s (up to t+{step.latest:.1f}s)"
    return f"t+{step.time:.1f}s"


def _latest(step: Step | None) -> float | None:
    if step is None:
        return None
    return step.latest if step.latest is not None else step.time


def parse_taint(spec: str) -> dict[str, str]:
    """``key[=value]:Effect`` as ``kubectl taint`` reads it (``parseTaint``)."""
    key_value, sep, effect = spec.rpartition(":")
    if not sep or not key_value:
        raise ValueError(f"invalid taint spec: {spec}, a taint is key[=value]:effect")
    if effect not in TAINT_EFFECTS:
        raise ValueError(f'invalid taint effect: {effect}, unsupported taint effect')
    key, _, value = key_value.partition("=")
    taint = {"key": key, "effect": effect}
    if value:
        taint["value"] = value
    return taint


def pods_on(inv: Inventory, node: str) -> list[Obj]:
    return [p for p in inv.of_kind("", "Pod") if (p.get("spec") or {}).get("nodeName") == node]


def _node_pods_horizon(inv: Inventory, node: str, taints: list[dict[str, Any]]) -> float:
    """The longest ``tolerationSeconds`` a pod on ``node`` has for one of ``taints``."""
    seconds = [float(t.get("tolerationSeconds") or 0) for p in pods_on(inv, node)
               for t in (p.get("spec") or {}).get("tolerations") or []
               if any(tolerates_taint(t, taint) for taint in taints)]
    return max(seconds, default=0.0)


@dataclass
class TaintOperation(Operation):
    """``plan taint node/N key[=value]:Effect``: the Node update ``kubectl taint`` sends."""

    verb: str = "taint"
    taint: dict[str, str] = field(default_factory=dict)

    def requested(self) -> tuple[StepAction, str]:
        return StepAction.TAINTED, taint_string(self.taint)

    def nodes(self) -> list[str]:
        return [self.ref.name]

    def pods(self, inv: Inventory) -> list[Obj]:
        return pods_on(inv, self.ref.name)

    def extra_horizon(self, inv: Inventory) -> float:
        if self.taint.get("effect") != NO_EXECUTE:
            return 0.0
        return _node_pods_horizon(inv, self.ref.name, [self.taint])

    async def issue(self, ctx: OpContext) -> str:
        name = ctx.node_map.get(self.ref.name, self.ref.name)
        node = await ctx.sim.client.get(NODES, name)
        taints = list((node.get("spec") or {}).get("taints") or [])
        if any(t.get("key") == self.taint["key"] and t.get("effect") == self.taint["effect"]
               for t in taints):
            return (f"node {self.ref.name} already has {self.taint['key']} taint(s) with same "
                    "effect(s) and --overwrite is false")
        added: dict[str, str] = dict(self.taint)
        if added["effect"] == NO_EXECUTE:  # as kubectl taint stamps it
            added["timeAdded"] = ctx.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        await ctx.sim.client.patch(NODES, name, {"spec": {"taints": [*taints, added]}})
        return ""

    def outcome(self, report: PlanReport) -> Outcome:
        return node_outcome(self, report, f"taint {taint_string(self.taint)}")


def node_outcome(op: Operation, report: PlanReport, what: str) -> Outcome:
    """Which pods of the node the operation's taint evicts, when, and which stay."""
    on_node = {uid_of(p) for p in op.pods_seen}
    started = [s for s in report.steps if s.action is StepAction.DELETION_STARTED
               and s.object.uid in on_node]
    going = {s.object.uid for s in started}
    stay = sorted(ObjRef.of(p).short for p in op.pods_seen
                  if uid_of(p) not in going)
    evicted = ", ".join(f"{s.object.short} at {_when(s)}" for s in started)
    text = (f"{what}: {len(started)} pod(s) evicted by the taint-eviction controller"
            + (f" ({evicted})" if evicted else "")
            + (f"; {len(stay)} stay ({', '.join(stay)})" if stay else ""))
    last = max(started, key=lambda s: s.time, default=None)
    return Outcome(op.verb, "evicted" if started else "nothing-evicted", True, text,
                   finished_at=last.time if last else None, finished_by=_latest(last))


def namespaced_key(pod: Obj) -> str:
    return f"{namespace_of(pod)}/{name_of(pod)}"
