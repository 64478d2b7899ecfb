"""Random ownership graphs for checking ``kubegc plan`` against reality
(``test_plan_random.py``): the model, the seeded generator, the objects it makes."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj

GROUP = "gc.test.kubegc.io"
CLEANUP = "test.kubegc.io/cleanup"  # removed by a live controller (test_plan_random)
STUCK = "test.kubegc.io/stuck"  # removed by nobody
CM = GroupVersionResource("", "v1", "configmaps")
SECRETS = GroupVersionResource("", "v1", "secrets")
PODS = GroupVersionResource("", "v1", "pods")
OWNERS = GroupVersionResource(GROUP, "v1", "clusterowners")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")
LEASES = GroupVersionResource("coordination.k8s.io", "v1", "leases")
CRDS = GroupVersionResource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
RS = GroupVersionResource("apps", "v1", "replicasets")
GVR = {"ConfigMap": CM, "Secret": SECRETS, "Pod": PODS, "ClusterOwner": OWNERS,
       "ReplicaSet": RS}
API = {"ConfigMap": "v1", "Secret": "v1", "Pod": "v1", "ClusterOwner": f"{GROUP}/v1",
       "ReplicaSet": "apps/v1"}
POLICIES = ("Background", "Foreground", "Orphan")
#: what a graph's delete targets: one of its objects, its first namespace (the namespace
#: controller deletes the content), or its own CRD (the API server deletes the instances
#: and waits for them)
TARGETS = ("object", "namespace", "crd")


def gadget_group(seed: int) -> str:
    return f"g{seed}.test.kubegc.io"


def gvr_of(seed: int, kind: str) -> GroupVersionResource:
    """The resource of a graph's kind (its Gadgets are of its own CRD)."""
    if kind == "Gadget":
        return GroupVersionResource(gadget_group(seed), "v1", "gadgets")
    if kind == "Namespace":
        return NAMESPACES
    if kind == "CustomResourceDefinition":
        return CRDS
    return GVR[kind]


def api_of(seed: int, kind: str) -> str:
    return f"{gadget_group(seed)}/v1" if kind == "Gadget" else API[kind]


@dataclass
class Node:
    name: str
    kind: str
    namespace: str  # "" for the cluster-scoped kind
    owners: list[tuple[int, bool, bool]] = field(default_factory=list)  # (index, block, ctl)
    finalizer: str = ""
    pod: dict[str, Any] = field(default_factory=dict)  # grace, exit delay

    def describe(self, nodes: list[Node]) -> str:
        refs = ", ".join(f"{nodes[i].name}{'!' if b else ''}{'*' if c else ''}"
                         for i, b, c in self.owners)
        where = f"{self.namespace}/" if self.namespace else ""
        return (f"{self.kind} {where}{self.name}" + (f" <- [{refs}]" if refs else "")
                + (f" fin={self.finalizer}" if self.finalizer else "")
                + (f" pod={self.pod}" if self.pod else ""))


@dataclass
class Graph:
    seed: int
    nodes: list[Node]
    pre_delete: tuple[int, str] | None  # (index, policy) deleted before the plan
    target: int
    policy: str
    target_kind: str = "object"  # TARGETS
    #: instances of the graph's own CRD (namespaced, in its first namespace): (name,
    #: finalizer); the CRD is made only when there are some
    gadgets: list[tuple[str, str]] = field(default_factory=list)

    @property
    def namespaces(self) -> tuple[str, str]:
        return f"g{self.seed}-a", f"g{self.seed}-b"

    @property
    def target_name(self) -> str:
        if self.target_kind == "namespace":
            return self.namespaces[0]
        if self.target_kind == "crd":
            return f"gadgets.{gadget_group(self.seed)}"
        return self.nodes[self.target].name

    def describe(self) -> str:
        lines = [f"seed {self.seed}: delete {self.target_kind} {self.target_name} "
                 f"--cascade={self.policy.lower()}"
                 + (f" after deleting {self.nodes[self.pre_delete[0]].name} "
                    f"({self.pre_delete[1]})" if self.pre_delete else ""),
                 "  (owner! = blockOwnerDeletion, owner* = controller)"]
        lines += [f"  {i}: {n.describe(self.nodes)}" for i, n in enumerate(self.nodes)]
        lines += [f"  Gadget {self.namespaces[0]}/{name}" + (f" fin={fin}" if fin else "")
                  for name, fin in self.gadgets]
        return "\n".join(lines)


