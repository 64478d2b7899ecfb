"""``plan drain node/N``: what ``kubectl drain`` does (cf. kubectl's pkg/drain,
``RunCordonOrUncordon`` then ``RunNodeDrain``), in the simulation, on its clock.

1. Cordon: ``spec.unschedulable: true`` on the node.
2. The node's pods through kubectl's filters (``drain_filters.pods_for_deletion``): any
   error (a DaemonSet pod without ``--ignore-daemonsets``, a bare pod without ``--force``,
   an emptyDir without ``--delete-emptydir-data``) ends the drain there, with kubectl's
   message, the node cordoned and nothing evicted.
3. ``evictPods``: every pod's eviction is sent at once; a 429 (a PodDisruptionBudget with
   no disruption to give) is retried 5 s later, until ``--timeout`` (0: for ever); a 404
   means the pod is gone; any other refusal ends that pod's eviction with an error.
4. kubectl then waits for each evicted pod to be deleted (``waitForDelete``): the drain is
   done when the last one is gone.
The workload controllers do not run in a plan: the replacement pods of an evicted pod's
ReplicaSet (or other controller) are not created, so a budget that one of them would
satisfy again stays short; the plan says so in its notes.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from kubegc.api.errors import StatusError, is_not_found
from kubegc.api.meta import ListOptions, name_of, namespace_of, owner_references_of, uid_of
from kubegc.api.pod import NODES, PODS
from kubegc.api.types import Obj
from kubegc.tools.inventory import Inventory
from kubegc.tools.model import ObjRef
from kubegc.tools.plan.drain_filters import DrainOptions, aggregate, pods_for_deletion
from kubegc.tools.plan.operations import (
    Operation,
    _when,
    evicted_deletion,
    pods_on,
    refusal_text,
)
from kubegc.tools.plan.report import Outcome, PlanReport, StepAction
from kubegc.tools.plan.simulation import OpContext

#: kubectl drain's wait between two evictions of a pod refused with 429
RETRY_SECONDS = 5.0
#: how long the plan follows a drain with no --timeout (kubectl would retry for ever)
UNBOUNDED_FOLLOW = 300.0
BY = "kubectl drain (pods/eviction)"


@dataclass
class _Eviction:
    pod: Obj
    next_attempt: float = 0.0
    refusals: int = 0
    last_refusal: str = ""
    evicted_at: float | None = None
    error: str = ""


@dataclass
class DrainOperation(Operation):
    verb: str = "drain"
    options: DrainOptions = field(default_factory=DrainOptions)
    inv: Inventory | None = None
    error: str = ""
    evictions: dict[str, _Eviction] = field(default_factory=dict)
    started: float = 0.0  # the clock when the evictions began (``origin``: the request)
    origin: float = 0.0
    timed_out: bool = False
    _timers: list[asyncio.Task[None]] = field(default_factory=list)

    def requested(self) -> tuple[StepAction, str]:
        o = self.options
        flags = [f for f, on in (("--ignore-daemonsets", o.ignore_daemonsets),
                                 ("--delete-emptydir-data", o.delete_emptydir_data),
                                 ("--force", o.force)) if on]
        flags.append(f"--timeout={int(o.timeout)}s")
        return StepAction.DRAIN_REQUESTED, " ".join(flags)

    def nodes(self) -> list[str]:
        return [self.ref.name]

    def pods(self, inv: Inventory) -> list[Obj]:
        return pods_on(inv, self.ref.name)

    def extra_horizon(self, inv: Inventory) -> float:
        return (self.options.timeout or UNBOUNDED_FOLLOW) + RETRY_SECONDS

    def _daemon_set_exists(self, namespace: str, name: str) -> bool:
        return self.inv is not None and self.inv.find("apps", "DaemonSet", namespace,
                                                      name) is not None

    async def issue(self, ctx: OpContext) -> str:
        node = ctx.node_map.get(self.ref.name, self.ref.name)
        await ctx.sim.client.patch(NODES, node, {"spec": {"unschedulable": True}})
        self.add_step(ctx, StepAction.CORDONED, self.ref, "spec.unschedulable: true")
        listed = await ctx.sim.client.list(PODS, options=ListOptions(
            field_selector=f"spec.nodeName={node}"))
        chosen = pods_for_deletion(list(listed.get("items") or []), self.options,
                                   self._daemon_set_exists)
        errors = chosen.errors()
        if errors:
            self.error = (f'unable to drain node "{self.ref.name}" due to error: '
                          f"{aggregate(errors)}, continuing command...")
            return ""
        if chosen.warnings():
            self.notes.append(f"kubectl drain warns: Warning: {chosen.warnings()}")
        for pod, status in chosen.skipped():
            self.add_step(ctx, StepAction.SKIPPED, ObjRef.of(pod), status.message
                          or "a mirror pod", "kubectl drain")
        self.started, self.origin = ctx.clock.monotonic(), ctx.origin
        self.evictions = {uid_of(p): _Eviction(p, self.started) for p in chosen.pods()}
        await self._attempt(ctx)
        return ""

    async def after_settle(self, ctx: OpContext) -> bool:
        return await self._attempt(ctx)

    async def _attempt(self, ctx: OpContext) -> bool:
        now = ctx.clock.monotonic()
        pending = [e for e in self.evictions.values()
                   if e.evicted_at is None and not e.error and e.next_attempt <= now]
        if not pending or self.timed_out:
            return False
        if self.options.timeout and now - self.started >= self.options.timeout:
            self.timed_out = True
            return False
        for e in pending:  # kubectl sends them concurrently: here in the node's pod order
            await self._evict(ctx, e, now)
        waiting = [e.next_attempt for e in self.evictions.values()
                   if e.evicted_at is None and not e.error]
        if waiting:
            self._timer(ctx, min(waiting) - now)
            if self.options.timeout:
                self._timer(ctx, self.started + self.options.timeout - now)
        return True

    async def _evict(self, ctx: OpContext, e: _Eviction, now: float) -> None:
        ref = ObjRef.of(e.pod)
        try:
            await ctx.sim.evict(namespace_of(e.pod), name_of(e.pod))
        except StatusError as err:
            if is_not_found(err):
                e.evicted_at = now - ctx.origin
                return
            if err.code != 429:
                e.error = (f'error when evicting pods/"{ref.name}" -n "{ref.namespace}": '
                           f"{err.message}")
                self.add_step(ctx, StepAction.EVICTION_REFUSED, ref, refusal_text(err), BY)
                return
            if not e.refusals:
                self.add_step(ctx, StepAction.EVICTION_REFUSED, ref,
                              f"{refusal_text(err)} (kubectl retries every "
                              f"{int(RETRY_SECONDS)} s)", BY)
            e.refusals += 1
            e.last_refusal = refusal_text(err)
            e.next_attempt = now + RETRY_SECONDS
            return
        e.evicted_at = now - ctx.origin
        self.deletions.append(evicted_deletion(ctx, e.pod, BY))

    def _timer(self, ctx: OpContext, seconds: float) -> None:
        if seconds > 0:  # a sleeper is what moves the plan's clock to the retry
            self._timers.append(asyncio.get_running_loop().create_task(ctx.clock.sleep(seconds)))

    def close(self) -> None:
        for task in self._timers:
            task.cancel()
        self._timers.clear()

    def outcome(self, report: PlanReport) -> Outcome:
        if self.error:
            return Outcome(self.verb, "refused", False,
                           f"node {self.ref.name} is cordoned, but kubectl drain evicts "
                           f"nothing: {self.error}", error=self.error)
        self._replacement_notes()
        blocked = [e for e in self.evictions.values() if e.evicted_at is None]
        self._race_note(blocked)
        if blocked:
            return self._blocked(blocked)
        evicted = {uid_of(e.pod) for e in self.evictions.values()}
        gone = [s for s in report.steps if s.action is StepAction.DELETED
                and s.object.uid in evicted]
        left = evicted - {s.object.uid for s in gone}
        last = max(gone, key=lambda s: s.latest if s.latest is not None else s.time,
                   default=None)
        if left:
            return Outcome(self.verb, "waiting", False,
                           f"node {self.ref.name} is cordoned and its {len(evicted)} pod(s) "
                           f"evicted, but {len(left)} are not deleted within the plan: "
                           "kubectl drain waits for them")
        when = f" at {_when(last)}" if last is not None else " at once"
        latest = (last.latest if last is not None and last.latest is not None
                  else last.time if last is not None else 0.0)
        late = self.options.timeout and latest > self.options.timeout
        text = (f"node {self.ref.name} is drained{when}: {len(evicted)} pod(s) evicted"
                + (f" (beyond --timeout {int(self.options.timeout)}s at the latest: kubectl "
                   "may give up waiting first)" if late else ""))
        return Outcome(self.verb, "drained", True, text,
                       finished_at=last.time if last else 0.0, finished_by=latest)

    def _blocked(self, blocked: list[_Eviction]) -> Outcome:
        failed = [e for e in blocked if e.error]
        if failed:
            return Outcome(self.verb, "failed", False, "kubectl drain fails: "
                           + "; ".join(e.error for e in failed), error=failed[0].error)
        first = blocked[0]
        how = (f"until --timeout {int(self.options.timeout)}s" if self.options.timeout else
               f"for ever (no --timeout; the plan followed it {int(UNBOUNDED_FOLLOW)} s)")
        names = ", ".join(ObjRef.of(e.pod).short for e in blocked)
        return Outcome(self.verb, "blocked", False,
                       f"the drain would not finish: {names} blocked ({first.last_refusal}; "
                       f"evictions refused {first.refusals} times, retried every "
                       f"{int(RETRY_SECONDS)} s {how})",
                       error="global timeout reached" if self.options.timeout else "")

    def _race_note(self, blocked: list[_Eviction]) -> None:
        """A budget that let some of the node's pods go at once and refused others: which
        ones is a race of kubectl's concurrent evictions (the plan sent them in order)."""
        first = [e for e in self.evictions.values() if e.evicted_at is not None
                 and e.evicted_at <= self.started - self.origin]
        if first and any(e.refusals for e in blocked):
            self.notes.append(
                "kubectl drain sends the node's evictions concurrently: which pods a budget "
                "lets go first is a race; the plan sent them in the node's pod order ("
                + ", ".join(ObjRef.of(e.pod).short for e in first) + " went first)")

    def _replacement_notes(self) -> None:
        owners: dict[str, int] = {}
        for e in self.evictions.values():
            if e.evicted_at is None:
                continue
            for ref in owner_references_of(e.pod):
                if ref.get("controller") and ref.get("kind") != "DaemonSet":
                    key = f"{ref.get('kind')}/{ref.get('name')}"
                    owners[key] = owners.get(key, 0) + 1
        if owners:
            self.notes.append(
                "replacement pods are not simulated (the workload controllers do not run in a "
                "plan): " + ", ".join(f"{k} would create {n} pod(s)" for k, n in
                                      sorted(owners.items()))
                + "; a budget they would make healthy again is reported as it is without them")
