"""A small scheduler: binds pods without ``spec.nodeName`` to a node (cf.
kube-scheduler's default profile, reduced to what a simulated cluster needs).

Filter (as the NodeUnschedulable, NodeName, NodeAffinity(nodeSelector), TaintToleration
and NodeResourcesFit(pods) plugins do): the node is Ready, not cordoned, matches the pod's
``nodeSelector``, has no NoSchedule/NoExecute taint the pod does not tolerate, and runs
fewer non-terminal pods than its allocatable ``pods``. Score: the least-loaded node wins
(ties by name), which spreads pods round-robin over equal nodes.

Binding: kubegc serves no ``pods/binding`` subresource, so the scheduler patches
``spec.nodeName`` with the pod's ``resourceVersion`` as precondition (a concurrent change
makes the bind fail with a conflict and the pod is tried again). The kubelet then reports
``PodScheduled``. Event ``Scheduled`` "Successfully assigned <ns>/<pod> to <node>" (source
``default-scheduler``), as upstream. A pod that fits nowhere gets condition
``PodScheduled=False`` reason ``Unschedulable`` and a ``FailedScheduling`` event, and is
retried whenever a node or a pod changes.

PreFilter (as the VolumeBinding plugin's ``podHasPVCs``): a pod whose volumes name a claim
that does not exist (an ephemeral volume's: "waiting for ephemeral volume controller to
create the persistentvolumeclaim"), is being deleted, or — an ephemeral volume's — was not
created for the pod, fits nowhere, with upstream's message; it is tried again when a claim
changes. kubegc binds no volumes: a claim that exists is enough (upstream also waits for an
unbound claim of an ``Immediate`` StorageClass to be bound).

Only pods whose ``schedulerName`` is ``default-scheduler`` (or unset) are scheduled.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable
from typing import Any

from kubegc.api.clock import format_time
from kubegc.api.errors import StatusError, is_not_found
from kubegc.api.meta import is_being_deleted, name_of, namespace_of
from kubegc.api.pod import NODES, PODS
from kubegc.api.sparse import compacted
from kubegc.api.types import Obj
from kubegc.api.volumes import PVCS, claim_names, volume_is_for_pod
from kubegc.client.cache import DeletedFinalStateUnknown, FuncHandler
from kubegc.client.interface import PatchType
from kubegc.component import objects
from kubegc.component.base_controller import BaseController
from kubegc.component.context import ControllerContext

SCHEDULER_NAME = "default-scheduler"
WORKERS = 4
_TERMINAL = ("Succeeded", "Failed")


def _key(pod: Obj) -> str:
    return f"{namespace_of(pod)}/{name_of(pod)}"


def wants_scheduling(pod: Obj) -> bool:
    spec = pod.get("spec") or {}
    return (not spec.get("nodeName") and not is_being_deleted(pod)
            and (spec.get("schedulerName") or SCHEDULER_NAME) == SCHEDULER_NAME
            and (pod.get("status") or {}).get("phase") not in _TERMINAL)


def is_node_ready(node: Obj) -> bool:
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return bool(condition.get("status") == "True")
    return False


def tolerates(pod: Obj, taint: dict[str, Any]) -> bool:
    """Whether some toleration of ``pod`` matches ``taint`` (cf. ``ToleratesTaint``)."""
    for t in (pod.get("spec") or {}).get("tolerations") or []:
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        if t.get("key") and t.get("key") != taint.get("key"):
            continue
        operator = t.get("operator") or "Equal"
        if operator == "Exists" or (
                operator == "Equal" and (t.get("value") or "") == (taint.get("value") or "")):
            return True
    return False


def filter_node(pod: Obj, node: Obj, load: int) -> str | None:
    """None if ``pod`` fits on ``node``, else the reason (upstream's wording)."""
    spec, nspec = pod.get("spec") or {}, node.get("spec") or {}
    if not is_node_ready(node):
        return "node(s) were not ready"
    if nspec.get("unschedulable"):
        return "node(s) were unschedulable"
    labels = (node.get("metadata") or {}).get("labels") or {}
    selector = spec.get("nodeSelector") or {}
    if any(labels.get(k) != v for k, v in selector.items()):
        return "node(s) didn't match Pod's node affinity/selector"
    for taint in nspec.get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(pod, taint):
            value = f": {taint['value']}" if taint.get("value") else ""
            return f"node(s) had untolerated taint {{{taint.get('key')}{value}}}"
    allocatable = ((node.get("status") or {}).get("allocatable") or {}).get("pods")
    if allocatable is not None and load >= int(str(allocatable)):
        return "Too many pods"
    return None


def pod_has_pvcs(pod: Obj, claim_of: Callable[[str], Obj | None]) -> str | None:
    """VolumeBinding ``podHasPVCs``: None when every claim the pod's volumes name is usable,
    else why not (``claim_of``: the pod's namespace's claim of that name, or None)."""
    for claim, ephemeral in claim_names(pod):
        pvc = claim_of(claim)
        if pvc is None:
            return (f'waiting for ephemeral volume controller to create the '
                    f'persistentvolumeclaim "{claim}"' if ephemeral
                    else f'persistentvolumeclaim "{claim}" not found')
        if is_being_deleted(pvc):
            return f'persistentvolumeclaim "{claim}" is being deleted'
        if ephemeral and (refused := volume_is_for_pod(pod, pvc)) is not None:
            return refused
    return None


def unschedulable_message(total: int, reasons: Counter[str]) -> str:
    if total == 0:
        return "no nodes available to schedule pods"
    parts = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items()))
    return f"0/{total} nodes are available: {parts}."


