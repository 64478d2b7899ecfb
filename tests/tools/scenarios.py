"""Generated scenarios for checking ``kubegc plan`` against reality (``test_plan_random.py``):
the model, the hypothesis strategy that draws it (``scenarios``), the objects it makes.

A scenario is drawn without a name: the test gives each run its own ``ident`` (its objects
are ``g<ident>-...`` in namespaces ``g<ident>-a`` and ``g<ident>-b``, labelled
``plan-graph=<ident>``), so one cluster runs many scenarios, and a replayed example (the
same draws) makes the same shapes under other names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

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
DEPLOYMENTS = GroupVersionResource("apps", "v1", "deployments")
JOBS = GroupVersionResource("batch", "v1", "jobs")
CRONJOBS = GroupVersionResource("batch", "v1", "cronjobs")
SERVICES = GroupVersionResource("", "v1", "services")
ENDPOINTS = GroupVersionResource("", "v1", "endpoints")
SERVICE_ACCOUNTS = GroupVersionResource("", "v1", "serviceaccounts")
PVCS = GroupVersionResource("", "v1", "persistentvolumeclaims")
STATEFULSETS = GroupVersionResource("apps", "v1", "statefulsets")
DAEMONSETS = GroupVersionResource("apps", "v1", "daemonsets")
REVISIONS = GroupVersionResource("apps", "v1", "controllerrevisions")
NODES = GroupVersionResource("", "v1", "nodes")
WEBHOOKS = GroupVersionResource("admissionregistration.k8s.io", "v1",
                                "validatingwebhookconfigurations")
GVR = {"ConfigMap": CM, "Secret": SECRETS, "Pod": PODS, "ClusterOwner": OWNERS,
       "ReplicaSet": RS, "Deployment": DEPLOYMENTS, "Job": JOBS, "CronJob": CRONJOBS,
       "Service": SERVICES,
       "Endpoints": ENDPOINTS, "ServiceAccount": SERVICE_ACCOUNTS,
       "PersistentVolumeClaim": PVCS, "StatefulSet": STATEFULSETS, "DaemonSet": DAEMONSETS,
       "ControllerRevision": REVISIONS, "ValidatingWebhookConfiguration": WEBHOOKS,
       "Node": NODES}
API = {"ConfigMap": "v1", "Secret": "v1", "Pod": "v1", "ClusterOwner": f"{GROUP}/v1",
       "ReplicaSet": "apps/v1", "Deployment": "apps/v1", "Job": "batch/v1",
       "CronJob": "batch/v1",
       "Service": "v1", "Endpoints": "v1", "ServiceAccount": "v1",
       "PersistentVolumeClaim": "v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1",
       "ControllerRevision": "apps/v1",
       "ValidatingWebhookConfiguration": "admissionregistration.k8s.io/v1", "Node": "v1"}
CLUSTER_SCOPED = frozenset({"ClusterOwner"})
#: kinds that own nothing in a scenario
OWN_NOTHING = frozenset({"Pod"})
#: kinds whose controllers make pods (through a ReplicaSet for a Deployment)
WORKLOADS = frozenset({"ReplicaSet", "Deployment", "Job", "StatefulSet", "DaemonSet"})
POLICIES = ("Background", "Foreground", "Orphan")
#: what a scenario's delete targets: one of its objects, its first namespace (the namespace
#: controller deletes the content), its own CRD (the API server deletes the instances and
#: waits for them) or its own Node (no kubelet runs it; pod GC deletes its pods once it is
#: gone)
TARGETS = ("object", "namespace", "crd", "node")
NODE = "kubegc-node-1"  # the simulated kubelet's node
#: the in-process admission webhooks a scenario's configuration may name (``plan_reality``
#: registers them): one refuses every DELETE it is asked about (a scenario guards only its
#: target with it), one allows it
GUARDS = ("deny", "allow")


def gadget_group(ident: int) -> str:
    return f"g{ident}.test.kubegc.io"


def gvr_of(ident: int, kind: str) -> GroupVersionResource:
    """The resource of a scenario's kind (its Gadgets are of its own CRD)."""
    if kind == "Gadget":
        return GroupVersionResource(gadget_group(ident), "v1", "gadgets")
    if kind == "Namespace":
        return NAMESPACES
    if kind == "CustomResourceDefinition":
        return CRDS
    return GVR[kind]


