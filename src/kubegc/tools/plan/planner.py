"""``plan_delete``: run a delete on an in-memory copy of a cluster and report what it did.

1. Of the inventory (the whole cluster, whatever ``-n`` said), the objects the delete can
   touch (``scope.cascade_scope``) are prepared (``snapshot.prepare_snapshot``) and loaded
   into a simulation (``SimulationFactory``) that runs the real garbage collector,
   kubelet simulator and namespace controller — nothing else — on a ``ManualClock``
   starting at the inventory's time; their own log lines stay off the user's terminal
   (``logs``). A ``Recorder`` lists and watches it from the start.
2. Warm-up: the copy first does what it would do anyway (dangling references collected,
   pods past their grace period removed); those changes become ``pending``. A target that
   is already being deleted skips it: the deletion under way is the plan (planned as
   pending, never "not found" because the warm-up finished it).
3. The delete is issued with the requested propagation. After each settle, finalizers
   whose controller is alive in the source are removed (``assume_alive``), then the clock
   moves to the next timer (grace periods, retries), until no relevant change happened
   for ``horizon`` simulated seconds (default: the longest pod grace period in the
   snapshot plus a minute) or nothing waits on the clock any more (``drive``).
4. The changes become the report (``timeline``); objects still deleting at the end are
   diagnosed with the doctor against the end state, with the source's evidence, on the
   plan's time line (``hangs``: the delete is issued at the reading time).
Nothing is ever written to the source cluster: it was only read into the inventory.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from kubegc.api.clock import ManualClock, format_time, parse_time_or_none
from kubegc.api.meta import (
    DeletionPropagation,
    deletion_timestamp_of,
    is_being_deleted,
    namespace_of,
    owner_references_of,
    uid_of,
)
from kubegc.api.types import Obj
from kubegc.client.interface import APIResource
from kubegc.tools.doctor import DoctorOptions
from kubegc.tools.doctor.disruption import refusal
from kubegc.tools.inventory import Inventory
from kubegc.tools.model import ObjRef, human_duration
from kubegc.tools.ownership import OwnerGraph
from kubegc.tools.plan.bounds import bounded, pod_bounds
from kubegc.tools.plan.drive import UNSETTLED_LIMIT, finish_for_alive, run_until_quiet
from kubegc.tools.plan.hangs import hanging
from kubegc.tools.plan.logs import quiet_simulation
from kubegc.tools.plan.lost_node import StopKubeletOperation
from kubegc.tools.plan.operations import DeleteOperation, Operation
from kubegc.tools.plan.races import order_dependent
from kubegc.tools.plan.recorder import Recorder
from kubegc.tools.plan.report import (
    OrderDependent,
    Outcome,
    PlanReport,
    Reference,
    Step,
    StepAction,
)
from kubegc.tools.plan.scope import cascade_scope
from kubegc.tools.plan.simulation import PLAN_CONTROLLERS, OpContext, SimulationFactory
from kubegc.tools.plan.snapshot import prepare_snapshot
from kubegc.tools.plan.timeline import Timeline
from kubegc.tools.plan.verdict import verdict_of
from kubegc.tools.plan.webhooks import webhook_notes
from kubegc.tools.plan.workloads import reactions
from kubegc.tools.wellformed import problem_notes

DEFAULT_GRACE = 30
#: the steps that show a DELETE was sent for an object (which a webhook may refuse)
DELETE_SENT = frozenset({StepAction.REQUESTED, StepAction.DELETION_STARTED})
#: Never simulate more than this (a grace period of hours is not waited for).
MAX_HORIZON = 3 * 3600.0


#: Simulated seconds without change that end the warm-up, beyond the grace periods
#: still running in the snapshot (retries of the garbage collector and the namespace
#: controller come sooner).
WARM_UP_QUIET = 15.0


def default_horizon(objects: list[Obj]) -> float:
    graces = [int((o.get("spec") or {}).get("terminationGracePeriodSeconds") or DEFAULT_GRACE)
              for o in objects if o.get("kind") == "Pod"]
    return min(MAX_HORIZON, max(graces, default=0) + 60.0)


def warm_up_horizon(objects: list[Obj], now: datetime, limit: float) -> float:
    """What happens anyway is due at once, or when a terminating pod's grace period ends."""
    left = [(when - now).total_seconds() for o in objects if o.get("kind") == "Pod"
            and (when := parse_time_or_none(deletion_timestamp_of(o))) is not None]
    return min(limit, max([0.0, *left]) + WARM_UP_QUIET)


