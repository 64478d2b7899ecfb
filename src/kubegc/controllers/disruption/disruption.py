"""The disruption controller (cf. pkg/controller/disruption/disruption.go).

For each PodDisruptionBudget, ``trySync``: the pods its selector matches; the pods it
expects and needs healthy (``getExpectedPodCount``: an integer ``minAvailable`` counts the
matched pods; ``maxUnavailable`` or a percentage asks each pod's controller for its scale,
``getExpectedScale`` — a Deployment through its ReplicaSet, a ReplicaSet, a
ReplicationController, a StatefulSet); the evictions still expected to delete a pod
(``buildDisruptedPodMap``: ``status.disruptedPods`` entries younger than
``DELETION_TIMEOUT``, the budget re-synced when the first one expires); the healthy pods
(``countHealthyPods``: Ready, not deleting, not just evicted); then the status, written
only when it changed, with ``disruptionsAllowed`` = healthy − desired (0 while no pod is
expected) and the ``DisruptionAllowed`` condition. A sync that fails for another reason
than a conflict leaves the budget safe (``failSafe``: no disruption allowed, condition
reason ``SyncFailed``). Events as upstream: ``NoPods``, ``CalculateExpectedPodCountFailed``,
``NoControllers``, ``UnmanagedPods``, ``NotDeleted``.

Not simulated: the scale subresource of custom resources (their pods' controller counts as
not found: ``NoControllers``), and the clean-up of stale ``DisruptionTarget`` pod
conditions.
"""

from __future__ import annotations

import contextlib
import copy
import math
from datetime import datetime, timedelta
from typing import Any

from kubegc.api.clock import format_time, parse_time
from kubegc.api.disruption import (
    PDB_DISRUPTION_ALLOWED,
    SYNC_FAILED,
    disruption_allowed_condition,
    selects,
    set_condition,
)
from kubegc.api.errors import StatusError, is_conflict, is_not_found
from kubegc.api.meta import controller_ref_of, name_of, namespace_of
from kubegc.api.pod import PODS, is_pod_ready
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    FuncHandler,
    meta_namespace_index_func,
)
from kubegc.component.base_controller import BaseController, tombstone_object
from kubegc.component.context import ControllerContext

PDBS = GroupVersionResource("policy", "v1", "poddisruptionbudgets")
DEPLOYMENTS = GroupVersionResource("apps", "v1", "deployments")
REPLICA_SETS = GroupVersionResource("apps", "v1", "replicasets")
STATEFUL_SETS = GroupVersionResource("apps", "v1", "statefulsets")
REPLICATION_CONTROLLERS = GroupVersionResource("", "v1", "replicationcontrollers")
#: ``DeletionTimeout``: how long an eviction's entry in ``disruptedPods`` is believed
DELETION_TIMEOUT = timedelta(minutes=2)


class NoControllersError(Exception):
    """``found no controllers for pod %q``."""


def scaled_value(value: Any, total: int) -> int:
    """``intstr.GetScaledValueFromIntOrPercent`` rounding up."""
    if isinstance(value, int):
        return value
    text = str(value)
    if text.endswith("%"):
        return math.ceil(int(text[:-1]) * total / 100)
    return int(text)


def count_healthy_pods(pods: list[Obj], disrupted: dict[str, str], now: datetime) -> int:
    """``countHealthyPods``: Ready pods, neither deleting nor just evicted."""
    healthy = 0
    for pod in pods:
        if pod["metadata"].get("deletionTimestamp"):
            continue
        since = disrupted.get(name_of(pod))
        if since and parse_time(since) + DELETION_TIMEOUT > now:
            continue
        if is_pod_ready(pod):
            healthy += 1
    return healthy