def api_of(ident: int, kind: str) -> str:
    return f"{gadget_group(ident)}/v1" if kind == "Gadget" else API[kind]


@dataclass
class Node:
    """One object of a scenario; ``name`` is local (the scenario prefixes it)."""

    name: str
    kind: str
    namespace: int  # 0 or 1: the scenario's first or second namespace; -1 cluster-scoped
    owners: list[tuple[int, bool, bool]] = field(default_factory=list)  # (index, block, ctl)
    finalizer: str = ""
    pod: dict[str, Any] = field(default_factory=dict)  # grace, exit delay, preStop
    replicas: int = 0  # a ReplicaSet's or Deployment's
    job: dict[str, Any] = field(default_factory=dict)  # run seconds, ttlSecondsAfterFinished
    claim: int = -1  # a Pod's volume: the PersistentVolumeClaim node it names
    selects: int = -1  # a Service's selector: the workload node whose pods it selects
    guarded: bool = False  # the scenario's admission webhook is asked about its DELETE
    own_node: bool = False  # a Pod bound to the scenario's Node (which no kubelet runs)
    history: tuple[int, int] = (3, 1)  # a CronJob's successful and failed Jobs kept

    def describe(self, graph: Graph) -> str:
        refs = ", ".join(f"{graph.nodes[i].name}{'!' if b else ''}{'*' if c else ''}"
                         for i, b, c in self.owners)
        ns = graph.namespace_of(self)
        where = f"{ns}/" if ns else ""
        return (f"{self.kind} {where}{graph.name(self)}" + (f" <- [{refs}]" if refs else "")
                + (f" fin={self.finalizer}" if self.finalizer else "")
                + (f" pod={self.pod}" if self.pod else "")
                + (f" replicas={self.replicas}" if self.replicas else "")
                + (f" job={self.job}" if self.job else "")
                + (f" history={self.history}" if self.kind == "CronJob" else "")
                + (f" claim={graph.nodes[self.claim].name}" if self.claim >= 0 else "")
                + (f" selects={graph.nodes[self.selects].name}" if self.selects >= 0 else "")
                + (" guarded" if self.guarded else "")
                + (" on the scenario's node" if self.own_node else ""))


@dataclass
class Graph:
    nodes: list[Node]
    pre_delete: tuple[int, str] | None  # (index, policy) deleted before the plan
    target: int
    policy: str
    target_kind: str = "object"  # TARGETS
    #: instances of the scenario's own CRD (namespaced, in its first namespace): (name,
    #: finalizer); the CRD is made only when there are some
    gadgets: list[tuple[str, str]] = field(default_factory=list)
    ident: int = 0  # given by the test that runs it
    #: the target is not the target node itself but one of the pods its controller made
    #: (a workload's: the first by name)
    target_pod: bool = False
    #: a ValidatingWebhookConfiguration taking DELETEs of the guarded ConfigMaps and
    #: Secrets: "" none, else the webhook of ``GUARDS`` it names
    webhook: str = ""

    @property
    def label(self) -> str:
        return str(self.ident)

    @property
    def namespaces(self) -> tuple[str, str]:
        return f"g{self.ident}-a", f"g{self.ident}-b"

    def name(self, node: Node) -> str:
        return f"g{self.ident}-{node.name}"

    def namespace_of(self, node: Node) -> str:
        return "" if node.namespace < 0 else self.namespaces[node.namespace]

    @property
    def target_name(self) -> str:
        if self.target_kind == "namespace":
            return self.namespaces[0]
        if self.target_kind == "crd":
            return f"gadgets.{gadget_group(self.ident)}"
        if self.target_kind == "node":
            return self.node_name
        return self.name(self.nodes[self.target])

    @property
    def node_name(self) -> str:
        return f"g{self.ident}-node"

    def workload_label(self, node: Node) -> dict[str, str]:
        return {"plan-graph": self.label, "app": self.name(node)}

    def describe(self) -> str:
        pre = (f" after deleting {self.name(self.nodes[self.pre_delete[0]])} "
               f"({self.pre_delete[1]})" if self.pre_delete else "")
        what = f"a pod of {self.target_name}" if self.target_pod else self.target_name
        lines = [f"scenario {self.ident}: delete {self.target_kind} {what} "
                 f"--cascade={self.policy.lower()}{pre}",
                 "  (owner! = blockOwnerDeletion, owner* = controller)"
                 + (f"; a webhook that will {self.webhook} DELETEs of the guarded"
                    if self.webhook else "")]
        lines += [f"  {i}: {n.describe(self)}" for i, n in enumerate(self.nodes)]
        lines += [f"  Gadget {self.namespaces[0]}/g{self.ident}-{name}"
                  + (f" fin={fin}" if fin else "") for name, fin in self.gadgets]
        return "\n".join(lines)