async def plan_delete(
    inv: Inventory, target: Obj, resource: APIResource, *, factory: SimulationFactory,
    propagation: DeletionPropagation | None = None, options: DoctorOptions | None = None,
    horizon: float | None = None, assume_alive: bool = True,
) -> PlanReport:
    """Simulate deleting ``target`` (see the module docstring). With ``assume_alive``,
    finalizers whose controller is alive in the source (``finalizers.who_removes``) are
    removed in the simulation once it is quiet, as that controller would after its
    clean-up, and the simulation goes on."""
    op = DeleteOperation(target, resource=resource, propagation=propagation)
    return await plan_operation(inv, op, factory=factory, options=options, horizon=horizon,
                                assume_alive=assume_alive)


async def plan_operation(inv: Inventory, op: Operation, *, factory: SimulationFactory,
                         options: DoctorOptions | None = None, horizon: float | None = None,
                         assume_alive: bool = True) -> PlanReport:
    """Simulate ``op`` (a delete, an eviction, a drain, a taint, a lost node: ``operations``)
    as ``plan_delete`` does a delete; its outcome comes first in the verdict."""
    with quiet_simulation() as logged:
        report = await _simulate(inv, op, factory, options or DoctorOptions(), horizon,
                                 assume_alive)
    note = logged.note()
    if note:
        report.notes.append(note)
    report.notes.extend(problem_notes(inv.problems))
    report.verdict = verdict_of(report)
    return report


def _eviction_notes(inv: Inventory, target: Obj) -> list[str]:
    """A delete is not limited by PodDisruptionBudgets; for a pod, say what an eviction
    (``kubectl drain``) would answer now (the eviction's own decision), and which verbs
    simulate one."""
    if target.get("kind") != "Pod" or target.get("apiVersion") != "v1":
        return []
    namespace = str((target.get("metadata") or {}).get("namespace") or "")
    budgets = [b for b in inv.of_kind("policy", "PodDisruptionBudget")
               if (b.get("metadata") or {}).get("namespace") == namespace]
    if not budgets:
        return []
    refused = refusal(target, budgets)
    verdict = ("an eviction would be allowed now" if refused is None else
               f"an eviction would be refused now ({refused.code}): {refused.message} "
               + " ".join(c.message for c in refused.details.causes))
    return ["this plan simulates a DELETE, which PodDisruptionBudgets do not limit; "
            f"through pods/eviction (kubectl drain) {verdict}; `kubegc plan evict` and "
            "`plan drain` simulate the eviction"]


