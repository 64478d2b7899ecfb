"""The DaemonSet's pods and nodes (cf. pkg/controller/daemon/util/daemonset_util.go
``AddOrUpdateDaemonPodTolerations``, ``ReplaceDaemonSetPodNodeNameNodeAffinity``, and
daemon_controller.go ``NodeShouldRunDaemonPod``): the template a node's pod is made from,
and whether a node should run the set.

May import: ``kubegc.api`` and the shared ``kubegc.controllers`` modules.
"""

from __future__ import annotations

import copy
from typing import Any

from kubegc.api.labels import selector_from_set
from kubegc.api.meta import is_being_deleted
from kubegc.api.types import Obj
from kubegc.controllers.controller_ref_manager import labels_of

DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)


def _tolerates(tolerations: list[dict[str, Any]], taint: dict[str, Any]) -> bool:
    for t in tolerations:
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        if t.get("key") and t.get("key") != taint.get("key"):
            continue
        if not t.get("key") and t.get("operator") != "Exists":
            continue
        if t.get("operator") == "Exists" or (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def daemon_pod_template(ds: Obj, node_name: str, hash_: str) -> Obj:
    """The template of ``ds`` bound to ``node_name`` (labels, tolerations, affinity)."""
    template = copy.deepcopy((ds.get("spec") or {}).get("template") or {})
    meta = template.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), "controller-revision-hash": hash_,
                      "pod-template-generation": str((ds.get("metadata") or {}).get(
                          "generation") or 1)}
    spec = template.setdefault("spec", {})
    tolerations = list(spec.get("tolerations") or [])
    for key, effect in DAEMON_TOLERATIONS:
        if not any(t.get("key") == key and t.get("effect") == effect for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": effect})
    spec["tolerations"] = tolerations
    spec["affinity"] = {**(spec.get("affinity") or {}), "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
            "matchFields": [{"key": "metadata.name", "operator": "In",
                             "values": [node_name]}]}]}}}
    spec["nodeName"] = node_name
    return template


def node_should_run(node: Obj, ds: Obj) -> bool:
    if is_being_deleted(node):
        return False
    pod_spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
    if not selector_from_set(pod_spec.get("nodeSelector")).matches(labels_of(node)):
        return False
    tolerations = [*(pod_spec.get("tolerations") or []),
                   *({"key": k, "operator": "Exists", "effect": e} for k, e in DAEMON_TOLERATIONS)]
    return all(_tolerates(tolerations, taint)
               for taint in (node.get("spec") or {}).get("taints") or []
               if taint.get("effect") in ("NoSchedule", "NoExecute"))


def pod_node(pod: Obj) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")