# -- the strategy ------------------------------------------------------------------------------
# Weights are repetitions in sampled_from (hypothesis shrinks towards the first element).

KINDS = (["ConfigMap"] * 3 + ["Secret", "Pod", "Pod", "ClusterOwner", "ReplicaSet",
                                "ReplicaSet", "Deployment", "Job", "Service", "ServiceAccount",
                                "PersistentVolumeClaim", "PersistentVolumeClaim",
                                "StatefulSet", "DaemonSet", "CronJob"])
FINALIZERS = [""] * 6 + [CLEANUP] * 2 + [STUCK]


def _named_from(nodes: list[Node], j: int) -> set[int]:
    """The namespaces (-1: cluster-scoped) of the objects that name ``nodes[j]`` an owner."""
    return {n.namespace for n in nodes if any(k == j for k, _, _ in n.owners)}


def _owners(draw: st.DrawFn, nodes: list[Node], namespace: int) -> list[
        tuple[int, bool, bool]]:
    """A node's owners. A namespaced owner is never named from two namespaces (or from its
    namespace and by a cluster-scoped object): once it is collected, the garbage collector
    verifies it again and again under each identity for as long as such dependents exist
    (upstream ``processGraphChanges``, ``getAlternateOwnerIdentity``), so neither kubegc nor
    the plan's simulation ever settles (the plan takes minutes)."""
    candidates = draw(st.permutations(range(len(nodes))))
    count = draw(st.sampled_from([0, 1, 1, 1, 2, 2, 3]))
    out: list[tuple[int, bool, bool]] = []
    controller_taken = False
    for j in candidates[:count]:
        owner = nodes[j]
        if owner.kind in OWN_NOTHING or (namespace < 0 and owner.namespace >= 0 and draw(
                st.integers(0, 9)) < 7):
            continue  # mostly valid cluster-scoped references
        if owner.namespace >= 0 and _named_from(nodes, j) - {namespace}:
            continue
        controller = not controller_taken and draw(st.integers(0, 9)) < 4
        controller_taken |= controller
        out.append((j, draw(st.integers(0, 9)) < 6, controller))
    return out


def _pod(draw: st.DrawFn) -> dict[str, Any]:
    pod: dict[str, Any] = {"grace": draw(st.sampled_from([0, 1, 2])),
                           "exit": draw(st.sampled_from(["0", "0", "0.3"])),
                           "ignore_term": draw(st.integers(0, 9)) == 0}
    prestop = draw(st.sampled_from(["", "", "", "", "", "", "0.5", "1", "1.5"]))
    if prestop:
        pod["prestop"] = prestop
    return pod


def _job(draw: st.DrawFn) -> dict[str, Any]:
    """Finished at once or running; deleted some seconds after it finished (or never)."""
    return {"run": draw(st.sampled_from(["0.2", "0.2", "600"])),
            "ttl": draw(st.sampled_from([None, None, 0, 3]))}


