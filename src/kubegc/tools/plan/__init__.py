"""``kubegc plan delete|evict|drain|taint|stop-kubelet``: what an operation would do, from
a run of the real controllers (garbage collector, kubelet simulator, namespace, pod GC,
taint eviction, node lifecycle, disruption ...) on an in-memory copy of the cluster.

``plan_delete(inv, target, resource, factory=...)`` and ``plan_operation(inv, op,
factory=...)`` (an ``operations.Operation``) return a ``PlanReport``; the composition root
provides the ``SimulationFactory`` (see ``simulation``).
"""

from __future__ import annotations

from kubegc.tools.plan.planner import plan_delete, plan_operation
from kubegc.tools.plan.recorder import Change, Recorder
from kubegc.tools.plan.report import Constraint, PlanReport, Step, StepAction, Survivor
from kubegc.tools.plan.simulation import PLAN_CONTROLLERS, Simulation, SimulationFactory
from kubegc.tools.plan.timeline import Timeline, order_violations

__all__ = [
    "PLAN_CONTROLLERS",
    "Change",
    "Constraint",
    "PlanReport",
    "Recorder",
    "Simulation",
    "SimulationFactory",
    "Step",
    "StepAction",
    "Survivor",
    "Timeline",
    "order_violations",
    "plan_delete",
    "plan_operation",
]