class DisruptionController(BaseController):
    """Keeps PodDisruptionBudget status. Handlers enqueue budget keys (a pod's change
    enqueues the budget that selects it, ``getPdbForPod``); one worker syncs."""

    name = "disruption"
    component = "controllermanager"

    def __init__(self, ctx: ControllerContext[Any]) -> None:
        super().__init__(ctx, workers=1)
        self.pdbs = self.informer_factory.for_resource(PDBS)
        self.pods = self.informer_factory.for_resource(PODS)
        self.replica_sets = self.informer_factory.for_resource(REPLICA_SETS)
        self.deployments = self.informer_factory.for_resource(DEPLOYMENTS)
        self.stateful_sets = self.informer_factory.for_resource(STATEFUL_SETS)
        self.rcs = self.informer_factory.for_resource(REPLICATION_CONTROLLERS)
        self.synced_informers = [self.pdbs, self.pods, self.replica_sets, self.deployments,
                                 self.stateful_sets, self.rcs]
        self.primary_informer = self.pdbs

    def register_handlers(self) -> None:
        for informer in (self.pdbs, self.pods):
            with contextlib.suppress(ValueError):  # another controller added it already
                informer.indexer.add_indexers({NAMESPACE_INDEX: meta_namespace_index_func})
        self.pdbs.add_event_handler(FuncHandler(
            add=lambda obj, _: self.enqueue(obj), update=lambda _, new: self.enqueue(new),
            delete=self.enqueue))
        self.pods.add_event_handler(FuncHandler(
            add=lambda obj, _: self._on_pod(obj), update=lambda _, new: self._on_pod(new),
            delete=self._on_pod_delete))

    def _on_pod(self, pod: Obj) -> None:
        pdb = self.get_pdb_for_pod(pod)
        if pdb is not None:
            self.enqueue(pdb)

    def _on_pod_delete(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        self._on_pod(tombstone_object(obj))

    def get_pdb_for_pod(self, pod: Obj) -> Obj | None:
        """``getPdbForPod``: the first budget selecting the pod (upstream warns with
        ``MultiplePodDisruptionBudgets`` when there are more)."""
        found = [p for p in self.pdbs.indexer.by_index(NAMESPACE_INDEX, namespace_of(pod))
                 if selects(p, pod, empty_matches_all=True)]
        if len(found) > 1:
            self.recorder.event(pod, "Warning", "MultiplePodDisruptionBudgets",
                                f"Pod {namespace_of(pod)}/{name_of(pod)} matches multiple "
                                "PodDisruptionBudgets.  Chose "
                                f"{name_of(found[0])!r} arbitrarily.")
        return found[0] if found else None

    async def sync(self, key: str) -> float | None:
        pdb = self.pdbs.indexer.get_by_key(key)
        if pdb is None:
            return None
        try:
            return await self.try_sync(pdb)
        except StatusError as e:
            if is_conflict(e) or is_not_found(e):
                raise
            await self.fail_safe(pdb, str(e))
        except NoControllersError as e:
            await self.fail_safe(pdb, str(e))
        return None

    async def try_sync(self, pdb: Obj) -> float | None:
        """``trySync``; returns when the budget must be checked again (an eviction's
        ``disruptedPods`` entry expiring)."""
        pods = [p for p in self.pods.indexer.by_index(NAMESPACE_INDEX, namespace_of(pdb))
                if selects(pdb, p, empty_matches_all=True)]
        if not pods:
            self.recorder.event(pdb, "Normal", "NoPods", "No matching pods found")
        try:
            expected, desired, unmanaged = self.get_expected_pod_count(pdb, pods)
        except NoControllersError as e:
            self.recorder.event(pdb, "Warning", "CalculateExpectedPodCountFailed",
                                f"Failed to calculate the number of expected pods: {e}")
            raise
        if unmanaged:
            self.recorder.event(pdb, "Warning", "UnmanagedPods", (
                "Pods selected by this PodDisruptionBudget (selector: "
                f"{(pdb.get('spec') or {}).get('selector')}) were found to be unmanaged. As "
                "a result, the status of the PDB cannot be calculated correctly, which may "
                "result in undefined behavior. To account for these pods please set "
                "\".spec.minAvailable\" field of the PDB to an integer value."))
        now = self.clock.now()
        disrupted, recheck = self.build_disrupted_pod_map(pods, pdb, now)
        healthy = count_healthy_pods(pods, disrupted, now)
        await self.update_pdb_status(pdb, healthy, desired, expected, disrupted)
        return None if recheck is None else max((recheck - now).total_seconds(), 0.0)

    def get_expected_pod_count(self, pdb: Obj, pods: list[Obj]) -> tuple[int, int, list[str]]:
        """``getExpectedPodCount``: (expected pods, desired healthy, unmanaged pods)."""
        spec = pdb.get("spec") or {}
        if spec.get("maxUnavailable") is not None:
            expected, unmanaged = self.get_expected_scale(pdb, pods)
            desired = max(expected - scaled_value(spec["maxUnavailable"], expected), 0)
            return expected, desired, unmanaged
        minimum = spec.get("minAvailable")
        if isinstance(minimum, int):
            return len(pods), minimum, []
        if minimum is not None:
            expected, unmanaged = self.get_expected_scale(pdb, pods)
            return expected, scaled_value(minimum, expected), unmanaged
        return 0, 0, []

    def get_expected_scale(self, pdb: Obj, pods: list[Obj]) -> tuple[int, list[str]]:
        """``getExpectedScale``: the sum of the scales of the pods' controllers."""
        scales: dict[str, int] = {}
        unmanaged: list[str] = []
        for pod in pods:
            ref = controller_ref_of(pod)
            if ref is None:
                unmanaged.append(name_of(pod))
                continue
            if ref.get("uid") in scales:
                continue
            found = self._controller_scale(ref, namespace_of(pod))
            if found is None:
                message = f"found no controllers for pod {name_of(pod)!r}".replace("'", '"')
                self.recorder.event(pdb, "Warning", "NoControllers", message)
                raise NoControllersError(message)
            scales[found[0]] = found[1]
        return sum(scales.values()), unmanaged

    def _controller_scale(self, ref: dict[str, Any], namespace: str) -> tuple[str, int] | None:
        """The finders (``getPodReplicaSet``, ``getPodDeployment``,
        ``getPodReplicationController``, ``getPodStatefulSet``): the controller's uid and
        desired replicas, or None."""
        kind, group = ref.get("kind"), str(ref.get("apiVersion") or "").partition("/")[0]
        if kind == "ReplicaSet" and group in ("apps", "extensions"):
            rs = self._owned(self.replica_sets.indexer.get_by_key(f"{namespace}/{ref['name']}"),
                             ref)
            if rs is None:
                return None
            owner = controller_ref_of(rs)
            if owner is not None and owner.get("kind") == "Deployment":
                deployment = self._owned(self.deployments.indexer.get_by_key(
                    f"{namespace}/{owner['name']}"), owner)
                return None if deployment is None else _replicas(deployment)
            return _replicas(rs)
        informers = {("ReplicationController", "v1"): self.rcs,
                     ("StatefulSet", "apps"): self.stateful_sets}
        informer = informers.get((str(kind), group or "v1"))
        if informer is None:
            return None
        owner_obj = self._owned(informer.indexer.get_by_key(f"{namespace}/{ref['name']}"), ref)
        return None if owner_obj is None else _replicas(owner_obj)

    @staticmethod
    def _owned(obj: Obj | None, ref: dict[str, Any]) -> Obj | None:
        return obj if obj is not None and obj["metadata"].get("uid") == ref.get("uid") else None

    def build_disrupted_pod_map(self, pods: list[Obj], pdb: Obj,
                                now: datetime) -> tuple[dict[str, str], datetime | None]:
        """``buildDisruptedPodMap``: the evictions still expected to delete a pod, and when
        the first of them expires."""
        disrupted: dict[str, str] = (pdb.get("status") or {}).get("disruptedPods") or {}
        result: dict[str, str] = {}
        recheck: datetime | None = None
        for pod in pods:
            since = disrupted.get(name_of(pod))
            if pod["metadata"].get("deletionTimestamp") or not since:
                continue
            expected_deletion = parse_time(since) + DELETION_TIMEOUT
            if expected_deletion < now:
                self.recorder.event(pod, "Warning", "NotDeleted",
                                    f"Pod was expected by PDB {namespace_of(pdb)}/"
                                    f"{name_of(pdb)} to be deleted but it wasn't")
                continue
            if recheck is None or expected_deletion < recheck:
                recheck = expected_deletion
            result[name_of(pod)] = since
        return result, recheck

    async def update_pdb_status(self, pdb: Obj, healthy: int, desired: int, expected: int,
                                disrupted: dict[str, str]) -> None:
        """``updatePdbStatus``: write the status if any of it changed."""
        allowed = healthy - desired
        if expected <= 0 or allowed <= 0:
            allowed = 0
        status = pdb.get("status") or {}
        generation = int(pdb["metadata"].get("generation") or 0)
        new_status: dict[str, Any] = {
            "observedGeneration": generation, "disruptedPods": disrupted or None,
            "disruptionsAllowed": allowed, "currentHealthy": healthy,
            "desiredHealthy": desired, "expectedPods": expected,
            "conditions": copy.deepcopy(status.get("conditions") or [])}
        if not disrupted:
            del new_status["disruptedPods"]
        disruption_allowed_condition(new_status, format_time(self.clock.now()))
        if all(status.get(k) == new_status.get(k) for k in (
                "observedGeneration", "disruptionsAllowed", "currentHealthy", "desiredHealthy",
                "expectedPods", "conditions")) and (status.get("disruptedPods") or {}) == disrupted:
            return
        new = copy.deepcopy(pdb)
        new["status"] = new_status
        await self.client.update(PDBS, new, namespace=namespace_of(pdb), subresource="status")

    async def fail_safe(self, pdb: Obj, message: str) -> None:
        """``failSafe``: no disruption allowed, condition reason ``SyncFailed``."""
        new = copy.deepcopy(pdb)
        status = new.setdefault("status", {})
        status["disruptionsAllowed"] = 0
        set_condition(status, {
            "type": PDB_DISRUPTION_ALLOWED, "status": "False", "reason": SYNC_FAILED,
            "message": message, "observedGeneration": int(status.get("observedGeneration") or 0)},
            format_time(self.clock.now()))
        await self.client.update(PDBS, new, namespace=namespace_of(pdb), subresource="status")


def _replicas(obj: Obj) -> tuple[str, int]:
    replicas = (obj.get("spec") or {}).get("replicas")
    return str(obj["metadata"].get("uid")), 1 if replicas is None else int(replicas)
