"""Graphs of the reports in Graphviz DOT, and SVG through the ``dot`` binary.

Nodes are objects (keyed by uid, or by kind/namespace/name when there is none). An
ownership edge goes from the dependent to its owner, as its ownerReference points
(``reference``): labelled "owned by", or, in the doctor's blocking chains, "blocks" (the
dependent keeps its owner's foregroundDeletion). Styling: bold = controller reference,
solid = blockOwnerDeletion=true, dashed = not blocking, red = a reference the GC treats as
dangling. Node fill: red = deleted (plan) or stuck, orange = hanging / Terminating,
green = survives, grey = not found; a thick dark-red border and "HOLDS" = an object that
holds a deletion (a leaf of a blocking chain, the object with the finalizer). Every graph
carries a legend (the plan's graph its own, ``dot_plan``). Output is deterministic
(sorted) so that it can be compared with golden files.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field

from kubegc.tools.doctor import DoctorReport, FindingKind
from kubegc.tools.doctor.findings import BlockingNode
from kubegc.tools.model import ObjRef
from kubegc.tools.tree import TreeNode, TreeReport
from kubegc.tools.why_report import WhyReport

FILL = {"deleted": "#f4a6a6", "stuck": "#f4a6a6", "hanging": "#f9cf8f", "terminating": "#f9cf8f",
        "survives": "#b7e1a1", "missing": "#dddddd", "": "#ffffff"}


class GraphvizMissing(RuntimeError):
    """``-o svg`` without Graphviz installed."""


@dataclass
class Graph:
    name: str
    nodes: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (label, fill)
    edges: dict[tuple[str, str], str] = field(default_factory=dict)  # (from, to) -> attrs
    holders: dict[str, str] = field(default_factory=dict)  # key -> what it holds with
    node_attrs: dict[str, str] = field(default_factory=dict)  # key -> more node attributes
    legend: list[str] = field(default_factory=list)  # DOT lines after the graph (default: LEGEND)
    rankdir: str = "LR"

    def node(self, ref: ObjRef, state: str = "", extra: str = "") -> str:
        key = ref.uid or f"{ref.kind}/{ref.namespace}/{ref.name}"
        label = f"{ref.kind}\\n{ref.namespace + '/' if ref.namespace else ''}{ref.name}"
        if extra:
            label += f"\\n{extra}"
        old = self.nodes.get(key)
        if old is None or (state and not old[1]):
            self.nodes[key] = (label, state)
        return key

    def edge(self, owner: str, dependent: str, *, controller: bool = False,
             block: bool = True, broken: bool = False, label: str = "") -> None:
        attrs = [f'style="{"bold" if controller else ("solid" if block else "dashed")}"']
        if broken:
            attrs.append('color="red"')
        if label:
            attrs.append(f'label="{_escape(label)}"')
        self.edges[(owner, dependent)] = ", ".join(attrs)

    def reference(self, dependent: str, owner: str, *, controller: bool = False,
                  block: bool = True, broken: bool = False, label: str = "owned by") -> None:
        """An ownership edge, drawn from the dependent to its owner as the reference
        points."""
        self.edge(dependent, owner, controller=controller, block=block, broken=broken,
                  label=label)

    def hold(self, key: str, why: str) -> None:
        """Mark ``key`` as an object that holds a deletion (``why``: with what)."""
        self.holders[key] = why

    def to_dot(self) -> str:
        lines = [f'digraph "{_escape(self.name)}" {{', f"  rankdir={self.rankdir};",
                 '  node [shape=box, style="rounded,filled", fontname="Helvetica", '
                 'fontsize=10];', '  edge [fontname="Helvetica", fontsize=9];']
        for key in sorted(self.nodes):
            label, state = self.nodes[key]
            extra = f", {self.node_attrs[key]}" if key in self.node_attrs else ""
            if key in self.holders:
                label += f"\\nHOLDS: {self.holders[key]}"
                extra += ', color="#8b0000", penwidth=3'
            lines.append(f'  "{_escape(key)}" [label="{_escape(label, keep_newlines=True)}", '
                         f'fillcolor="{FILL.get(state, "#ffffff")}"{extra}];')
        for (a, b) in sorted(self.edges):
            lines.append(f'  "{_escape(a)}" -> "{_escape(b)}" [{self.edges[(a, b)]}];')
        lines.extend(self.legend or LEGEND)
        lines.append("}")
        return "\n".join(lines) + "\n"


#: The legend every graph carries (a cluster of its own, below the graph).
LEGEND = [
    "  subgraph cluster_legend {",
    '    label="legend"; fontname="Helvetica"; fontsize=10; style="dashed";',
    '    node [shape=box, style="rounded,filled", fontsize=9];',
    f'    "legend:dependent" [label="dependent", fillcolor="{FILL[""]}"];',
    f'    "legend:owner" [label="owner", fillcolor="{FILL[""]}"];',
    '    "legend:dependent" -> "legend:owner" [style="solid", label="owned by"];',
    '    "legend:edges" [shape=plaintext, style="", label="edges point from dependent to '
    'owner\\lbold: controller reference\\lsolid: blockOwnerDeletion=true\\ldashed: '
    'not blocking\\lred: dangling reference\\l"];',
    f'    "legend:stuck" [label="deleted / stuck", fillcolor="{FILL["stuck"]}"];',
    f'    "legend:terminating" [label="Terminating / hangs", fillcolor="{FILL["terminating"]}"];',
    f'    "legend:survives" [label="survives", fillcolor="{FILL["survives"]}"];',
    f'    "legend:missing" [label="not found", fillcolor="{FILL["missing"]}"];',
    f'    "legend:holds" [label="HOLDS: what keeps a deletion", fillcolor="{FILL[""]}", '
    'color="#8b0000", penwidth=3];',
    "  }",
]


def _escape(text: str, *, keep_newlines: bool = False) -> str:
    out = text.replace("\\n", "\0") if keep_newlines else text
    out = out.replace("\\", "\\\\").replace('"', '\\"')
    return out.replace("\0", "\\n")


def svg(dot_text: str) -> bytes:
    exe = shutil.which("dot")
    if exe is None:
        raise GraphvizMissing(
            "-o svg needs Graphviz's `dot` program, which is not installed "
            "(apt-get install graphviz, brew install graphviz); use -o dot and render it "
            "elsewhere")
    done = subprocess.run([exe, "-Tsvg"], input=dot_text.encode(), capture_output=True,
                          check=False, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"dot failed: {done.stderr.decode(errors='replace')}")
    return done.stdout


def tree_graph(report: TreeReport) -> Graph:
    g = Graph(f"tree {report.root.object}")

    def visit(node: TreeNode, parent: str | None) -> None:
        state = "missing" if node.state is None else (
            "terminating" if node.state.terminating else "")
        key = g.node(node.object, state)
        if parent is not None and node.edge is not None:
            owner, dep = (key, parent) if report.direction == "owners" else (parent, key)
            g.reference(dep, owner, controller=node.edge.controller,
                        block=node.edge.block_owner_deletion,
                        broken=node.edge.ref_state.dangling)
        if not node.repeated:
            for child in node.children:
                visit(child, key)

    visit(report.root, None)
    return g


def doctor_graph(report: DoctorReport) -> Graph:
    g = Graph("doctor")
    for f in report.findings:
        if f.kind in (FindingKind.STUCK_DELETION, FindingKind.DELETING):
            state = "stuck" if f.kind is FindingKind.STUCK_DELETION else "terminating"
            key = g.node(f.object, state, ("stuck: " if state == "stuck" else "deleting: ")
                         + (",".join(r.finalizer for r in f.removers) or "no finalizer"))
            _blocking(g, key, f.blocking)
        elif f.kind in (FindingKind.STUCK_NAMESPACE, FindingKind.DELETING_NAMESPACE):
            key = g.node(f.object, "stuck" if f.kind is FindingKind.STUCK_NAMESPACE
                         else "terminating")
            for rel in f.related:
                g.edge(g.node(rel, "terminating"), key, block=False, label="content of")
        elif f.kind in (FindingKind.OWNER_ABSENT, FindingKind.OWNER_RECREATED,
                        FindingKind.OWNER_IN_OTHER_NAMESPACE,
                        FindingKind.CLUSTER_SCOPED_DEPENDENT, FindingKind.UNKNOWN_OWNER_KIND):
            child = g.node(f.object)
            if not f.related:
                continue
            exists = f.kind in (FindingKind.OWNER_IN_OTHER_NAMESPACE,
                                FindingKind.CLUSTER_SCOPED_DEPENDENT)
            owner = g.node(f.related[0], "" if exists else "missing",
                           "" if exists else "not found")
            g.reference(child, owner, broken=True, label=f.kind.value)
    for group in report.root_causes:  # what actually holds the deletions
        for ref in group.detail.at:
            if any(f.is_deletion for f in group.findings):
                g.hold(g.node(ref), group.cause.what.split(", removed by")[0])
    return g


def _blocking(g: Graph, owner: str, nodes: list[BlockingNode]) -> None:
    for node in nodes:
        state = "terminating" if node.state.startswith("Terminating") else ""
        key = g.node(node.object, state)
        g.reference(key, owner, label="blocks")
        _blocking(g, key, node.dependents)


def why_graph(report: WhyReport) -> Graph:
    g = Graph(f"why {report.query}")

    def visit(r: WhyReport) -> str:
        state = "missing" if r.state is None else ("terminating" if r.state.terminating else "")
        key = g.node(r.query, state)
        for cause in r.causes:
            g.reference(key, visit(cause), broken=True, label="deleted because of")
        return key

    visit(report)
    return g
