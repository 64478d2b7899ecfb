"""``kubegc plan delete``: what a delete would do, from a run of the real garbage
collector, kubelet simulator and namespace controller on an in-memory copy of the cluster.

``plan_delete(inv, target, resource, factory=...)`` returns a ``PlanReport``; the
composition root provides the ``SimulationFactory`` (see ``simulation``).
"""

from __future__ import annotations

from kubegc.tools.plan.planner import plan_delete
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
]