def _jobs_of(draw: st.DrawFn, nodes: list[Node], cronjob: int) -> list[Node]:
    """0-3 Jobs a CronJob made (it is their controller): the CronJob controller deletes
    the finished ones beyond its history limits."""
    namespace = nodes[cronjob].namespace
    return [Node(f"{len(nodes) + k}-job", "Job", namespace, owners=[(cronjob, True, True)],
                 finalizer=draw(st.sampled_from(FINALIZERS)), job=_job(draw))
            for k in range(draw(st.sampled_from([0, 1, 2, 3])))]


def _node(draw: st.DrawFn, i: int, nodes: list[Node]) -> Node:
    kind = draw(st.sampled_from(KINDS))
    namespace = -1 if kind in CLUSTER_SCOPED else draw(st.sampled_from([0] * 6 + [1]))
    node = Node(f"{i}-{kind.lower()}", kind, namespace)
    node.owners = _owners(draw, nodes, namespace)
    node.finalizer = draw(st.sampled_from(FINALIZERS))
    if kind == "Pod":
        node.pod = _pod(draw)
        claims = [j for j, n in enumerate(nodes)
                  if n.kind == "PersistentVolumeClaim" and n.namespace == namespace]
        if claims and draw(st.integers(0, 9)) < 6:
            node.claim = draw(st.sampled_from(claims))
    if kind in ("ReplicaSet", "Deployment", "StatefulSet"):
        node.replicas = draw(st.sampled_from([0, 1, 1, 2]))
    if kind == "Job":
        node.job = _job(draw)
    if kind == "CronJob":  # its history limits: the finished Jobs it owns that it keeps
        node.history = (draw(st.sampled_from([0, 1, 3])), draw(st.sampled_from([0, 1])))
    if kind in ("Secret", "ConfigMap"):
        node.guarded = draw(st.integers(0, 9)) < 2
    if kind == "Service":
        workloads = [j for j, n in enumerate(nodes)
                     if n.kind in WORKLOADS and n.namespace == namespace]
        node.selects = draw(st.sampled_from(workloads)) if workloads else -1
    return node


@st.composite
def scenarios(draw: st.DrawFn) -> Graph:
    """A scenario: 3-8 objects of mixed kinds, 0-3 owners each (mixed blockOwnerDeletion
    and controller, some invalid: a namespaced owner of a cluster-scoped object, an owner
    in the other namespace), finalizers, pods with grace periods, slow exits and preStop
    hooks, sometimes an earlier delete, sometimes a CRD of its own with instances; the
    target (mostly an owner) and the policy."""
    nodes: list[Node] = []
    for _ in range(draw(st.integers(3, 8))):
        nodes.append(_node(draw, len(nodes), nodes))
        if nodes[-1].kind == "CronJob":
            nodes += _jobs_of(draw, nodes, len(nodes) - 1)
    pre = None
    if draw(st.integers(0, 9)) < 3:
        pre = (draw(st.integers(0, len(nodes) - 1)), draw(st.sampled_from(POLICIES)))
    owners = sorted({j for n in nodes for j, _, _ in n.owners})
    if owners and draw(st.integers(0, 9)) < 8:
        target = draw(st.sampled_from(owners))
    else:
        target = draw(st.integers(0, len(nodes) - 1))
    target_kind = draw(st.sampled_from(["object"] * 16 + ["namespace"] * 3 + ["crd"] * 2
                                       + ["node"] * 2))
    if target_kind == "node":  # pods without owners (a graceful delete would never end)
        pre = None
        for node in nodes:
            node.own_node = node.kind == "Pod" and not node.owners and draw(st.booleans())
    gadgets: list[tuple[str, str]] = []
    if target_kind == "crd" or draw(st.integers(0, 9)) == 0:
        gadgets = [(f"gadget-{i}", draw(st.sampled_from(["", "", "", STUCK])))
                   for i in range(draw(st.integers(1, 3)))]
    graph = Graph(nodes, pre, target, draw(st.sampled_from(POLICIES)), target_kind, gadgets)
    if any(n.guarded for n in nodes):
        # "deny" where the garbage collector's DELETEs of guarded objects are refused: it
        # retries them for ever (plan_reality.quiet then waits until that is all kubegc
        # does); not where the namespace controller's would be (a namespace target)
        graph.webhook = draw(st.sampled_from(
            ["", "", "allow"] + (["deny"] if target_kind == "object" else [])))
    chosen = nodes[target]
    if (target_kind == "object" and chosen.kind in ("ConfigMap", "Secret") and pre is None
            and not chosen.owners and draw(st.integers(0, 9)) < 3):
        # the user's DELETE refused (only the target guarded)
        for node in nodes:
            node.guarded = node is chosen
        graph.webhook = "deny"
    if target_kind == "object" and nodes[target].kind in WORKLOADS and (
            nodes[target].replicas or nodes[target].job or nodes[target].kind == "DaemonSet"):
        graph.target_pod = draw(st.booleans())
    return graph


