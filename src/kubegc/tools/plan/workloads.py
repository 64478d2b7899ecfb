"""What a plan does not simulate but must name: the workload controllers' reaction.

A plan runs no workload controller (``simulation.PLAN_CONTROLLERS``): nothing is recreated
while the delete proceeds. But when the delete takes from a workload that stays (not
deleted, not being deleted when the simulation went quiet) an object its controller
manages — a ReplicaSet's pod, a Deployment's ReplicaSet, a Job's pod —, that controller
reacts on a real cluster, and the plan names it (``Reaction``) instead of letting its
silence say "nothing more happens":

- a ReplicaSet, ReplicationController, StatefulSet or DaemonSet makes the pod again
  (upstream ``ReplicaSetController.manageReplicas``, ``StatefulSetControl``,
  ``DaemonSetsController.manage``), a Deployment a new ReplicaSet
  (``DeploymentController.getNewReplicaSet``); an owner being deleted gets nothing made
  (``syncReplicaSet`` skips ``manageReplicas`` once ``DeletionTimestamp`` is set);
- a Job counts a pod deleted before it finished as failed (upstream ``isPodFailed`` in
  pkg/controller/job) and either makes a new one or, past ``backoffLimit``, fails — and a
  failed Job with ``ttlSecondsAfterFinished`` is then deleted with its dependents by the
  TTL-after-finished controller.

What follows from such a reaction (the new objects, and whatever happens to the workload
and its dependents because of it) is outside the plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubegc.api.meta import controller_ref_of, is_being_deleted
from kubegc.api.resources import split_api_version
from kubegc.api.types import Obj
from kubegc.tools.model import ObjRef

#: (group, kind) of a workload → what its controller does about a managed object it lost
REACTIONS = {
    ("apps", "ReplicaSet"): "makes a new pod in place of each (replicas {replicas})",
    ("", "ReplicationController"): "makes a new pod in place of each (replicas {replicas})",
    ("apps", "StatefulSet"): "makes each pod again, with the same name",
    ("apps", "DaemonSet"): "makes each pod again on its node",
    ("apps", "Deployment"): "makes a new ReplicaSet",
    ("batch", "Job"): "counts each pod deleted before it finished as failed, then makes a new "
                      "one or, past backoffLimit {backoffLimit}, fails (a failed Job with "
                      "ttlSecondsAfterFinished is then deleted with its dependents)",
}


@dataclass(frozen=True, slots=True)
class Reaction:
    """A workload that stays and loses objects its controller manages."""

    workload: ObjRef
    lost: tuple[ObjRef, ...]
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"workload": self.workload.to_dict(), "lost": [o.to_dict() for o in self.lost],
                "why": self.why}


def _key(obj: Obj) -> tuple[str, str]:
    return split_api_version(str(obj.get("apiVersion") or ""))[0], str(obj.get("kind") or "")


def _what(workload: Obj) -> str:
    spec = workload.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    return REACTIONS[_key(workload)].format(replicas=spec.get("replicas", 1),
                                           backoffLimit=spec.get("backoffLimit", 6))


def reactions(before: dict[str, Obj], end: dict[str, Obj],
              deleted: list[ObjRef]) -> list[Reaction]:
    """The workloads in ``end`` (the simulation's last state, by uid) that are not being
    deleted and whose controller managed objects of ``deleted`` (as they were in
    ``before``)."""
    lost: dict[str, list[ObjRef]] = {}
    for ref in deleted:
        obj = before.get(ref.uid)
        owner = controller_ref_of(obj) if obj is not None else None
        uid = str((owner or {}).get("uid") or "")
        workload = end.get(uid)
        if workload is not None and _key(workload) in REACTIONS and not is_being_deleted(
                workload):
            lost.setdefault(uid, []).append(ref)
    out = []
    for uid, refs in lost.items():
        workload = end[uid]
        names = ", ".join(r.short for r in refs)
        why = (f"{ObjRef.of(workload)} stays and loses {names}: its controller, which a plan "
               f"does not simulate, {_what(workload)}; what follows from that is not planned")
        out.append(Reaction(ObjRef.of(workload), tuple(refs), why))
    return sorted(out, key=lambda r: r.workload)


__all__ = ["REACTIONS", "Reaction", "reactions"]
