"""What a delete can touch: the objects the planner loads into its simulation.

The planner reads the whole cluster, whatever ``-n`` says (it only resolves the target),
and simulates the part of it that the delete can reach or that decides what the garbage
collector does there (``cascade_scope``): starting from the target, every owner and every
dependent, in any namespace and cluster-scoped, followed both ways — a dependent's other
owners decide whether it stays (solid) or goes (dangling, waiting), an owner deleting its
dependents in the foreground waits for all of them, wherever they are, as the garbage
collector's graph counts them by uid (upstream ``addDependentToOwners``, even across
namespaces). A reference is followed by uid and, when the uid names nothing or another
object, by name too (the garbage collector looks its owners up by name, so a namesake
decides "absent" against "uid mismatch"). A Namespace brings its content in only when it
is the target or already Terminating (then its namespace controller deletes that content
anyway, so all of it is in play); likewise a CustomResourceDefinition that is the target or
being deleted brings its instances (upstream's CRD finalizer deletes them and waits). A
Node brings the pods bound to it (pod GC deletes them once it is gone).
A PersistentVolumeClaim brings the pods of its namespace whose volumes name it, and a pod
the claims it names: the pvc-protection controller releases a claim being deleted only once
no pod uses it (``kubegc.tools.volumes``). A ServiceCIDR brings every ServiceCIDR and the
allocator's IPAddresses in its range (the service-cidr controller holds it while they need
it). Every CRD is loaded (instances need it to be
served), every APIService with a ``spec.service`` (an unavailable one fails discovery,
which holds every namespace being deleted), a Service's Endpoints and a ServiceAccount's
token Secrets (their controllers delete them with it), and the Namespace of each object
kept.

Objects outside the scope have no ownership path to the delete: nothing the simulated
controllers do to them can depend on it, so leaving them out changes no step of the plan —
it only keeps a plan of three objects in a cluster of 100,000 small.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from kubegc.api.disruption import selects
from kubegc.api.meta import is_being_deleted, owner_references_of, uid_of
from kubegc.api.resources import split_api_version
from kubegc.api.types import Obj
from kubegc.api.volumes import claim_names
from kubegc.controllers.serviceaccount.tokens_controller import is_service_account_token
from kubegc.controllers.servicecidrs import allocated_address, contains_address
from kubegc.tools.inventory import Inventory
from kubegc.tools.model import group_of
from kubegc.tools.ownership import OwnerGraph

NETWORKING = "networking.k8s.io"


def _is(obj: Obj, group: str, kind: str) -> bool:
    return obj.get("kind") == kind and group_of(obj) == group


def _namespace(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


class _Scope:
    def __init__(self, inv: Inventory, graph: OwnerGraph) -> None:
        self.inv = inv
        self.graph = graph
        self.by_namespace: dict[str, list[Obj]] | None = None
        self.kept: dict[int, Obj] = {}
        self.todo: deque[Obj] = deque()
        self.target = 0  # id() of the target

    def add(self, obj: Obj | None) -> None:
        if obj is not None and id(obj) not in self.kept:
            self.kept[id(obj)] = obj
            self.todo.append(obj)

    def expand_all(self) -> None:
        while self.todo:
            self.expand(self.todo.popleft())

    def content(self, namespace: str) -> list[Obj]:
        if self.by_namespace is None:
            self.by_namespace = {}
            for obj in self.inv.objects:
                self.by_namespace.setdefault(_namespace(obj), []).append(obj)
        return self.by_namespace.get(namespace, [])

    def owners(self, obj: Obj) -> Iterator[Obj | None]:
        ns = _namespace(obj)
        for ref in owner_references_of(obj):
            yield self.inv.by_uid(str(ref.get("uid") or ""))
            group = split_api_version(str(ref.get("apiVersion") or ""))[0]
            kind = str(ref.get("kind") or "")
            res = self.inv.resource_for_kind(group, kind)
            lookup = ns if res is None or res.namespaced else ""
            yield self.inv.find(group, kind, lookup, str(ref.get("name") or ""))

    def expand(self, obj: Obj) -> None:
        for owner in self.owners(obj):
            self.add(owner)
        for edge in self.graph.dependents(uid_of(obj)):
            self.add(edge.dependent)
        ns = _namespace(obj)
        if ns:
            self.add(self.inv.find("", "Namespace", "", ns))
            self.expand_claims(obj, ns)
            self.expand_by_name(obj, ns)
        elif _is(obj, "", "Namespace") and is_being_deleted(obj):
            for item in self.content(str(obj["metadata"].get("name"))):
                self.add(item)
        if _is(obj, "apiextensions.k8s.io", "CustomResourceDefinition") and (
                is_being_deleted(obj) or id(obj) == self.target):
            self.add_instances(obj)
        if _is(obj, NETWORKING, "ServiceCIDR"):
            self.add_service_cidr_holders(obj)

    def add_service_cidr_holders(self, service_cidr: Obj) -> None:
        """What decides when a ServiceCIDR goes: the other ServiceCIDRs (one containing its
        range releases it) and the allocator's IPAddresses in its range."""
        for other in self.inv.of_kind(NETWORKING, "ServiceCIDR"):
            self.add(other)
        for ip in self.inv.of_kind(NETWORKING, "IPAddress"):
            address = allocated_address(ip)
            if address is not None and contains_address([service_cidr], address):
                self.add(ip)

    def add_instances(self, crd: Obj) -> None:
        """A CRD's instances: deleting it deletes them first and waits until they are gone
        (the API server's CRD finalizer), so their finalizers keep it."""
        spec = crd.get("spec")
        spec = spec if isinstance(spec, dict) else {}
        names = spec.get("names")
        kind = str((names if isinstance(names, dict) else {}).get("kind") or "")
        for item in self.inv.of_kind(str(spec.get("group") or ""), kind):
            self.add(item)

    def expand_by_name(self, obj: Obj, ns: str) -> None:
        """What a controller deletes when this goes, with no ownerReference to follow: a
        Service's Endpoints (the endpoints controller), a ServiceAccount's token Secrets
        (the token controller)."""
        name = str(obj["metadata"].get("name") or "")
        if _is(obj, "", "Service"):
            self.add(self.inv.find("", "Endpoints", ns, name))
        elif _is(obj, "", "ServiceAccount"):
            for secret in self.content(ns):
                if _is(secret, "", "Secret") and is_service_account_token(secret, obj):
                    self.add(secret)

    def expand_claims(self, obj: Obj, ns: str) -> None:
        """A claim's pods and a pod's claims (see the module docstring)."""
        if _is(obj, "", "Pod"):
            for claim, _ in claim_names(obj):
                self.add(self.inv.find("", "PersistentVolumeClaim", ns, claim))
        elif _is(obj, "", "PersistentVolumeClaim"):
            name = str(obj["metadata"].get("name") or "")
            for pod in self.content(ns):
                if _is(pod, "", "Pod") and any(c == name for c, _ in claim_names(pod)):
                    self.add(pod)