async def _simulate(inv: Inventory, op: Operation, factory: SimulationFactory,
                    opts: DoctorOptions, horizon: float | None, assume_alive: bool
                    ) -> PlanReport:
    target = op.target
    deleting = isinstance(op, DeleteOperation)
    graph = OwnerGraph(inv)
    op.pods_seen = op.pods(inv)
    scope = cascade_scope(inv, target, graph, roots=op.pods_seen,
                          expand_target=deleting or op.verb == "evict", nodes=op.nodes(),
                          all_nodes=op.all_nodes())
    node = str(target["metadata"].get("name")) if deleting and (
        target.get("kind") == "Node" and target.get("apiVersion") == "v1") else ""
    prepared = prepare_snapshot(scope, inv.resources, factory.node_names,
                                namespace=inv.namespace, deleted_node=node)
    clock = ManualClock(inv.now)
    report = PlanReport(inv.source, ObjRef.of(target),
                        op.propagation if isinstance(op, DeleteOperation) else None, [],
                        notes=[*inv.notes, *prepared.notes], time=inv.now,
                        objects_read=len(inv.objects), objects_simulated=len(scope))
    if inv.namespace:
        report.notes.append(f"only namespace {inv.namespace} was read: dependents and owners "
                            "in other namespaces are not simulated")
    if deleting:
        report.notes.extend(_eviction_notes(inv, target))
    limit = horizon if horizon is not None else min(
        MAX_HORIZON, default_horizon(scope) + op.extra_horizon(inv))
    assumed: dict[tuple[str, str], str] = {}
    async with factory.start(prepared.objects, clock=clock, nodes=prepared.nodes,
                             emulated_version=inv.emulated_version) as sim:
        report.controllers = list(sim.controllers)
        report.skipped = sorted(ObjRef.of(o) for o in sim.skipped)
        missing = [c for c in PLAN_CONTROLLERS if c not in sim.controllers]
        if missing:
            report.notes.append("not simulated (not available in this kubegc): "
                                + ", ".join(missing))
        recorder = Recorder(sim.client, clock)
        await recorder.start()
        # first what happens anyway (dangling references, pods past their grace ...);
        # but a target already being deleted joins the deletion under way at once: its
        # progress is the plan (a warm-up could finish it, and the delete then be refused
        # as "not found" about an object that exists)
        quiet = is_being_deleted(target) or await run_until_quiet(
            sim, clock, recorder, warm_up_horizon(scope, inv.now, limit))
        mark, before = recorder.checkpoint()
        started, origin = clock.monotonic(), clock.now()
        ctx = OpContext(sim, clock, prepared.node_map, started)
        try:
            if uid_of(target) in before:
                report.error = await op.issue(ctx)
            else:  # the warm-up deleted it: an error "not found" would be about nothing
                report.notes.append(_gone_before(report.target))

            async def finish() -> bool:
                return assume_alive and await finish_for_alive(sim, recorder, inv,
                                                               opts.mapping, before, assumed)

            quiet = await run_until_quiet(sim, clock, recorder, limit, after_settle=finish,
                                          operation_step=lambda: op.after_settle(ctx)) and quiet
        finally:
            op.close()
        if not quiet:
            report.notes.append(
                f"the simulation was still busy after {int(UNSETTLED_LIMIT)} s of real time: "
                "what it had done by then is reported, and the delete may do more")
        await recorder.stop()
        records = sim.records()
        deletions = [*sim.deletions(), *op.deletions]
    report.simulated_seconds = clock.monotonic() - started
    if recorder.errors:
        report.notes.append("the simulation could not be followed whole, so steps may be "
                            "missing: " + "; ".join(recorder.errors))
    pending = Timeline(recorder.ordered(until=mark), recorder.before, target_uid="",
                       records=records, deletions=deletions)
    report.pending = pending.steps
    timeline = Timeline(recorder.ordered(since=mark), before, target_uid=uid_of(target),
                        records=records, deletions=deletions, assumed=assumed)
    report.steps = _steps(op, report.target, timeline, origin)
    report.deleted = timeline.deleted()
    # the webhooks are asked about every DELETE sent, also of what never goes, and about
    # those of what happens anyway (pending: a webhook refusing them is why they are due)
    report.notes.extend(webhook_notes(inv, [*pending.deleted(), *report.deleted, *(
        s.object for s in [*report.pending, *report.steps] if s.action in DELETE_SENT)]))
    report.constraints = timeline.constraints()
    report.notes.extend(_cycle_notes(graph, timeline))
    if is_being_deleted(target):
        report.notes.insert(0, f"{report.target} was already Terminating before this delete "
                            f"(deletionTimestamp {target['metadata']['deletionTimestamp']}): "
                            "the steps show the deletion under way, which this second delete "
                            "joins (pending: what was already going to happen)")
    report.survivors = timeline.survivors(recorder.current)
    report.order_dependent = sorted(
        (OrderDependent(timeline.ref(before[u]), why)
         for u, why in order_dependent(timeline).items()),
        key=lambda o: o.object)
    report.notes.extend(o.why for o in report.order_dependent)
    report.reactions = reactions(before, recorder.current, report.deleted)
    report.notes.extend(r.why for r in report.reactions)
    report.references = _references(scope, timeline)
    report.warnings = sorted({f"{w.get('reason')}: {w.get('message')}"
                              for w in recorder.warnings})
    source = {uid_of(o) for o in scope}  # not the simulation's own nodes and Leases
    end = [o for uid, o in recorder.current.items() if uid in before and uid in source]
    report.hanging, report.judged_at = hanging(
        inv, end, before, opts, target_uid=uid_of(target), lead=started,
        quiet_after=report.simulated_seconds,
        lost=frozenset([report.target.name] if isinstance(op, StopKubeletOperation) else []))
    report.judged_after = report.simulated_seconds
    if inv.dump:  # a dump's reading is its present: nothing is said after it as a time
        report.judged_at = None
    if report.hanging:
        later = human_duration(report.simulated_seconds)
        at = f" ({format_time(report.judged_at)})" if report.judged_at is not None else ""
        report.notes.append(
            f"times: the delete is taken to be issued when the cluster was read "
            f"({format_time(inv.now)}); what hangs is judged when the simulation went quiet, "
            f"{later} later{at}, with the controllers alive at the reading taken to be alive "
            "then; it hangs for as long as nothing releases it")
    _outcome(op, report)
    if assumed:
        report.notes.append(
            "finalizers of controllers alive in the source were removed in the simulation as "
            "those controllers would after their clean-up (their clean-up itself is not "
            "simulated): " + ", ".join(sorted({f for _, f in assumed})))
    return report


