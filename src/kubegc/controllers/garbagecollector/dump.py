"""The dependency graph in DOT (cf. dump.go, /debug/controllers/garbagecollector/graph).

One vertex per node that has owners or dependents (isolated nodes are left out), keyed by
uid; an edge goes from each dependent to each of its owners. An owner uid referenced but
absent from the graph gets a vertex marked ``missing``. Vertices and edges are sorted, so
the output is stable (golden files: tests/.../testdata/*.dot, from upstream's testdata).

With ``uids``, only the neighbourhood of those objects is drawn: the transitive closure
over owners and dependents, starting from the given uids that are in the graph (upstream's
``?uid=`` semantics; a uid not in the graph contributes nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kubegc.api.goformat import go_quote
from kubegc.api.resources import split_api_version
from kubegc.controllers.garbagecollector.graph import Node, OwnerRef


@dataclass(frozen=True, slots=True)
class DotVertex:
    uid: str
    group: str
    version: str
    kind: str
    namespace: str
    name: str
    missing_from_graph: bool = False
    being_deleted: bool = False
    deleting_dependents: bool = False
    virtual: bool = False

    @classmethod
    def of(cls, node: Node) -> DotVertex:
        group, version = split_api_version(node.identity.api_version)
        return cls(
            node.identity.uid, group, version, node.identity.kind, node.identity.namespace,
            node.identity.name, being_deleted=node.being_deleted,
            deleting_dependents=node.deleting_dependents, virtual=node.virtual,
        )

    @classmethod
    def missing(cls, ref: OwnerRef) -> DotVertex:
        group, version = split_api_version(ref.api_version)
        return cls(ref.uid, group, version, ref.kind, "", ref.name, missing_from_graph=True)

    def label(self) -> str:
        kubectl = f"{self.kind}.{self.version}"
        if self.group:
            kubectl += f".{self.group}"
        label = f"uid={self.uid}\nnamespace={self.namespace}\n{kubectl}/{self.name}\n"
        conditions = [name for name, on in (
            ("beingDeleted", self.being_deleted), ("deletingDependents", self.deleting_dependents),
            ("virtual", self.virtual), ("missingFromGraph", self.missing_from_graph),
        ) if on]
        if conditions:
            label += ",".join(conditions) + "\n"
        return label

    def attributes(self) -> list[tuple[str, str]]:
        def flag(value: bool) -> str:
            return "true" if value else "false"

        return [
            ("label", self.label()), ("group", self.group), ("version", self.version),
            ("kind", self.kind), ("namespace", self.namespace), ("name", self.name),
            ("uid", self.uid), ("missing", flag(self.missing_from_graph)),
            ("beingDeleted", flag(self.being_deleted)),
            ("deletingDependents", flag(self.deleting_dependents)),
            ("virtual", flag(self.virtual)),
        ]

    def marshal(self) -> str:
        lines = [f"  {go_quote(self.uid)} ["]
        lines += [f"    {key}={go_quote(value)}" for key, value in self.attributes()]
        lines.append("  ];")
        return "\n".join(lines) + "\n"


def to_vertices_and_edges(
    uid_to_node: Mapping[str, Node],
) -> tuple[list[DotVertex], list[tuple[str, str]]]:
    """Vertices (sorted by uid) and dependent -> owner edges (sorted)."""
    vertices: dict[str, DotVertex] = {}
    for node in uid_to_node.values():
        if node.dependents_length() == 0 and not node.owners:
            continue  # neither owns nor is owned
        vertices[node.identity.uid] = DotVertex.of(node)
    edges: set[tuple[str, str]] = set()
    for node in uid_to_node.values():
        if node.identity.uid not in vertices:
            continue
        for ref in node.owners:
            if ref.uid not in vertices:
                vertices[ref.uid] = DotVertex.missing(ref)
            edges.add((node.identity.uid, ref.uid))
    return sorted(vertices.values(), key=lambda v: v.uid), sorted(edges)


def neighbourhood(uid_to_node: Mapping[str, Node], uids: Iterable[str]) -> dict[str, Node]:
    """The nodes reachable from ``uids`` through owners and dependents."""
    to_check = list(uids)
    interesting: dict[str, Node] = {}
    while to_check:
        uid = to_check.pop()
        if uid in interesting:
            continue
        node = uid_to_node.get(uid)
        if node is None:
            continue
        interesting[uid] = node
        to_check.extend(ref.uid for ref in node.owners if ref.uid not in interesting)
        to_check.extend(d.identity.uid for d in node.get_dependents()
                        if d.identity.uid not in interesting)
    return interesting


def marshal_dot(vertices: Iterable[DotVertex], edges: Iterable[tuple[str, str]]) -> str:
    vertices, edges = list(vertices), list(edges)
    out = ["strict digraph full {\n"]
    if vertices:
        out.append("  // Node definitions.\n")
        out += [v.marshal() for v in vertices]
    if edges:
        out.append("  // Edge definitions.\n")
        out += [f"  {go_quote(f)} -> {go_quote(t)};\n" for f, t in edges]
    out.append("}\n")
    return "".join(out)


def to_dot(uid_to_node: Mapping[str, Node], *, uids: Iterable[str] | None = None) -> str:
    """The whole graph, or with ``uids`` the neighbourhood of those objects, in DOT."""
    nodes = uid_to_node if uids is None else neighbourhood(uid_to_node, uids)
    return marshal_dot(*to_vertices_and_edges(nodes))
