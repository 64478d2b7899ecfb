"""What every doctor check reads: the inventory, the owner graph, the options, and
helpers that phrase kubectl commands for the fixes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from kubegc.api.meta import finalizers_of
from kubegc.api.types import Obj
from kubegc.kubelet.nodes import KUBELET_ANNOTATION, is_kubelet_stopped
from kubegc.tools.delete_webhooks import delete_webhooks
from kubegc.tools.finalizers import (
    Alive,
    ControllerMap,
    Evidence,
    Remover,
    lease_evidence,
    who_removes,
)
from kubegc.tools.inventory import Inventory
from kubegc.tools.model import ObjRef
from kubegc.tools.ownership import OwnerGraph, RefCheck, check_refs

DEFAULT_STUCK_AFTER = 30.0


@dataclass
class DoctorOptions:
    #: an object counts as stuck this many seconds after its deletionTimestamp
    stuck_after: float = DEFAULT_STUCK_AFTER
    mapping: ControllerMap = field(default_factory=ControllerMap)


@dataclass
class Context:
    inv: Inventory
    graph: OwnerGraph
    options: DoctorOptions
    #: finalizer -> its remover (the same for every object: asked once per finalizer)
    _removers: dict[str, Remover] = field(default_factory=dict)
    #: (id of an ownerReferences list, the namespace of its holder) -> the list and its
    #: references looked up: dependents of one owner share one list (``tools.slim``), and
    #: a reference's check depends only on it and that namespace (``check_ref``)
    _checks: dict[tuple[int, str], tuple[object, list[RefCheck]]] = field(
        default_factory=dict)
    #: (group, kind) -> the webhooks taking DELETEs of that kind's resource
    _delete_webhooks: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    def remover(self, finalizer: str, obj: Obj) -> Remover:
        found = self._removers.get(finalizer)
        if found is None:
            found = self._removers[finalizer] = who_removes(finalizer, obj, self.inv,
                                                            self.options.mapping)
        return found

    def checks(self, obj: Obj) -> list[RefCheck]:
        """``ownership.check_refs`` of ``obj``, once per list of references (several
        checks ask, and many objects share one list)."""
        meta = obj.get("metadata") or {}
        refs = meta.get("ownerReferences")
        key = (id(refs), str(meta.get("namespace") or ""))
        found = self._checks.get(key)
        if found is None:  # the list is held with its checks: its id is not reused
            found = self._checks[key] = (refs, check_refs(self.inv, obj))
        return found[1]

    def delete_webhooks(self, ref: ObjRef) -> list[str]:
        """The admission webhooks whose rules take DELETEs of ``ref``'s resource
        (``kubegc.tools.delete_webhooks``), once per kind."""
        key = (ref.group, ref.kind)
        found = self._delete_webhooks.get(key)
        if found is None:
            res = self.inv.resource_for_kind(*key)
            found = self._delete_webhooks[key] = (
                delete_webhooks(self.inv, [(ref.group, res.resource)]) if res else [])
        return found

    def removers(self, obj: Obj, *, skip: tuple[str, ...] = ()) -> list[Remover]:
        return [self.remover(f, obj) for f in finalizers_of(obj) if f not in skip]

    def kubelet(self, pod: Obj) -> Remover:
        """The kubelet as the remover of a terminating pod (no finalizer involved)."""
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        grace = int((pod.get("metadata") or {}).get("deletionGracePeriodSeconds") or 0)
        skips = ("the pod's graceful shutdown (preStop hooks, TERM): its containers may "
                 "still run on the node")
        return Remover("(graceful termination)", f"the kubelet on node {node}", "spec.nodeName",
                       f"once the containers have stopped (grace period {grace}s)", skips,
                       tuple(self.node_evidence(node)))

    def node_evidence(self, node: str) -> list[Evidence]:
        obj = self.inv.find("", "Node", "", node)
        if obj is None:
            fact = "not found: the pod garbage collector force-deletes pods of deleted nodes"
            return [Evidence(f"Node {node}", fact, Alive.NO)]
        ready, since = "Unknown", ""
        for cond in (obj.get("status") or {}).get("conditions") or []:
            if cond.get("type") == "Ready":
                ready, since = str(cond.get("status")), str(cond.get("lastTransitionTime") or "")
        out = [Evidence(f"Node {node}", f"Ready={ready}",
                        Alive.YES if ready == "True" else Alive.NO)]
        if is_kubelet_stopped(obj):
            out.append(Evidence(
                f"Node {node}", f"its kubelet is stopped ({KUBELET_ANNOTATION}=stopped; not "
                f"Ready since {since or 'unknown'}): the pod stays Terminating until the "
                f"kubelet runs again (kubectl annotate node {node} {KUBELET_ANNOTATION}="
                "running), the node is deleted or tainted node.kubernetes.io/out-of-service "
                "(pod GC then force-deletes it), or it is force-deleted (kubectl delete pod "
                "--force --grace-period=0)", Alive.NO))
        if self.inv.find("coordination.k8s.io", "Lease", "kube-node-lease", node) is not None:
            out.append(lease_evidence(self.inv, "kube-node-lease", node))
        return out


def kubectl_name(ref: ObjRef) -> str:
    """``configmap/app`` or ``site.own.labhub.io/alpha`` plus ``-n ns``."""
    kind = ref.kind.lower() + (f".{ref.group}" if ref.group else "")
    return f"{kind}/{ref.name}" + (f" -n {ref.namespace}" if ref.namespace else "")


def remove_finalizer_command(obj: Obj, finalizer: str) -> str:
    index = finalizers_of(obj).index(finalizer)
    patch = [{"op": "test", "path": f"/metadata/finalizers/{index}", "value": finalizer},
             {"op": "remove", "path": f"/metadata/finalizers/{index}"}]
    return (f"kubectl patch {kubectl_name(ObjRef.of(obj))} --type=json "
            f"-p '{json.dumps(patch, separators=(',', ':'))}'")


def remove_owner_ref_command(obj: Obj, index: int, uid: str) -> str:
    patch = [{"op": "test", "path": f"/metadata/ownerReferences/{index}/uid", "value": uid},
             {"op": "remove", "path": f"/metadata/ownerReferences/{index}"}]
    return (f"kubectl patch {kubectl_name(ObjRef.of(obj))} --type=json "
            f"-p '{json.dumps(patch, separators=(',', ':'))}'")

