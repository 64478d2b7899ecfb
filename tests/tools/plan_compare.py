"""Comparing a scenario's plan with what really happened (``plan_reality.run_graph``
calls ``compare``): the same deletions, survivors (with the owners that keep them),
hangs and order; each pod gone within the plan's bound; every object a controller made
during the real delete named by the plan's ``workloadReactions``; where a webhook refused
DELETEs, the plan's note naming it. What the plan calls order-dependent, what follows
from a workload controller's reaction it names and what a refusal it notes can change
are left out."""

from __future__ import annotations

from kubegc.api.meta import controller_ref_of
from kubegc.api.types import Obj
from kubegc.tools.plan import PlanReport, Recorder, StepAction, Timeline, order_violations

from .scenarios import Graph

#: real seconds a real step may come after the plan's bound (the real components' latency)
TIME_TOLERANCE = 2.0


def _names(uids: set[str], by_uid: dict[str, Obj]) -> list[str]:
    return sorted(by_uid[u]["metadata"]["name"] if u in by_uid else u for u in uids)


def _reacting(report: PlanReport, before: dict[str, Obj]) -> set[str]:
    """The workloads whose reaction the plan names, and everything they own (transitively):
    their fate is outside the plan (``tools/plan/workloads.py``)."""
    dependents: dict[str, list[str]] = {}
    for uid, obj in before.items():
        for ref in obj["metadata"].get("ownerReferences") or []:
            dependents.setdefault(ref["uid"], []).append(uid)
    todo = [r.workload.uid for r in report.reactions]
    out: set[str] = set()
    while todo:
        uid = todo.pop()
        if uid not in out:
            out.add(uid)
            todo.extend(dependents.get(uid, []))
    return out - {lost.uid for r in report.reactions for lost in r.lost}


def _unnamed_reactions(report: PlanReport, recorder: Recorder,
                       before: dict[str, Obj]) -> list[str]:
    """Objects a controller made during the real delete (their controller an object that
    was there before it) whose controller the plan's reactions do not name."""
    named = {r.workload.uid for r in report.reactions}
    out = set()
    for change in recorder.ordered():
        meta = change.after["metadata"]
        ref = controller_ref_of(change.after)
        if meta["uid"] not in before and ref is not None and ref["uid"] in before and (
                ref["uid"] not in named):
            out.add(f"{change.after['kind']}/{meta['name']} (by {ref['kind']}/{ref['name']})")
    return sorted(out)


def compare(graph: Graph, name: str, report: PlanReport, recorder: Recorder,
            before: dict[str, Obj], records: list[str]) -> None:
    """The plan against what happened. Where a webhook refused DELETEs (``graph.webhook``
    "deny"), reality may differ only if the plan's notes name that webhook configuration;
    then what the refusals can change (``_refused``) is left out."""
    try:
        _compare(graph, name, report, recorder, before, records, set())
    except AssertionError as e:
        if graph.webhook != "deny":
            raise
        config = f"ValidatingWebhookConfiguration/g{graph.ident}-guard"
        assert any(config in note for note in report.notes), (
            f"reality differs from the plan and no note names {config}:\n{e}")
        _compare(graph, name, report, recorder, before, records, _refused(graph, before))


def _refused(graph: Graph, before: dict[str, Obj]) -> set[str]:
    """The guarded Secrets and everything connected to them by ownership (owners wait for
    them, their dependents keep their owner), the namespaces and the CRD."""
    linked: dict[str, set[str]] = {}
    for uid, obj in before.items():
        for ref in obj["metadata"].get("ownerReferences") or []:
            linked.setdefault(uid, set()).add(ref["uid"])
            linked.setdefault(ref["uid"], set()).add(uid)
    todo = [u for u, o in before.items() if o["metadata"].get("labels", {}).get("guarded")]
    out = {u for u, o in before.items() if o["kind"] in ("Namespace", "CustomResourceDefinition")}
    while todo:
        uid = todo.pop()
        if uid not in out:
            out.add(uid)
            todo.extend(linked.get(uid, ()))
    return out


def _compare(graph: Graph, name: str, report: PlanReport, recorder: Recorder,
             before: dict[str, Obj], records: list[str], refused: set[str]) -> None:
    # what the plan says depends on the order the GC takes dependents in is not compared,
    # nor what follows from a workload controller's reaction the plan names
    uncertain = ({o.object.uid for o in report.order_dependent} | _reacting(report, before)
                 | refused)
    ours = {u for u, o in before.items() if o["metadata"].get("labels", {}).get(
        "plan-graph") == graph.label} - uncertain
    target_uid = next(u for u, o in before.items() if o["metadata"]["name"] == name
                      and o["metadata"].get("labels", {}).get("plan-graph") == graph.label)
    real = Timeline([c for c in recorder.ordered() if c.after["metadata"]["uid"] in ours],
                    before, target_uid=target_uid, records=[])
    context = (f"\n{graph.describe()}\n(target: {name})\nplan steps:\n"
               + "\n".join(f"  {s.seq} {s.action.value} {s.object} {s.detail} {s.by}"
                           for s in report.steps)
               + "\nreal changes:\n" + "\n".join(
                   f"  {c.type} {c.after['metadata']['name']}" for c in recorder.ordered()
                   if c.after["metadata"]["uid"] in ours)
               + "\nreal DeletionRecords (since the graph was made):\n" + "\n".join(records))
    assert report.error == "", report.error + context
    unnamed = _unnamed_reactions(report, recorder, before)
    assert not unnamed, f"the plan does not name the controllers that made {unnamed}" + context
    planned = {r.uid for r in report.deleted} & ours  # not the namespace's own objects
    happened = {r.uid for r in real.deleted()}
    assert planned == happened, (f"deleted: plan {_names(planned, before)}, real "
                                 f"{_names(happened, before)}" + context)
    plan_survivors = {(s.object.uid, tuple(sorted(r.uid for r in s.kept_by)))
                      for s in report.survivors if s.object.uid in ours}
    real_survivors = {(s.object.uid, tuple(sorted(r.uid for r in s.kept_by)))
                      for s in real.survivors(recorder.current) if s.object.uid in ours}
    assert plan_survivors == real_survivors, (
        f"survivors: plan {sorted(plan_survivors)}, real {sorted(real_survivors)}" + context)
    plan_hanging = {f.object.uid for f in report.hanging} & ours
    real_hanging = {u for u in ours if u in recorder.current
                    and recorder.current[u]["metadata"].get("deletionTimestamp")
                    and (u == target_uid or not before[u]["metadata"].get("deletionTimestamp"))}
    assert plan_hanging == real_hanging, (f"hanging: plan {_names(plan_hanging, before)}, real "
                                          f"{_names(real_hanging, before)}" + context)
    # times within the stated bounds: a pod goes no later than the plan's "up to"
    real_gone = {s.object.uid: s.time for s in real.steps if s.action is StepAction.DELETED}
    for step in report.steps:
        if (step.action is StepAction.DELETED and step.object.kind == "Pod"
                and step.object.uid in real_gone and step.object.uid in ours):
            bound = step.latest if step.latest is not None else step.time
            assert real_gone[step.object.uid] <= bound + TIME_TOLERANCE, (
                f"{step.object.name} went at t+{real_gone[step.object.uid]:.1f}s, the plan "
                f"said up to t+{bound:.1f}s" + context)
    ordered = [c for c in recorder.ordered() if c.after["metadata"]["uid"] in ours]
    constraints = [c for c in report.constraints
                   if c.first.uid not in uncertain and c.then.uid not in uncertain]
    assert order_violations(constraints, ordered) == [], context