class Scheduler(BaseController):
    """Binds pending pods. Ownership: ``_bound`` (pod key -> node of every non-terminal
    bound pod, including binds not yet seen by the informer) is updated by the pod
    handlers and by workers right after a successful bind; ``_unschedulable`` holds the
    keys to retry on cluster changes."""

    name = "scheduler"
    component = SCHEDULER_NAME

    def __init__(self, ctx: ControllerContext[None]) -> None:
        super().__init__(ctx, workers=WORKERS)
        self.pods = self.informer_factory.for_resource(PODS)
        self.nodes = self.informer_factory.for_resource(NODES)
        self.pvcs = self.informer_factory.for_resource(PVCS)
        self.synced_informers = [self.pods, self.nodes, self.pvcs]
        self.primary_informer = self.pods
        self._bound: dict[str, str] = {}
        self._unschedulable: set[str] = set()

    def register_handlers(self) -> None:
        self.pods.add_event_handler(FuncHandler(
            add=lambda obj, _: self._on_pod(obj), update=lambda _, new: self._on_pod(new),
            delete=self._on_pod_delete))
        self.nodes.add_event_handler(FuncHandler(
            add=lambda obj, _: self._retry_unschedulable(),
            update=lambda _, new: self._retry_unschedulable()))
        self.pvcs.add_event_handler(FuncHandler(
            add=lambda obj, _: self._retry_unschedulable(),
            update=lambda _, new: self._retry_unschedulable(),
            delete=lambda _: self._retry_unschedulable()))

    # -- handlers -----------------------------------------------------------------------

    def _on_pod(self, pod: Obj) -> None:
        key = _key(pod)
        node = (pod.get("spec") or {}).get("nodeName")
        phase = (pod.get("status") or {}).get("phase")
        if node and phase not in _TERMINAL:
            self._bound[key] = str(node)
        elif self._bound.pop(key, None) is not None:
            self._bound = compacted(self._bound)
            self._retry_unschedulable()  # a terminal pod frees its slot
        if wants_scheduling(pod):
            self.enqueue_key(key)

    def _on_pod_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        key = _key(pod)
        self._unschedulable.discard(key)
        if self._bound.pop(key, None) is not None:
            self._bound = compacted(self._bound)
            self._retry_unschedulable()

    def _retry_unschedulable(self) -> None:
        for key in self._unschedulable:
            self.enqueue_key(key)

    async def sync(self, key: str) -> float | None:
        await self.schedule_one(key)
        return None

    # -- scheduling ---------------------------------------------------------------------

    def select_node(self, pod: Obj) -> tuple[str | None, str]:
        """(the chosen node, or None and the unschedulable message)."""
        load = Counter(self._bound.values())
        reasons: Counter[str] = Counter()
        fits: list[tuple[int, str]] = []
        # a node the scheduler cannot understand takes no pod
        nodes = [n for n in self.nodes.indexer.list() if objects.NODE.understood(n)]
        ns = namespace_of(pod)
        pre_filter = pod_has_pvcs(pod, lambda claim: self.pvcs.indexer.get_by_key(
            f"{ns}/{claim}"))
        if pre_filter is not None:  # FitError with a PreFilter message
            return None, f"0/{len(nodes)} nodes are available: {pre_filter}."
        for node in nodes:
            name = name_of(node)
            reason = filter_node(pod, node, load[name])
            if reason is None:
                fits.append((load[name], name))
            else:
                reasons[reason] += 1
        if not fits:
            return None, unschedulable_message(len(nodes), reasons)
        return min(fits)[1], ""

    async def schedule_one(self, key: str) -> None:
        pod = self.pods.indexer.get_by_key(key)
        if pod is not None:
            objects.POD.check(pod)
        if pod is None or not wants_scheduling(pod) or key in self._bound:
            self._unschedulable.discard(key)
            return
        node, message = self.select_node(pod)
        if node is None:
            self._unschedulable.add(key)
            await self._mark_unschedulable(pod, message)
            return
        patch = {"metadata": {"resourceVersion": pod["metadata"].get("resourceVersion")},
                 "spec": {"nodeName": node}}
        try:
            await self.client.patch(PODS, name_of(pod), patch, namespace=namespace_of(pod),
                                    patch_type=PatchType.MERGE)
        except StatusError as exc:
            if is_not_found(exc):
                return
            raise
        self._unschedulable.discard(key)
        self._bound[key] = node
        self.recorder.event(pod, "Normal", "Scheduled",
                            f"Successfully assigned {key} to {node}")

    async def _mark_unschedulable(self, pod: Obj, message: str) -> None:
        conditions = [c for c in (pod.get("status") or {}).get("conditions") or []
                      if c.get("type") != "PodScheduled"]
        old = next((c for c in (pod.get("status") or {}).get("conditions") or []
                    if c.get("type") == "PodScheduled"), None)
        if old is not None and old.get("message") == message and old.get("status") == "False":
            return
        self.recorder.event(pod, "Warning", "FailedScheduling", message)
        conditions.append({"type": "PodScheduled", "status": "False",
                           "lastTransitionTime": format_time(self.clock.now()),
                           "reason": "Unschedulable", "message": message})
        with contextlib.suppress(StatusError):
            await self.client.patch(PODS, name_of(pod), {
                "metadata": {"resourceVersion": pod["metadata"].get("resourceVersion")},
                "status": {"conditions": conditions}},
                                    namespace=namespace_of(pod), patch_type=PatchType.MERGE,
                                    subresource="status")
