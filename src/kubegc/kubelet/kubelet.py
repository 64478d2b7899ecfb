"""The simulated kubelets: pods without containers, run and terminated like the real
kubelet does it (cf. pkg/kubelet: pod workers, ``SyncPod``/``SyncTerminatingPod`` (``sync_pod``,
``sync_terminating_pod``), ``killPod``/``killContainer`` (``kill_pod``), the status
manager's ``canBeDeleted`` (``can_be_deleted``) + final DELETE).

One ``Kubelet`` controller runs the kubelets of all simulated nodes (``--nodes N``:
``kubegc-node-1`` .. ``kubegc-node-N``, registered with leases by ``nodes.py``). For every
pod bound to one of those nodes it:

1. starts it: ``status`` -> Running with upstream-shaped conditions, containerStatuses,
   ``podIP`` from the node's CIDR, ``hostIP``, ``startTime``; events Pulled/Created/Started;
2. runs it: pods with ``kubegc.io/run-seconds`` (or ``restartPolicy`` Never/OnFailure,
   after ``job_pod_duration``) exit on their own -> Succeeded/Failed, or restart;
3. on ``deletionTimestamp`` terminates it (docs/kubelet.md, Termination): event
   ``Killing`` "Stopping container <name>", the preStop hook, TERM, wait until the
   processes exit or the grace period ends, KILL (Warning event ``Killed``), containers
   ``terminated`` (exit code 0 after a clean TERM exit, 137 after KILL), then the final
   ``DELETE`` with ``gracePeriodSeconds: 0`` and ``preconditions.uid``.

Per-pod annotations and their defaults: see ``termination`` and docs/kubelet.md.

A node annotated ``kubegc.io/kubelet: stopped`` (``nodes``) has a stopped kubelet: its pods
are not synced (a pod deleted meanwhile stays Terminating, as on a real cluster) until the
annotation says ``running`` or goes; the restarted kubelet re-posts every pod's status.

A pod deleted with ``--force --grace-period=0`` is gone at once; the kubelet only forgets
it. A pod whose final DELETE leaves it in place (finalizers) is not deleted again.

Waiting (grace periods, exit delays, run times) uses the injected clock through the work
queue's ``add_after``; such timers do not count as work for ``is_idle``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import kubegc.kubelet.kubelet_pods as runtime
from kubegc.api.errors import StatusError, is_conflict, is_not_found
from kubegc.api.meta import is_being_deleted, name_of, namespace_of, uid_of
from kubegc.api.pod import NODES, PODS
from kubegc.api.sparse import compacted
from kubegc.api.types import Obj
from kubegc.client.cache import DeletedFinalStateUnknown, FuncHandler
from kubegc.client.events import EventRecorder
from kubegc.client.interface import DeleteOptions, PatchType
from kubegc.client.workqueue import RateLimitingQueue
from kubegc.component.config import KubeletConfiguration
from kubegc.component.context import ControllerContext
from kubegc.component.failures import FailedSyncs
from kubegc.component.objects import POD
from kubegc.component.pending import Pending, of_queue
from kubegc.kubelet.kubelet_pods import PodRecord
from kubegc.kubelet.nodes import (
    NodeStatusReporter,
    PodIPAllocator,
    is_kubelet_stopped,
    node_index,
    node_ip,
    node_names,
    pod_cidr,
)
from kubegc.kubelet.termination import (
    PodSettings,
    SimulationDefaults,
    TerminationPlan,
    grace_period_of,
)
from kubegc.kubelet.volume_manager import VolumeManager, is_started

log = logging.getLogger(__name__)

#: pod workers; each sync is a couple of API calls, so a few suffice on one event loop
WORKERS = 8


class Kubelet:
    """Kubelets of all simulated nodes.

    Ownership: ``records`` (pod key -> ``PodRecord``) is written only by the worker
    holding that key (the queue hands a key to one worker at a time); handlers only
    enqueue keys. ``NodeStatusReporter`` runs in its own task."""

    name = "kubelet"
    component = "kubelet"

    def __init__(self, ctx: ControllerContext[KubeletConfiguration]) -> None:
        opts = ctx.options
        self.client, self.clock = ctx.client, ctx.clock
        max_pods = opts.node_max_pods
        self.node_names = node_names(opts.nodes)
        self.reporter = NodeStatusReporter(self.client, clock=self.clock, names=self.node_names,
                                           max_pods=max_pods)
        self.defaults = SimulationDefaults(
            exit_delay=opts.pod_exit_delay, prestop=opts.pod_prestop_delay,
            ignore_term=opts.pod_ignore_term, job_pod_duration=opts.job_pod_duration)
        self.pods = ctx.informer_factory.for_resource(PODS)
        self.nodes = ctx.informer_factory.for_resource(NODES)
        self.volumes = VolumeManager(self.client, self.clock, ctx.informer_factory)
        self.queue: RateLimitingQueue[str] = RateLimitingQueue(name="kubelet", clock=self.clock)
        self.recorders = {n: ctx.event_recorder(host=n) for n in self.node_names}
        self.allocators = {n: PodIPAllocator(pod_cidr(node_index(n), nodes=len(self.node_names),
                                                      max_pods=max_pods))
                           for n in self.node_names}
        self.records: dict[str, PodRecord] = {}
        self.failures = FailedSyncs("kubelet", self.queue, lookup=self.pods.indexer.get_by_key,
                                    recorder=self._recorder_of)
        self._gone_nodes: set[str] = set()
        self._retrying: set[str] = set()
        self._registering = True
        self._tasks: list[asyncio.Task[None]] = []

    # -- Controller protocol ------------------------------------------------------------

    async def start(self) -> None:
        self.pods.add_event_handler(FuncHandler(
            add=lambda obj, _: self._enqueue_pod(obj), update=lambda _, new: self._enqueue_pod(new),
            delete=self._on_pod_delete))
        self.nodes.add_event_handler(FuncHandler(
            add=lambda node, _: self._on_node_change(node),
            update=lambda _, node: self._on_node_change(node), delete=self._on_node_delete))
        self.volumes.register(self.failures.add)
        for recorder in self.recorders.values():
            recorder.start()
        self._tasks.append(asyncio.ensure_future(self._run()))

    async def stop(self) -> None:
        self.queue.shut_down()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for recorder in self.recorders.values():
            await recorder.stop()

    def is_idle(self) -> bool:
        """No pod queued or being synced, no failed sync waiting for a retry (but for pods
        it cannot understand); pending timers (grace periods, run times) do not count."""
        return (not self._registering and len(self.queue) == 0
                and self.queue.processing_count() == 0 and not self._retrying
                and all(r.is_idle() for r in self.recorders.values()))

    def pending(self) -> Pending:
        """Pods queued, in hand or waiting for a retry (with their last errors)."""
        return of_queue("kubelet", self.queue, self.failures.errors, waiting=self._retrying,
                        other=[what for what, busy in (
                            ("registering its nodes", self._registering),
                            ("events to write", not all(
                                r.is_idle() for r in self.recorders.values()))) if busy])

    def ready(self) -> bool:
        return not self._registering

    # -- event handlers -----------------------------------------------------------------

    def _runs_here(self, pod: Obj) -> bool:
        node = (pod.get("spec") or {}).get("nodeName")
        return node in self.recorders and node not in self._gone_nodes

    def _recorder_of(self, pod: Obj) -> EventRecorder:
        node = (pod.get("spec") or {}).get("nodeName")
        recorder = self.recorders.get(node) if isinstance(node, str) else None
        return recorder or next(iter(self.recorders.values()))

    def _enqueue_pod(self, pod: Obj) -> None:
        if self._runs_here(pod):
            self.failures.add(f"{namespace_of(pod)}/{name_of(pod)}")

    def _on_pod_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        self._enqueue_pod(pod)

    def _on_node_change(self, node: Obj) -> None:
        name = name_of(node)
        if name not in self.recorders or name in self._gone_nodes:
            return
        stopped = is_kubelet_stopped(node)
        if stopped and name not in self.reporter.stopped:
            log.info("the kubelet of node %s stops (annotation kubegc.io/kubelet)", name)
            self.reporter.pause(name)
        elif not stopped and name in self.reporter.stopped:
            log.info("the kubelet of node %s starts again", name)
            self._tasks.append(asyncio.ensure_future(self._restart(name)))

    async def _restart(self, name: str) -> None:
        """A restarted kubelet: heartbeats at once, every pod's status posted again."""
        try:
            await self.reporter.resume(name)
        except StatusError as exc:
            log.warning("node %s: first heartbeat after the restart failed: %s", name, exc)
        for key, rec in list(self.records.items()):
            if rec.node == name:
                rec.changed()
                self.queue.add(key)
        for pod in self.pods.indexer.list():
            if (pod.get("spec") or {}).get("nodeName") == name:
                self._enqueue_pod(pod)

    def _on_node_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        node = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        name = name_of(node)
        if name not in self.recorders:
            return
        log.info("node %s was deleted: its kubelet stops", name)
        self._gone_nodes.add(name)
        self.reporter.forget(name)
        for key, rec in list(self.records.items()):
            if rec.node == name:
                self.queue.add(key)

    # -- workers ------------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            await self.reporter.register()
        finally:
            self._registering = False
        self._tasks.append(asyncio.ensure_future(self.reporter.run()))
        await asyncio.gather(self.pods.wait_for_sync(), self.volumes.pvcs.wait_for_sync())
        for _ in range(WORKERS):
            self._tasks.append(asyncio.ensure_future(self._run_worker()))

    async def _run_worker(self) -> None:
        while await self._process_next_work_item():
            pass

    async def _process_next_work_item(self) -> bool:
        key, shutdown = await self.queue.get()
        if shutdown:
            return False
        try:
            wake = await self.sync_pod(key)
        except Exception as exc:  # handleErr: log, maybe record, retry later
            self.failures.failed(exc, key)
            if key not in self.failures:  # a pod it cannot understand is no work to wait for
                self._retrying.add(key)
        else:
            self._retrying.discard(key)
            self.failures.succeeded(key)
            self.queue.forget(key)
            if wake is not None:
                self.queue.add_after(key, max(wake - self.clock.monotonic(), 0.0))
        finally:
            self.queue.done(key)
        return True

    # -- sync ---------------------------------------------------------------------------

    async def sync_pod(self, key: str) -> float | None:
        """Bring pod ``key`` one step further. Returns the monotonic time to look at it
        again (None: when something changes)."""
        pod = self.pods.indexer.get_by_key(key)
        if pod is not None:
            POD.check(pod)
            if (pod.get("spec") or {}).get("nodeName") in self.reporter.stopped:
                return None  # its kubelet is stopped: looked at again when it starts
        rec = self.records.get(key)
        if rec is not None and (pod is None or uid_of(pod) != rec.uid or not self._runs_here(pod)):
            self._forget(key, rec)
            rec = None
        if pod is None or not self._runs_here(pod):
            self.volumes.waiting.pop(key, None)
            return None
        if rec is None and not is_being_deleted(pod) and not is_started(pod) and (
                await self.volumes.wait_for_attach_and_mount(
                    key, pod, host_ip=node_ip(node_index(str(pod["spec"]["nodeName"]))),
                    recorder=self._recorder_of(pod))):
            return None
        settings = PodSettings.of(pod, self.defaults)
        if rec is None:
            rec = self._admit(pod)
        if is_being_deleted(pod):
            return await self.sync_terminating_pod(pod, rec, settings)
        return await self._sync_running(pod, rec, settings)

    def _admit(self, pod: Obj) -> PodRecord:
        node = str(pod["spec"]["nodeName"])
        host_ip = node_ip(node_index(node))
        allocator = self.allocators[node]
        if is_started(pod) or is_being_deleted(pod):
            rec = runtime.adopt_pod(pod, node=node, host_ip=host_ip, now=self.clock.monotonic())
            if rec.pod_ip:
                allocator.adopt(rec.uid, rec.pod_ip)
        else:
            rec, events = runtime.start_pod(
                pod, node=node, pod_ip=allocator.allocate(uid_of(pod)), host_ip=host_ip,
                now=self.clock.monotonic(), now_wall=self.clock.now())
            self._record(pod, rec, events)
        self.records[rec.key] = rec
        return rec

    def _forget(self, key: str, rec: PodRecord) -> None:
        self.records.pop(key, None)
        self.records = compacted(self.records)
        allocator = self.allocators.get(rec.node)
        if allocator is not None:
            allocator.release(rec.uid)

    async def _sync_running(self, pod: Obj, rec: PodRecord, settings: PodSettings) -> float | None:
        restart_policy = str((pod.get("spec") or {}).get("restartPolicy") or "Always")
        events, wake = runtime.advance(rec, settings, restart_policy=restart_policy,
                                       now=self.clock.monotonic(), now_wall=self.clock.now())
        self._record(pod, rec, events)
        if rec.posted != rec.version:
            await self._post_status(pod, rec)
        return wake

    async def sync_terminating_pod(self, pod: Obj, rec: PodRecord,
                                   settings: PodSettings) -> float | None:
        """``Kubelet.SyncTerminatingPod`` (pkg/kubelet/kubelet.go): ``kill_pod``, post the
        terminal status, then — once the pod ``can_be_deleted`` — the status manager's
        final DELETE. Returns when to look again while containers are still stopping."""
        if rec.final_delete_sent:
            return None  # held by finalizers: the kubelet is done with it
        now = self.clock.monotonic()
        plan = self.kill_pod(pod, rec, settings, now=now)
        if not plan.done(now):
            return plan.next_deadline(now)
        if rec.posted != rec.version and await self._post_status(pod, rec) is None:
            return None
        if self.can_be_deleted(pod, rec, now=now):
            await self._final_delete(pod, rec)
        return None

    def kill_pod(self, pod: Obj, rec: PodRecord, settings: PodSettings, *,
                 now: float) -> TerminationPlan:
        """``Kubelet.killPod`` (and kuberuntime's ``killContainer`` for each container):
        the pod's termination plan, started on first sight of its deletion (Killing,
        preStop) and shortened by a later shorter grace period; the containers killed when
        the grace period ends are reported, and once every container has stopped the
        record says so. ``plan.done(now)``: every container has stopped."""
        plan = rec.termination
        if plan is None:
            running = rec.running() if rec.phase not in runtime.TERMINAL_PHASES else []
            plan = rec.termination = TerminationPlan.build(pod, settings, now=now, running=running)
            self._record_kill_start(pod, rec, plan, settings)
        else:
            plan.shorten(grace_period_of(pod), now=now)
        self._record_kills(pod, rec, plan, now)
        if plan.done(now) and rec.containers and rec.phase not in runtime.TERMINAL_PHASES:
            runtime.terminate(rec, plan, now=now, now_wall=self.clock.now())
        return plan

    @staticmethod
    def can_be_deleted(pod: Obj, rec: PodRecord, *, now: float) -> bool:
        """The status manager's ``canBeDeleted`` (pkg/kubelet/status/status_manager.go):
        the pod is being deleted, every container has stopped, and the status that says so
        has been posted."""
        plan = rec.termination
        return (is_being_deleted(pod) and plan is not None and plan.done(now)
                and rec.posted == rec.version)

    def _record_kill_start(self, pod: Obj, rec: PodRecord, plan: TerminationPlan,
                           settings: PodSettings) -> None:
        events: list[runtime.Event] = []
        for stop in plan.containers:
            events.append(("Normal", "Killing", f"Stopping container {stop.name}"))
            if stop.has_prestop:
                events.append(("Normal", "PreStopHook",
                               f"Running preStop hook of container {stop.name} "
                               f"(simulated: {min(settings.prestop, plan.grace):g}s)"))
        self._record(pod, rec, events)

    def _record_kills(self, pod: Obj, rec: PodRecord, plan: TerminationPlan, now: float) -> None:
        for stop in plan.containers:
            if stop.killed and stop.exit_at <= now and stop.name not in rec.reported_kills:
                rec.reported_kills.add(stop.name)
                self._record(pod, rec, [(
                    "Warning", "Killed",
                    f"Container {stop.name} did not stop within the grace period "
                    f"({plan.grace:g}s): killed with SIGKILL, exit code {stop.exit_code}")])

    def _record(self, pod: Obj, rec: PodRecord, events: list[runtime.Event]) -> None:
        recorder = self.recorders[rec.node]
        for type_, reason, message in events:
            recorder.event(pod, type_, reason, message)

    async def _post_status(self, pod: Obj, rec: PodRecord) -> Obj | None:
        """Patch the pod's status (the UID in the patch guards against a re-created pod).
        Returns None if the pod is gone."""
        version = rec.version
        patch = {"metadata": {"uid": rec.uid},
                 "status": runtime.generate_status(pod, rec, now_wall=self.clock.now())}
        try:
            result = await self.client.patch(PODS, name_of(pod), patch,
                                              namespace=namespace_of(pod),
                                              patch_type=PatchType.MERGE, subresource="status")
        except StatusError as exc:
            if is_not_found(exc):
                return None
            raise
        rec.posted = version
        return result

    async def _final_delete(self, pod: Obj, rec: PodRecord) -> None:
        """The status manager's last word (its ``syncPod`` once ``canBeDeleted``): DELETE with
        grace 0 and a UID precondition."""
        options = DeleteOptions(grace_period_seconds=0, preconditions_uid=rec.uid)
        try:
            await self.client.delete(PODS, name_of(pod), namespace=namespace_of(pod),
                                     options=options)
        except StatusError as exc:
            if not (is_not_found(exc) or is_conflict(exc)):
                raise
        rec.final_delete_sent = True
