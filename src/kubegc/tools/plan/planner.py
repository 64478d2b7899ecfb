"""``plan_delete``: run a delete on an in-memory copy of a cluster and report what it did.

1. The inventory's objects are prepared (``snapshot.prepare_snapshot``) and loaded into a
   simulation (``SimulationFactory``) that runs the real garbage collector, kubelet
   simulator and namespace controller — nothing else — on a ``ManualClock`` starting at
   the inventory's time.
2. Once it has settled (every informer synced, every queue empty), a ``Recorder``
   snapshots and watches it, and the delete is issued with the requested propagation.
3. The clock is advanced from timer to timer (grace periods, retries) until no relevant
   change has happened for ``horizon`` simulated seconds (default: the longest pod grace
   period in the snapshot plus a minute) or nothing waits on the clock any more.
4. The changes become the report (``timeline``); objects still deleting at the end are
   diagnosed with the doctor against the end state, with the source's evidence.
Nothing is ever written to the source cluster: it was only read into the inventory.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from kubegc.api.clock import ManualClock
from kubegc.api.errors import StatusError
from kubegc.api.meta import is_being_deleted, uid_of
from kubegc.api.types import Obj
from kubegc.client.interface import APIResource, DeleteOptions, ListOptions
from kubegc.controllers.deletionrecords import DELETION_RECORDS
from kubegc.tools.doctor import DoctorOptions, Finding, stuck_finding
from kubegc.tools.doctor.context import Context
from kubegc.tools.doctor.namespaces import namespace_finding
from kubegc.tools.inventory import Inventory
from kubegc.tools.model import ObjRef
from kubegc.tools.ownership import OwnerGraph
from kubegc.tools.plan.recorder import Recorder
from kubegc.tools.plan.report import PlanReport, Step, StepAction
from kubegc.tools.plan.simulation import PLAN_CONTROLLERS, Simulation, SimulationFactory
from kubegc.tools.plan.snapshot import prepare_snapshot
from kubegc.tools.plan.timeline import Timeline

log = logging.getLogger(__name__)

#: Real seconds to wait for the simulation to settle before moving the clock anyway
#: (a retry waiting on the clock keeps it busy).
SETTLE_TIMEOUT = 0.5
DEFAULT_GRACE = 30
#: Never simulate more than this (a grace period of hours is not waited for).
MAX_HORIZON = 3 * 3600.0


def default_horizon(objects: list[Obj]) -> float:
    graces = [int((o.get("spec") or {}).get("terminationGracePeriodSeconds") or DEFAULT_GRACE)
              for o in objects if o.get("kind") == "Pod"]
    return min(MAX_HORIZON, max(graces, default=0) + 60.0)


async def plan_delete(
    inv: Inventory, target: Obj, resource: APIResource, *, factory: SimulationFactory,
    propagation: str = "", options: DoctorOptions | None = None,
    horizon: float | None = None,
) -> PlanReport:
    prepared = prepare_snapshot(inv.objects, inv.resources, factory.node_names,
                                namespace=inv.namespace)
    clock = ManualClock(inv.now)
    report = PlanReport(inv.source, ObjRef.of(target), propagation, [],
                        notes=list(prepared.notes))
    limit = horizon if horizon is not None else default_horizon(inv.objects)
    async with factory.start(prepared.objects, clock=clock, nodes=prepared.nodes) as sim:
        report.controllers = list(sim.controllers)
        report.skipped = sorted(ObjRef.of(o) for o in sim.skipped)
        missing = [c for c in PLAN_CONTROLLERS if c not in sim.controllers]
        if missing:
            report.notes.append("not simulated (not available in this kubegc): "
                                + ", ".join(missing))
        recorder = Recorder(sim.client, clock)
        await recorder.start()
        # first what happens anyway (dangling references, pods past their grace ...)
        await _run_until_quiet(sim, clock, recorder, limit)
        mark, before = recorder.checkpoint()
        started = clock.monotonic()
        try:
            await sim.client.delete(resource.gvr, report.target.name,
                                    namespace=report.target.namespace,
                                    options=DeleteOptions(propagation_policy=propagation or None))
        except StatusError as e:
            report.error = e.message
        await _run_until_quiet(sim, clock, recorder, limit)
        await recorder.stop()
        records = await _records(sim)
    report.simulated_seconds = clock.monotonic() - started
    report.pending = Timeline(recorder.ordered(until=mark), recorder.before, target_uid="",
                              records=records).steps
    timeline = Timeline(recorder.ordered(since=mark), before, target_uid=uid_of(target),
                        records=records)
    report.steps = [Step(0, 0.0, StepAction.REQUESTED, report.target,
                         f"propagationPolicy={propagation or '(default)'}", "you"),
                    *timeline.steps]
    report.deleted = timeline.deleted()
    report.constraints = timeline.constraints()
    report.survivors = timeline.survivors(recorder.current)
    report.warnings = sorted({f"{w.get('reason')}: {w.get('message')}"
                              for w in recorder.warnings})
    report.hanging = _hanging(inv, recorder, before, clock, options or DoctorOptions(),
                              uid_of(target))
    return report


async def _settle(sim: Simulation, timeout: float) -> bool:
    try:
        await sim.settle(timeout)
    except TimeoutError:
        return False
    return True


async def _run_until_quiet(sim: Simulation, clock: ManualClock, recorder: Recorder,
                           horizon: float) -> None:
    last_change = clock.monotonic()
    seen = -1
    while True:
        await _settle(sim, SETTLE_TIMEOUT)
        if recorder.relevant_count() != seen:
            seen = recorder.relevant_count()
            last_change = clock.monotonic()
        deadline = clock.next_deadline
        if deadline is None or deadline - last_change > horizon:
            return
        clock.advance(max(0.0, deadline - clock.monotonic()))
        await asyncio.sleep(0)


async def _records(sim: Simulation) -> list[Obj]:
    try:
        listed = await sim.client.list(DELETION_RECORDS, options=ListOptions())
    except StatusError:
        return []
    items = list(listed.get("items") or [])
    return sorted(items, key=lambda r: (str(r.get("time")), str(r["metadata"].get("name"))))


def _hanging(inv: Inventory, recorder: Recorder, before: dict[str, Obj], clock: ManualClock,
             options: DoctorOptions, target_uid: str) -> list[Finding]:
    """Objects this delete left deleting, diagnosed against the end state (with the
    source's evidence of which controllers are alive)."""
    end = [o for uid, o in recorder.current.items() if uid in before]
    end_inv = Inventory(end, inv.resources, inv.now + timedelta(seconds=clock.monotonic()),
                        namespace=inv.namespace, source=inv.source, dump=inv.dump,
                        read=set(inv.read))
    ctx = Context(end_inv, OwnerGraph(end_inv), options)
    out = []
    for obj in sorted(end, key=ObjRef.of):
        was = before[uid_of(obj)]
        if not is_being_deleted(obj) or (is_being_deleted(was) and uid_of(obj) != target_uid):
            continue
        if obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1":
            out.append(namespace_finding(ctx, obj))
        else:
            out.append(stuck_finding(ctx, obj))
    for finding in out:
        finding.title = f"{finding.object} stays Terminating"
    return out
