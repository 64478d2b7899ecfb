"""Turn an inventory's objects into what the simulation loads.

* Events and kubegc's DeletionRecords are left out (the simulation writes its own).
* A kind kubegc does not serve (outside the core group) gets a synthesized
  CustomResourceDefinition (scope and
  plural from the source's discovery, schema preserving unknown fields), so custom
  resources whose CRD is not in the snapshot — and built-ins kubegc lacks, such as
  EndpointSlices or ControllerRevisions — still take part in garbage collection.
* Pods bound to nodes are moved to the simulation's nodes (``node_names``), one source
  node to one simulated node, so that the kubelet simulator terminates them — except the
  pods of the node being deleted (``deleted_node``): they stay bound to it, with no
  kubelet, as on a cluster whose node is gone.
* What takes no part in a deletion is left out (``slim``): managedFields, kubectl's
  last-applied annotation, the data of ConfigMaps and Secrets. At 100,000 objects they
  would be most of the simulation's memory. (Specs stay: the garbage collector's updates
  of an object are validated whole.)
Every change that shows in the result is described in the returned notes.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from kubegc.api.resources import BUILTIN_RESOURCES, split_api_version
from kubegc.api.types import Obj
from kubegc.client.interface import APIResource
from kubegc.tools.model import group_of

_LEFT_OUT = {("", "Event"), ("events.k8s.io", "Event"), ("kubegc.io", "DeletionRecord")}
_SERVED = {(r.group, r.kind) for r in BUILTIN_RESOURCES}
SYNTHESIZED_LABEL = "kubegc.io/synthesized-for-plan"


@dataclass
class PreparedSnapshot:
    objects: list[Obj]
    nodes: int
    node_map: dict[str, str] = field(default_factory=dict)  # source node -> simulated node
    notes: list[str] = field(default_factory=list)


def prepare_snapshot(objects: list[Obj], resources: list[APIResource],
                     node_names: Callable[[int], list[str]], *, namespace: str = "",
                     deleted_node: str = "") -> PreparedSnapshot:
    """``namespace``: the only namespace whose content was read ("" = all); the other
    Namespace objects are left out, or the namespace controller would act on namespaces
    that look empty only because their content was not read."""
    kept = [o for o in objects if (group_of(o), str(o.get("kind"))) not in _LEFT_OUT
            and not (namespace and _is_namespace(o) and o["metadata"].get("name") != namespace)]
    crds = {(str((c.get("spec") or {}).get("group")), str(
        ((c.get("spec") or {}).get("names") or {}).get("kind")))
        for c in kept if c.get("kind") == "CustomResourceDefinition"}
    notes: list[str] = []
    synthesized: dict[tuple[str, str], Obj] = {}
    for obj in kept:
        key = (group_of(obj), str(obj.get("kind")))
        if key in _SERVED or key in crds or key in synthesized or not key[0]:
            if key in synthesized:
                _add_version(synthesized[key], split_api_version(str(obj["apiVersion"]))[1])
            continue
        synthesized[key] = _crd_for(obj, objects, resources)
    if synthesized:
        kinds = ", ".join(sorted(f"{k}.{g}" if g else k for g, k in synthesized))
        notes.append(f"simulated as custom resources (no CRD in the snapshot): {kinds}")
    pods = [o for o in kept if o.get("kind") == "Pod" and group_of(o) == ""
            and (o.get("spec") or {}).get("nodeName") not in ("", None, deleted_node)]
    sources = sorted({str(p["spec"]["nodeName"]) for p in pods}
                     | {str(o["metadata"].get("name")) for o in kept
                        if _is_node(o) and o["metadata"].get("name") != deleted_node})
    node_map = simulated_nodes(sources, node_names, deleted_node)
    out = [*synthesized.values()]
    pod_ids = {id(p) for p in pods}
    for obj in kept:
        if id(obj) in pod_ids and node_map[str(obj["spec"]["nodeName"])] != obj["spec"]["nodeName"]:
            obj = copy.deepcopy(obj)
            obj["spec"]["nodeName"] = node_map[str(obj["spec"]["nodeName"])]
        elif _is_node(obj) and obj["metadata"].get("name") in node_map:
            obj = _simulated_node(obj, node_map[str(obj["metadata"]["name"])])
        out.append(slim(obj))
    present = {o["metadata"].get("name") for o in out if _is_namespace(o)}
    # the simulation needs these: events about cluster-scoped objects go to "default",
    # node leases to "kube-node-lease", the controller manager's Lease to "kube-system"
    for name in ("default", "kube-node-lease", "kube-system"):
        if name not in present:
            out.append({"apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": name, "uid": str(uuid.uuid4()),
                                     "labels": {SYNTHESIZED_LABEL: "true"}},
                        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
    if deleted_node and any((o.get("spec") or {}).get("nodeName") == deleted_node
                            for o in kept if o.get("kind") == "Pod"):
        notes.append(f"pods bound to {deleted_node} stay bound to it with no kubelet running "
                     "them, as when a node is gone")
    if node_map:
        notes.append(f"pods on {len(node_map)} node(s) run on simulated nodes, which stop "
                     "their containers as soon as they get TERM (no preStop hooks)")
    return PreparedSnapshot(out, _count(node_map, node_names), node_map, notes)


def simulated_nodes(sources: list[str], node_names: Callable[[int], list[str]],
                    deleted_node: str = "") -> dict[str, str]:
    """Source node -> simulated node: a source node named as a simulated one keeps its name
    (a kubegc's own nodes are simulated as themselves), the others take the free names in
    order; never the name of the deleted node, which stays as it is with no kubelet."""
    pool = [n for n in node_names(len(sources) + 1) if n != deleted_node][:len(sources)]
    same = [s for s in sources if s in pool]
    free = iter(n for n in pool if n not in same)
    return {s: (s if s in same else next(free)) for s in sources}


def _count(node_map: dict[str, str], node_names: Callable[[int], list[str]]) -> int:
    """How many simulated nodes run: enough for the highest name used."""
    used = set(node_map.values())
    count = len(used)
    while used and not used <= set(node_names(count)):
        count += 1
    return count


def _simulated_node(node: Obj, name: str) -> Obj:
    """A source Node as the simulation runs it, under its simulated name; one that is not
    Ready in the source has its simulated kubelet stopped (no heartbeat, as there)."""
    out = copy.deepcopy(node)
    out["metadata"]["name"] = name
    ready = next((c for c in (node.get("status") or {}).get("conditions") or []
                  if isinstance(c, dict) and c.get("type") == "Ready"), None)
    if ready is not None and ready.get("status") != "True":
        out["metadata"].setdefault("annotations", {})["kubegc.io/kubelet"] = "stopped"
    return out


def _is_node(obj: Obj) -> bool:
    return obj.get("kind") == "Node" and obj.get("apiVersion") == "v1"


#: What the simulation does without: kinds' fields, and annotations.
_PAYLOAD = {("", "ConfigMap"): ("data", "binaryData"),
            ("", "Secret"): ("data", "stringData")}
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def slim(obj: Obj) -> Obj:
    """``obj`` as the simulation needs it (see the module docstring); shares what it keeps."""
    meta = obj.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    if "managedFields" in meta or _LAST_APPLIED in annotations:
        meta = {k: v for k, v in meta.items() if k != "managedFields"}
        if _LAST_APPLIED in annotations:
            meta["annotations"] = {k: v for k, v in annotations.items() if k != _LAST_APPLIED}
    dropped = _PAYLOAD.get((group_of(obj), str(obj.get("kind"))), ())
    return {k: (meta if k == "metadata" else v) for k, v in obj.items() if k not in dropped}


def _is_namespace(obj: Obj) -> bool:
    return obj.get("kind") == "Namespace" and obj.get("apiVersion") == "v1"


def _crd_for(obj: Obj, objects: list[Obj], resources: list[APIResource]) -> Obj:
    from kubegc.client.dump import guess_plural

    group, version = split_api_version(str(obj["apiVersion"]))
    kind = str(obj["kind"])
    source = next((r for r in resources if r.group == group and r.kind == kind), None)
    plural = source.resource if source is not None else guess_plural(kind)
    namespaced = source.namespaced if source is not None else any(
        (o.get("metadata") or {}).get("namespace") for o in objects
        if o.get("kind") == kind and group_of(o) == group)
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}", "uid": str(uuid.uuid4()),
                     "labels": {SYNTHESIZED_LABEL: "true"}},
        "spec": {"group": group, "scope": "Namespaced" if namespaced else "Cluster",
                 "names": {"kind": kind, "plural": plural, "singular": kind.lower(),
                           "listKind": f"{kind}List"},
                 "versions": [_version(version, storage=True)]},
    }


def _version(name: str, *, storage: bool) -> Obj:
    return {"name": name, "served": True, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object",
                                           "x-kubernetes-preserve-unknown-fields": True}}}


def _add_version(crd: Obj, version: str) -> None:
    versions = crd["spec"]["versions"]
    if all(v["name"] != version for v in versions):
        versions.append(_version(version, storage=False))