def _gone_before(target: ObjRef) -> str:
    return (f"{target} goes before this delete: the garbage collector deletes it anyway "
            "(pending), so the delete is not sent; that it still exists says something "
            "refuses or holds back the garbage collector's DELETE (an admission webhook: "
            "the webhook note names those that take it)")


def _steps(op: Operation, target: ObjRef, timeline: Timeline, origin: datetime) -> list[Step]:
    """The request, then the simulation's steps and the operation's own, in time order."""
    action, detail = op.requested()
    steps = sorted([*bounded(timeline.steps, pod_bounds(timeline.changes, origin)), *op.steps],
                   key=lambda s: s.time)  # stable: each list keeps its order
    if isinstance(op, StopKubeletOperation):
        steps = op.bounds_after_unknown(steps)
    return [Step(0, 0.0, action, target, detail, "you"),
            *(dataclasses.replace(s, seq=i) for i, s in enumerate(steps, 1))]


def _outcome(op: Operation, report: PlanReport) -> None:
    if report.error and not isinstance(op, DeleteOperation):
        report.operation = Outcome(op.verb, "refused", False,
                                   f"the {op.verb} is refused: {report.error}",
                                   error=report.error)
    else:
        report.operation = op.outcome(report)
    report.notes.extend(op.notes)


def _references(scope: list[Obj], timeline: Timeline) -> list[Reference]:
    out = []
    before = timeline.before
    for obj in scope:
        now = before.get(uid_of(obj), obj)
        for ref in owner_references_of(now):
            owner = before.get(str(ref.get("uid") or ""))
            out.append(Reference(
                timeline.ref(now), timeline.ref(owner) if owner is not None
                else ObjRef.from_owner_ref(ref, namespace_of(obj)),
                bool(ref.get("blockOwnerDeletion")), bool(ref.get("controller")),
                owner is not None))
    return out


def _cycle_notes(graph: OwnerGraph, timeline: Timeline) -> list[str]:
    """Why an ownership cycle did not block a foreground deletion, once per reference the
    garbage collector unblocked."""
    unblocked = timeline.unblocked()
    cycles = graph.cycles() if unblocked else []
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
