"""``plan_delete``: run a delete on an in-memory copy of a cluster and report what it did.

1. The inventory's objects are prepared (``snapshot.prepare_snapshot``) and loaded into a
   simulation (``SimulationFactory``) that runs the real garbage collector, kubelet
   simulator and namespace controller — nothing else — on a ``ManualClock`` starting at
   the inventory's time. A ``Recorder`` lists and watches it from the start.
2. Warm-up: the copy first does what it would do anyway (dangling references collected,
   pods past their grace period removed); those changes become ``pending``.
3. The delete is issued with the requested propagation. After each settle, finalizers
   whose controller is alive in the source are removed (``assume_alive``), then the clock
   moves to the next timer (grace periods, retries), until no relevant change happened
   for ``horizon`` simulated seconds (default: the longest pod grace period in the
   snapshot plus a minute) or nothing waits on the clock any more.
4. The changes become the report (``timeline``); objects still deleting at the end are
   diagnosed with the doctor against the end state, with the source's evidence.
Nothing is ever written to the source cluster: it was only read into the inventory.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from kubegc.api.clock import ManualClock
from kubegc.api.errors import StatusError
from kubegc.api.meta import (
    FINALIZER_DELETE_DEPENDENTS,
    FINALIZER_KUBERNETES,
    FINALIZER_ORPHAN_DEPENDENTS,
    finalizers_of,
    is_being_deleted,
    name_of,
    namespace_of,
    uid_of,
)
from kubegc.api.types import Obj
from kubegc.client.interface import APIResource, DeleteOptions, ListOptions, PatchType
from kubegc.controllers.deletionrecords import DELETION_RECORDS
from kubegc.tools.doctor import DoctorOptions, Finding, stuck_finding
from kubegc.tools.doctor.context import Context
from kubegc.tools.doctor.namespaces import namespace_finding
from kubegc.tools.finalizers import Alive, who_removes
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
#: Rounds of "controllers alive in the source remove their finalizers" (each may free
#: more objects whose finalizers are then removed in turn).
MAX_ASSUME_ROUNDS = 100
#: Finalizers the simulation's own controllers handle.
NOT_ASSUMED = (FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS, FINALIZER_KUBERNETES)
#: Never simulate more than this (a grace period of hours is not waited for).
MAX_HORIZON = 3 * 3600.0


def default_horizon(objects: list[Obj]) -> float:
    graces = [int((o.get("spec") or {}).get("terminationGracePeriodSeconds") or DEFAULT_GRACE)
              for o in objects if o.get("kind") == "Pod"]
    return min(MAX_HORIZON, max(graces, default=0) + 60.0)


async def plan_delete(
    inv: Inventory, target: Obj, resource: APIResource, *, factory: SimulationFactory,
    propagation: str = "", options: DoctorOptions | None = None,
    horizon: float | None = None, assume_alive: bool = True,
) -> PlanReport:
    """Simulate deleting ``target`` (see the module docstring). With ``assume_alive``,
    finalizers whose controller is alive in the source (``finalizers.who_removes``) are
    removed in the simulation once it is quiet, as that controller would after its
    clean-up, and the simulation goes on."""
    opts = options or DoctorOptions()
    prepared = prepare_snapshot(inv.objects, inv.resources, factory.node_names,
                                namespace=inv.namespace)
    clock = ManualClock(inv.now)
    report = PlanReport(inv.source, ObjRef.of(target), propagation, [],
                        notes=[*inv.notes, *prepared.notes])
    limit = horizon if horizon is not None else default_horizon(inv.objects)
    assumed: dict[tuple[str, str], str] = {}
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

        async def finish() -> bool:
            return assume_alive and await _finish_for_alive(sim, recorder, inv, opts, before,
                                                            assumed)

        await _run_until_quiet(sim, clock, recorder, limit, after_settle=finish)
        await recorder.stop()
        records = await _records(sim)
    report.simulated_seconds = clock.monotonic() - started
    report.pending = Timeline(recorder.ordered(until=mark), recorder.before, target_uid="",
                              records=records).steps
    timeline = Timeline(recorder.ordered(since=mark), before, target_uid=uid_of(target),
                        records=records, assumed=assumed)
    report.steps = [Step(0, 0.0, StepAction.REQUESTED, report.target,
                         f"propagationPolicy={propagation or '(default)'}", "you"),
                    *timeline.steps]
    report.deleted = timeline.deleted()
    report.constraints = timeline.constraints()
    report.notes.extend(_cycle_notes(inv, timeline))
    if is_being_deleted(target):
        report.notes.insert(0, f"{report.target} was already Terminating before this delete "
                            f"(deletionTimestamp {target['metadata']['deletionTimestamp']}): "
                            "the steps show only what this second delete changes")
    report.survivors = timeline.survivors(recorder.current)
    report.warnings = sorted({f"{w.get('reason')}: {w.get('message')}"
                              for w in recorder.warnings})
    report.hanging = _hanging(inv, recorder, before, opts, uid_of(target))
    if assumed:
        report.notes.append(
            "finalizers of controllers alive in the source were removed in the simulation as "
            "those controllers would after their clean-up (their clean-up itself is not "
            "simulated): " + ", ".join(sorted({f for _, f in assumed})))
    return report


async def _finish_for_alive(sim: Simulation, recorder: Recorder, inv: Inventory,
                            options: DoctorOptions, before: dict[str, Obj],
                            assumed: dict[tuple[str, str], str]) -> bool:
    """Remove, in the simulation, the finalizers whose controller is alive in the source.
    Returns whether anything was removed."""
    acted = False
    for uid, obj in list(recorder.current.items()):
        if uid not in before or not is_being_deleted(obj):
            continue
        for finalizer in finalizers_of(obj):
            if finalizer in NOT_ASSUMED or (uid, finalizer) in assumed:
                continue
            remover = who_removes(finalizer, obj, inv, options.mapping)
            if remover.alive is not Alive.YES:
                continue
            if await _remove_finalizer(sim, recorder, obj, finalizer):
                assumed[(uid, finalizer)] = remover.who
                acted = True
    return acted


async def _remove_finalizer(sim: Simulation, recorder: Recorder, obj: Obj,
                            finalizer: str) -> bool:
    gvr = recorder.gvr_for(obj)
    if gvr is None:
        return False
    index = finalizers_of(obj).index(finalizer)
    patch = [{"op": "test", "path": f"/metadata/finalizers/{index}", "value": finalizer},
             {"op": "remove", "path": f"/metadata/finalizers/{index}"}]
    try:
        await sim.client.patch(gvr, name_of(obj), patch, namespace=namespace_of(obj),
                               patch_type=PatchType.JSON)
    except StatusError as e:
        log.info("could not remove %s from %s in the simulation: %s", finalizer,
                 ObjRef.of(obj), e.message)
        return False
    return True


async def _settle(sim: Simulation, timeout: float) -> bool:
    try:
        await sim.settle(timeout)
    except TimeoutError:
        return False
    return True


async def _run_until_quiet(sim: Simulation, clock: ManualClock, recorder: Recorder,
                           horizon: float,
                           after_settle: Callable[[], Awaitable[bool]] | None = None) -> None:
    """Settle, then move the clock to the next timer, until nothing relevant happened for
    ``horizon`` simulated seconds. ``after_settle`` runs after each settle; when it
    changed something the loop settles again before moving the clock."""
    last_change = clock.monotonic()
    seen = -1
    rounds = 0
    while True:
        await _settle(sim, SETTLE_TIMEOUT)
        if after_settle is not None and rounds < MAX_ASSUME_ROUNDS and await after_settle():
            rounds += 1
            continue
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


def _hanging(inv: Inventory, recorder: Recorder, before: dict[str, Obj],
             options: DoctorOptions, target_uid: str) -> list[Finding]:
    """Objects this delete left deleting, diagnosed against the end state, with the
    source's evidence (and time) of which controllers are alive."""
    end = [o for uid, o in recorder.current.items() if uid in before]
    evidence = [o for o in inv.objects if o.get("kind") == "Lease" or o.get("kind") == "Node"]
    end_inv = Inventory(_merge(end, evidence), inv.resources, inv.now,
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
        if finding.facts and finding.deletion is not None:
            already = is_being_deleted(before[finding.object.uid])
            finding.facts[0] = (f"deletionTimestamp {finding.deletion.deletion_timestamp} "
                                + ("(already set before the plan)" if already
                                   else "(set in the simulation)"))
    return out


def _cycle_notes(inv: Inventory, timeline: Timeline) -> list[str]:
    """Why an ownership cycle did not block a foreground deletion, once per reference the
    garbage collector unblocked."""
    unblocked = timeline.unblocked()
    cycles = OwnerGraph(inv).cycles() if unblocked else []
    out = []
    for dep_uid, owner_uid, step in unblocked:
        dep = ObjRef.of(timeline.before[dep_uid]).short
        owner_obj = timeline.before.get(owner_uid)
        owner = ObjRef.of(owner_obj).short if owner_obj is not None else f"uid {owner_uid}"
        cycle = next((c for c in cycles if dep_uid in {uid_of(o) for o in c}), None)
        head = "ownership cycle:"
        if cycle is not None:  # told from the unblocked dependent on
            start = [uid_of(o) for o in cycle].index(dep_uid)
            refs = [ObjRef.of(o).short for o in cycle[start:] + cycle[:start]]
            head = f"{' → '.join([*refs, refs[0]])} (→: owned by) is an ownership cycle:"
        at = f" (step {step.seq})" if step is not None else ""
        out.append(f"{head} the garbage collector set blockOwnerDeletion="
                   f"false on {dep}'s reference to {owner}{at}, as upstream does so that a "
                   f"cycle cannot block a foreground deletion; from then on {owner} does not "
                   f"wait for {dep}, so no order between the two is guaranteed")
    return out


def _merge(objects: list[Obj], evidence: list[Obj]) -> list[Obj]:
    """The end state, with the source's Leases and Nodes (the simulation's are its own)."""
    by_uid = {uid_of(o): o for o in objects}
    by_uid.update({uid_of(o): o for o in evidence})
    return list(by_uid.values())