# -- the objects -------------------------------------------------------------------------------


def gadget_crd(ident: int) -> Obj:
    group = gadget_group(ident)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"gadgets.{group}", "labels": {"plan-graph": str(ident)}},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"kind": "Gadget", "plural": "gadgets", "singular": "gadget",
                               "listKind": "GadgetList"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                         "openAPIV3Schema": {"type": "object",
                                             "x-kubernetes-preserve-unknown-fields": True}}}]}}


def gadget(graph: Graph, name: str, finalizer: str) -> Obj:
    meta: dict[str, Any] = {"name": f"g{graph.ident}-{name}", "labels": {
        "plan-graph": graph.label}}
    if finalizer:
        meta["finalizers"] = [finalizer]
    return {"apiVersion": api_of(graph.ident, "Gadget"), "kind": "Gadget", "metadata": meta}


def _refs(graph: Graph, node: Node, uids: dict[int, str]) -> list[dict[str, Any]]:
    refs = []
    for j, block, controller in node.owners:
        owner = graph.nodes[j]
        ref: dict[str, Any] = {"apiVersion": API[owner.kind], "kind": owner.kind,
                               "name": graph.name(owner), "uid": uids[j]}
        if block:
            ref["blockOwnerDeletion"] = True
        if controller:
            ref["controller"] = True
        refs.append(ref)
    return refs


def own_node(graph: Graph) -> Obj:
    """The scenario's Node: no kubelet runs it (its pods never start)."""
    return {"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": graph.node_name, "labels": {"plan-graph": graph.label}}}


def _pod_spec(graph: Graph, node: Node, meta: dict[str, Any]) -> dict[str, Any]:
    meta["annotations"] = {"kubegc.io/exit-delay-seconds": node.pod["exit"]}
    if node.pod["ignore_term"]:
        meta["annotations"]["kubegc.io/ignore-term"] = "true"
    container: dict[str, Any] = {"name": "c", "image": "fake"}
    if node.pod.get("prestop"):  # a preStop hook that runs that long (the kubelet's)
        meta["annotations"]["kubegc.io/prestop-seconds"] = node.pod["prestop"]
        container["lifecycle"] = {"preStop": {"exec": {"command": ["sleep", "1"]}}}
    spec: dict[str, Any] = {"nodeName": graph.node_name if node.own_node else NODE,
                            "terminationGracePeriodSeconds": node.pod["grace"],
                            "containers": [container]}
    if node.claim >= 0:
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {
            "claimName": graph.name(graph.nodes[node.claim])}}]
    return spec


def _template(graph: Graph, node: Node, **annotations: str) -> dict[str, Any]:
    """A workload's pods: on the simulated node, quick to stop."""
    restart = "Never" if node.kind in ("Job", "CronJob") else "Always"
    return {"metadata": {"labels": graph.workload_label(node), "annotations": {
                "kubegc.io/exit-delay-seconds": "0", **annotations}},
            "spec": {"nodeName": NODE, "terminationGracePeriodSeconds": 1,
                     "restartPolicy": restart, "containers": [{"name": "c", "image": "fake"}]}}


