"""``kubegc tree``: the owner tree of an object, like kubectl-tree.

``build_tree(inv, root)`` follows dependents (objects whose ownerReferences name the
node's uid, as the garbage collector links them) and, below a Namespace, the objects in it
(what the namespace controller deletes with it, and what holds it until they are gone);
``owners=True`` follows ownerReferences upwards instead. Each node carries the object's
state (ready, status, Terminating, finalizers) and the edge's flags (controller,
blockOwnerDeletion) and validity as the GC judges it (``ownership.RefState``). An object
with several owners appears under each; a cycle is cut where it repeats (``repeated``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubegc.api.meta import owner_references_of, uid_of
from kubegc.api.types import Obj
from kubegc.tools.inventory import Inventory
from kubegc.tools.model import ObjRef
from kubegc.tools.ownership import OwnerGraph, RefState, check_ref
from kubegc.tools.state import ObjectState, state_of
from kubegc.tools.wellformed import problem_notes

MAX_DEPTH = 32


@dataclass(frozen=True, slots=True)
class EdgeInfo:
    controller: bool
    block_owner_deletion: bool
    ref_state: RefState
    #: "ownerReference", or "namespace": an object in the namespace above it, which the
    #: namespace controller deletes with it (``deleteAllContent``) and which holds it
    #: until gone
    via: str = "ownerReference"

    def to_dict(self) -> dict[str, Any]:
        return {"controller": self.controller, "blockOwnerDeletion": self.block_owner_deletion,
                "reference": self.ref_state.value, "via": self.via}


#: The namespace's content, as a Namespace's edge to it.
IN_NAMESPACE = EdgeInfo(False, False, RefState.OK, "namespace")


@dataclass
class TreeNode:
    object: ObjRef
    state: ObjectState | None  # None: the object is not in the cluster (a missing owner)
    edge: EdgeInfo | None = None  # how this node is linked to its parent
    children: list[TreeNode] = field(default_factory=list)
    repeated: bool = False  # already shown on the path above (a cycle)

    def walk(self) -> list[TreeNode]:
        return [self, *(n for c in self.children for n in c.walk())]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"object": self.object.to_dict(),
                               "state": self.state.to_dict() if self.state else None}
        if self.edge is not None:
            out["edge"] = self.edge.to_dict()
        if self.repeated:
            out["repeated"] = True
        out["children"] = [c.to_dict() for c in self.children]
        return out


@dataclass
class TreeReport:
    source: str
    root: TreeNode
    direction: str  # "dependents" | "owners"
    notes: list[str] = field(default_factory=list)  # the tree's malformed objects

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "direction": self.direction, "root": self.root.to_dict(),
                "notes": self.notes}


def build_tree(inv: Inventory, root: Obj, *, owners: bool = False, source: str = "") -> TreeReport:
    graph = OwnerGraph(inv)
    node = TreeNode(ObjRef.of(root), state_of(root, inv.now))
    if owners:
        _grow_owners(inv, root, node, {uid_of(root)})
    else:
        _grow_dependents(inv, graph, root, node, {uid_of(root)})
        if root.get("kind") == "Namespace" and root.get("apiVersion") == "v1":
            _grow_content(inv, graph, root, node)
    shown = {(n.object.kind, n.object.namespace, n.object.name) for n in node.walk()}
    problems = [p for p in inv.problems
                if (p.object.kind, p.object.namespace, p.object.name) in shown]
    return TreeReport(source, node, "owners" if owners else "dependents",
                      problem_notes(problems))


def _grow_dependents(inv: Inventory, graph: OwnerGraph, obj: Obj, node: TreeNode,
                     path: set[str]) -> None:
    if len(path) > MAX_DEPTH:
        return
    edges = sorted(graph.dependents(uid_of(obj)), key=lambda e: ObjRef.of(e.dependent))
    for edge in edges:
        dep = edge.dependent
        check = check_ref(inv, dep, edge.ref)
        child = TreeNode(ObjRef.of(dep), state_of(dep, inv.now), _edge(edge.ref, check.state))
        node.children.append(child)
        if uid_of(dep) in path:
            child.repeated = True
            continue
        _grow_dependents(inv, graph, dep, child, path | {uid_of(dep)})


def _grow_content(inv: Inventory, graph: OwnerGraph, ns: Obj, node: TreeNode) -> None:
    """A namespace's content (what holds its deletion until gone: the namespace
    controller's ``deleteAllContent``): each object of the namespace that no object of
    the namespace owns, with its dependents below it. Events are left out (they hold
    nothing and would drown the rest)."""
    name = str((ns.get("metadata") or {}).get("name") or "")
    content = [o for o in inv.in_namespace(name) if o.get("kind") != "Event"]
    here = {uid_of(o) for o in content}
    tops = sorted((o for o in content if not any(
        str(r.get("uid") or "") in here for r in owner_references_of(o))), key=ObjRef.of)
    for obj in tops:
        child = TreeNode(ObjRef.of(obj), state_of(obj, inv.now), IN_NAMESPACE)
        node.children.append(child)
        _grow_dependents(inv, graph, obj, child, {uid_of(ns), uid_of(obj)})


def _grow_owners(inv: Inventory, obj: Obj, node: TreeNode, path: set[str]) -> None:
    if len(path) > MAX_DEPTH:
        return
    ns = str((obj.get("metadata") or {}).get("namespace") or "")
    for ref in owner_references_of(obj):
        check = check_ref(inv, obj, ref)
        owner = check.found if check.state in (RefState.OK, RefState.WAITING) else None
        if owner is None:
            child = TreeNode(ObjRef.from_owner_ref(ref, check.lookup_namespace or ns), None,
                             _edge(ref, check.state))
            node.children.append(child)
            continue
        child = TreeNode(ObjRef.of(owner), state_of(owner, inv.now), _edge(ref, check.state))
        node.children.append(child)
        if uid_of(owner) in path:
            child.repeated = True
            continue
        _grow_owners(inv, owner, child, path | {uid_of(owner)})


def _edge(ref: dict[str, Any], state: RefState) -> EdgeInfo:
    return EdgeInfo(bool(ref.get("controller")), bool(ref.get("blockOwnerDeletion")), state)