def bound_to(inv: Inventory, node: Obj) -> list[Obj]:
    """The pods of ``inv`` bound to ``node`` (``spec.nodeName``)."""
    name = (node.get("metadata") or {}).get("name")
    return [p for p in inv.of_kind("", "Pod") if (p.get("spec") or {}).get("nodeName") == name]


def cascade_scope(inv: Inventory, target: Obj, graph: OwnerGraph | None = None, *,
                  roots: list[Obj] | None = None, expand_target: bool = True,
                  nodes: list[str] | None = None, all_nodes: bool = False) -> list[Obj]:
    """The objects of ``inv`` that deleting ``target`` can touch (see the module
    docstring), in the inventory's order. ``roots``: more objects whose cascades come in
    (the pods an eviction, a drain or a taint acts on); ``expand_target`` False: the target
    comes alone (a node that is tainted or drained, not deleted). Each pod's
    PodDisruptionBudgets and the pods they count come in (``pods/eviction`` decides on
    them), and the Nodes of every pod kept, of ``nodes`` (or all of them), unexpanded:
    their taints decide what taint eviction does."""
    scope = _Scope(inv, graph or OwnerGraph(inv))
    target = inv.by_uid(uid_of(target)) or target  # the inventory's copy
    scope.target = id(target)
    if expand_target:
        scope.add(target)
    for root in roots or ():
        scope.add(root)
    _add_roots(inv, scope, target)
    scope.expand_all()
    for pod in _budget_pods(inv, [o for o in scope.kept.values() if _is(o, "", "Pod")]):
        scope.add(pod)
    scope.expand_all()
    if not expand_target:
        scope.kept[id(target)] = target
    _add_nodes(inv, scope, set(nodes or ()), all_nodes=all_nodes)
    out = [o for o in inv.objects if id(o) in scope.kept]
    return out if len(out) == len(scope.kept) else [target, *out]  # not in the inventory


def _add_roots(inv: Inventory, scope: _Scope, target: Obj) -> None:
    """What the target brings whatever its owners (a Namespace its content, a Node its
    pods), every CRD and every APIService with a service."""
    if _is(target, "", "Namespace"):
        for item in scope.content(str(target["metadata"].get("name"))):
            scope.add(item)
    if _is(target, "", "Node"):
        for pod in bound_to(inv, target):
            scope.add(pod)
    for crd in inv.of_kind("apiextensions.k8s.io", "CustomResourceDefinition"):
        scope.add(crd)
    for api_service in inv.of_kind("apiregistration.k8s.io", "APIService"):
        if isinstance((api_service.get("spec") or {}).get("service"), dict):
            scope.add(api_service)  # an unavailable one holds every namespace deletion


def _budget_pods(inv: Inventory, pods: list[Obj]) -> list[Obj]:
    """The PodDisruptionBudgets selecting ``pods`` and every pod they select."""
    by_ns: dict[str, list[Obj]] = {}
    for pdb in inv.of_kind("policy", "PodDisruptionBudget"):
        by_ns.setdefault(_namespace(pdb), []).append(pdb)
    if not by_ns:
        return []
    budgets = {id(b): b for p in pods for b in by_ns.get(_namespace(p), []) if selects(b, p)}
    if not budgets:
        return []
    counted = [p for p in inv.of_kind("", "Pod")
               if any(_namespace(b) == _namespace(p) and selects(b, p) for b in budgets.values())]
    return [*budgets.values(), *counted]


def _add_nodes(inv: Inventory, scope: _Scope, names: set[str], *, all_nodes: bool) -> None:
    """The Nodes of the kept pods and ``names`` (unexpanded: a Node's Lease is not in play)."""
    for obj in list(scope.kept.values()):
        if _is(obj, "", "Pod") and (obj.get("spec") or {}).get("nodeName"):
            names.add(str(obj["spec"]["nodeName"]))
    for node in inv.of_kind("", "Node"):
        if all_nodes or (node.get("metadata") or {}).get("name") in names:
            scope.kept.setdefault(id(node), node)
