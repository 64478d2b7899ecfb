"""``kubegc plan -o dot|svg``: the objects of the plan and their ownerReferences.

Edges point from dependent to owner, as ownerReferences do, and say so ("owned by");
owners are drawn above their dependents. Edge style: bold = the controller reference,
solid = blockOwnerDeletion=true, dashed = not blocking; red and labelled "reference
removed" = a reference the garbage collector removes (the dependent survives). Node fill:
red = deleted (with its place in the order), orange = stays Terminating, green =
survives (orphaned or kept by another owner), grey = not found, white = untouched. A
double border marks the target; a thick red border marks what holds a hanging deletion
(the verdict's holders). The legend explains all of it inside the picture.
"""

from __future__ import annotations

from kubegc.tools.model import ObjRef
from kubegc.tools.plan import PlanReport
from kubegc.tools.plan.report import Reference
from kubegc.tools.render.dot import FILL, Graph, _escape

HOLDER = 'color="#c00000", penwidth=3'
TARGET = "peripheries=2"


def _edge_attrs(ref: Reference, removed: bool) -> str:
    if removed:
        return 'style="dashed", label="reference removed", color="#c00000", fontcolor="#c00000"'
    style = "bold" if ref.controller else ("solid" if ref.block_owner_deletion else "dashed")
    return f'style="{style}", label="owned by"'



def _states(report: PlanReport) -> dict[str, tuple[str, str]]:
    """uid -> (fill state, label line) for every object with an outcome."""
    out: dict[str, tuple[str, str]] = {}
    for i, ref in enumerate(report.deleted, 1):
        out[ref.uid] = ("deleted", f"deleted #{i}")
    for f in report.hanging:
        out[f.object.uid] = ("hanging", "stays Terminating")
    for s in report.survivors:
        out[s.object.uid] = ("survives", "survives: kept by another owner" if s.kept_by
                             else "survives: orphaned")
    return out


def _legend() -> list[str]:
    nodes = [("deleted", "deleted #n\\n(n: order)"), ("hanging", "stays Terminating"),
             ("survives", "survives"), ("", "untouched"), ("missing", "not found")]
    lines = ["  subgraph cluster_legend {", '    label="legend"; fontname="Helvetica"; '
             'fontsize=10; color="#999999";']
    for state, text in nodes:
        lines.append(f'    "legend {state or "untouched"}" [label="{text}", '
                     f'fillcolor="{FILL[state]}"];')
    lines.append(f'    "legend target" [label="the target", fillcolor="#ffffff", {TARGET}];')
    lines.append(f'    "legend holder" [label="holds a deletion", fillcolor="#ffffff", {HOLDER}];')
    edges = [("bold", "owned by (controller)", ""), ("solid", "owned by, blockOwnerDeletion", ""),
             ("dashed", "owned by, not blocking", ""),
             ("dashed", "reference removed", ', color="#c00000", fontcolor="#c00000"')]
    for i, (style, text, extra) in enumerate(edges):
        lines.append(f'    "legend dep {i}" [label="dependent", fillcolor="#ffffff"];')
        lines.append(f'    "legend owner {i}" [label="owner", fillcolor="#ffffff"];')
        lines.append(f'    "legend dep {i}" -> "legend owner {i}" [style="{style}", '
                     f'label="{_escape(text)}"{extra}];')
    lines.append("  }")
    return lines


def plan_graph(report: PlanReport) -> Graph:
    verb = report.operation.verb if report.operation is not None else "delete"
    g = Graph(f"plan {verb} {report.target}", rankdir="BT", legend=_legend())
    states = _states(report)
    keys: dict[str, str] = {}

    def node(ref: ObjRef, found: bool = True) -> str:
        state, text = states.get(ref.uid, ("" if found else "missing",
                                           "" if found else "not found"))
        key = g.node(ref, state, text)
        keys[ref.uid] = key
        return key

    for obj in [*report.deleted, *(f.object for f in report.hanging),
                *(s.object for s in report.survivors), report.target]:
        node(obj)
    removed = {(s.object.uid, o.uid) for s in report.survivors for o in s.lost}
    involved = set(states) | {report.target.uid}
    for ref in report.references:
        if ref.dependent.uid not in involved and ref.owner.uid not in involved:
            continue
        edge = (node(ref.dependent), node(ref.owner, ref.owner_found))
        g.edges[edge] = _edge_attrs(ref, (ref.dependent.uid, ref.owner.uid) in removed)
    g.node_attrs[keys[report.target.uid]] = TARGET
    holders = {h.object for hang in (report.verdict.hangs if report.verdict else [])
               for h in hang.held_by}
    for holder in holders:
        key = keys.get(holder.uid) or node(holder)
        label, state = g.nodes[key]
        g.nodes[key] = (label + "\\nholds a deletion", state)
        g.node_attrs[key] = ", ".join(p for p in (g.node_attrs.get(key), HOLDER) if p)
    return g