def random_graph(seed: int) -> Graph:
    rng = random.Random(seed)
    ns_a, ns_b = f"g{seed}-a", f"g{seed}-b"
    nodes: list[Node] = []
    for i in range(rng.randint(3, 8)):
        kind = rng.choices(["ConfigMap", "Secret", "Pod", "ClusterOwner", "ReplicaSet"],
                           [5, 2, 2, 1.5, 1])[0]
        namespace = "" if kind == "ClusterOwner" else rng.choices([ns_a, ns_b], [6, 1])[0]
        node = Node(f"g{seed}-{i}-{kind.lower()}", kind, namespace)
        candidates = list(range(i))
        rng.shuffle(candidates)
        controller_taken = False
        for j in candidates[:rng.choice([0, 1, 1, 1, 2, 2, 3])]:
            owner = nodes[j]
            if owner.kind == "Pod" or (not namespace and owner.namespace and rng.random() < .7):
                continue  # pods own nothing here; mostly valid cluster-scoped refs
            controller = not controller_taken and rng.random() < 0.4
            controller_taken |= controller
            node.owners.append((j, rng.random() < 0.6, controller))
        node.finalizer = rng.choices(["", CLEANUP, STUCK], [6, 2, 1])[0]
        if kind == "Pod":
            node.pod = {"grace": rng.choice([0, 1, 2]),
                        "exit": rng.choice(["0", "0", "0.3"]), "ignore_term": rng.random() < .1}
            hooks = random.Random(seed * 7919 + i)  # its own: the graphs' shapes stay
            if hooks.random() < 0.3:
                node.pod["prestop"] = hooks.choice(["0.5", "1", "1.5"])
        nodes.append(node)
    pre = None
    if rng.random() < 0.3:
        pre = (rng.randrange(len(nodes)), rng.choice(POLICIES))
    owners = sorted({j for n in nodes for j, _, _ in n.owners})
    target = rng.choice(owners) if owners and rng.random() < 0.8 else rng.randrange(len(nodes))
    target_kind = rng.choices(TARGETS, [8, 1.5, 1])[0]
    gadgets: list[tuple[str, str]] = []
    if target_kind == "crd" or rng.random() < 0.1:  # removed by nobody, or none
        gadgets = [(f"g{seed}-gadget-{i}", rng.choices(["", STUCK], [3, 1])[0])
                   for i in range(rng.randint(1, 3))]
    return Graph(seed, nodes, pre, target, rng.choice(POLICIES), target_kind, gadgets)


def gadget_crd(seed: int) -> Obj:
    group = gadget_group(seed)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"gadgets.{group}", "labels": {"plan-graph": str(seed)}},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"kind": "Gadget", "plural": "gadgets", "singular": "gadget",
                               "listKind": "GadgetList"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                         "openAPIV3Schema": {"type": "object",
                                             "x-kubernetes-preserve-unknown-fields": True}}}]}}


def gadget(graph: Graph, name: str, finalizer: str) -> Obj:
    meta: dict[str, Any] = {"name": name, "labels": {"plan-graph": str(graph.seed)}}
    if finalizer:
        meta["finalizers"] = [finalizer]
    return {"apiVersion": api_of(graph.seed, "Gadget"), "kind": "Gadget", "metadata": meta}


def body(graph: Graph, node: Node, uids: dict[int, str]) -> Obj:
    meta: dict[str, Any] = {"name": node.name, "labels": {"plan-graph": str(graph.seed)}}
    refs = []
    for j, block, controller in node.owners:
        owner = graph.nodes[j]
        ref: dict[str, Any] = {"apiVersion": API[owner.kind], "kind": owner.kind,
                               "name": owner.name, "uid": uids[j]}
        if block:
            ref["blockOwnerDeletion"] = True
        if controller:
            ref["controller"] = True
        refs.append(ref)
    if refs:
        meta["ownerReferences"] = refs
    if node.finalizer:
        meta["finalizers"] = [node.finalizer]
    obj: Obj = {"apiVersion": API[node.kind], "kind": node.kind, "metadata": meta}
    if node.kind == "ReplicaSet":  # of no pods: a typed object its updates validate whole
        labels = {"rs": node.name}
        obj["spec"] = {"replicas": 0, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c",
                                                                     "image": "fake"}]}}}
    if node.kind == "Pod":
        meta["annotations"] = {"kubegc.io/exit-delay-seconds": node.pod["exit"]}
        if node.pod["ignore_term"]:
            meta["annotations"]["kubegc.io/ignore-term"] = "true"
        container: dict[str, Any] = {"name": "c", "image": "fake"}
        if node.pod.get("prestop"):  # a preStop hook that runs that long (the kubelet's)
            meta["annotations"]["kubegc.io/prestop-seconds"] = node.pod["prestop"]
            container["lifecycle"] = {"preStop": {"exec": {"command": ["sleep", "1"]}}}
        obj["spec"] = {"nodeName": "kubegc-node-1",
                       "terminationGracePeriodSeconds": node.pod["grace"],
                       "containers": [container]}
    return obj


def crd() -> Obj:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"clusterowners.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Cluster",
                     "names": {"kind": "ClusterOwner", "plural": "clusterowners",
                               "singular": "clusterowner", "listKind": "ClusterOwnerList"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                         "openAPIV3Schema": {"type": "object",
                                             "x-kubernetes-preserve-unknown-fields": True}}}]}}