def _spec(graph: Graph, node: Node) -> dict[str, Any] | None:
    """The spec of a kind that has one (typed objects: their updates are validated whole)."""
    spec: dict[str, Any]
    if node.kind in ("ReplicaSet", "Deployment", "StatefulSet", "DaemonSet"):
        spec = {"selector": {"matchLabels": {"app": graph.name(node)}},
                "template": _template(graph, node)}
        if node.kind != "DaemonSet":  # one pod on the one simulated node
            spec["replicas"] = node.replicas
        if node.kind == "StatefulSet":
            spec["serviceName"] = graph.name(node)
        return spec
    if node.kind == "Job":
        spec = {"backoffLimit": 0, "template": _template(
            graph, node, **{"kubegc.io/run-seconds": node.job["run"]})}
        if node.job["ttl"] is not None:
            spec["ttlSecondsAfterFinished"] = node.job["ttl"]
        return spec
    if node.kind == "CronJob":  # never due while a scenario runs (1 January, midnight)
        return {"schedule": "0 0 1 1 *", "successfulJobsHistoryLimit": node.history[0],
                "failedJobsHistoryLimit": node.history[1], "jobTemplate": {"spec": {
                    "template": _template(graph, node)}}}
    if node.kind == "Service":
        selected = graph.nodes[node.selects] if node.selects >= 0 else node
        return {"selector": {"app": graph.name(selected)}, "ports": [{"port": 80}]}
    if node.kind == "PersistentVolumeClaim":  # no storage class: stays Pending
        return {"accessModes": ["ReadWriteOnce"], "storageClassName": "",
                "resources": {"requests": {"storage": "1Gi"}}}
    return None


def body(graph: Graph, node: Node, uids: dict[int, str]) -> Obj:
    meta: dict[str, Any] = {"name": graph.name(node), "labels": {"plan-graph": graph.label}}
    if node.guarded:
        meta["labels"]["guarded"] = "yes"
    refs = _refs(graph, node, uids)
    if refs:
        meta["ownerReferences"] = refs
    if node.finalizer:
        meta["finalizers"] = [node.finalizer]
    obj: Obj = {"apiVersion": API[node.kind], "kind": node.kind, "metadata": meta}
    spec = _pod_spec(graph, node, meta) if node.kind == "Pod" else _spec(graph, node)
    if spec is not None:
        obj["spec"] = spec
    return obj


def webhook_configuration(graph: Graph, url: str) -> Obj:
    """The scenario's ValidatingWebhookConfiguration: DELETEs of its guarded objects go to
    the webhook at ``url`` (failurePolicy Fail)."""
    return {"apiVersion": API["ValidatingWebhookConfiguration"],
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": f"g{graph.ident}-guard", "labels": {"plan-graph": graph.label}},
            "webhooks": [{"name": "guard.test.kubegc.io", "clientConfig": {"url": url},
                          "rules": [{"operations": ["DELETE"], "apiGroups": [""],
                                     "apiVersions": ["v1"],
                                     "resources": ["configmaps", "secrets"]}],
                          "objectSelector": {"matchLabels": {"plan-graph": graph.label,
                                                             "guarded": "yes"}},
                          "failurePolicy": "Fail", "sideEffects": "None",
                          "admissionReviewVersions": ["v1"]}]}


def token_secret(graph: Graph, node: Node, uid: str) -> Obj:
    """A ServiceAccount's token Secret (the token controller deletes it with its account)."""
    name = graph.name(node)
    return {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
            "metadata": {"name": f"{name}-token", "labels": {"plan-graph": graph.label},
                         "annotations": {"kubernetes.io/service-account.name": name,
                                         "kubernetes.io/service-account.uid": uid}}}


def crd() -> Obj:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"clusterowners.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Cluster",
                     "names": {"kind": "ClusterOwner", "plural": "clusterowners",
                               "singular": "clusterowner", "listKind": "ClusterOwnerList"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                         "openAPIV3Schema": {"type": "object",
                                             "x-kubernetes-preserve-unknown-fields": True}}}]}}
