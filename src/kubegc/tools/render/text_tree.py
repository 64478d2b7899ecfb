"""``kubegc tree`` as text: kubectl-tree's table (NAMESPACE, NAME with tree branches,
READY, STATUS, AGE) plus a NOTES column with each edge's flags (controller,
blockOwnerDeletion), a broken reference, Terminating and finalizers."""

from __future__ import annotations

from kubegc.tools.ownership import RefState
from kubegc.tools.render.style import Style
from kubegc.tools.tree import TreeNode, TreeReport

HEADERS = ("NAMESPACE", "NAME", "READY", "STATUS", "AGE", "NOTES")


def _rows(node: TreeNode, prefix: str, branch: str, rows: list[tuple[TreeNode, str]]) -> None:
    rows.append((node, prefix + branch))
    child_prefix = prefix + ("" if not branch else ("  " if branch.startswith("└") else "│ "))
    for i, child in enumerate(node.children):
        last = i == len(node.children) - 1
        _rows(child, child_prefix, "└─" if last else "├─", rows)


def notes(node: TreeNode) -> str:
    parts = []
    if node.edge is not None and node.edge.via == "namespace":
        parts.append("in the namespace")
    elif node.edge is not None:
        if node.edge.ref_state not in (RefState.OK, RefState.WAITING):
            parts.append(f"reference {node.edge.ref_state.value}")
        if node.edge.controller:
            parts.append("controller")
        if node.edge.block_owner_deletion:
            parts.append("blockOwnerDeletion")
    if node.state is None:
        parts.append("not found")
    elif node.state.finalizers:
        parts.append("finalizers: " + ",".join(node.state.finalizers))
    if node.repeated:
        parts.append("(cycle: shown above)")
    return "  ".join(parts)


def render_tree(report: TreeReport, style: Style) -> str:
    rows: list[tuple[TreeNode, str]] = []
    _rows(report.root, "", "", rows)
    table = [HEADERS]
    for node, branch in rows:
        st = node.state
        table.append((node.object.namespace or "", branch + node.object.short,
                      st.ready if st else "-", st.status if st else "-", st.age if st else "-",
                      notes(node)))
    widths = [max(len(r[i]) for r in table) for i in range(len(HEADERS) - 1)]
    out = []
    for i, row in enumerate(table):
        cells = [row[c].ljust(widths[c]) for c in range(len(widths))]
        line = "  ".join([*cells, row[-1]]).rstrip()
        out.append(style.bold(line) if i == 0 else _paint(style, rows[i - 1][0], line))
    label = "owners of" if report.direction == "owners" else "dependents of"
    head = style.dim(f"{label} {report.root.object} — {report.source}")
    for note in report.notes:
        out.extend(style.wrap(note, indent="note: ", hanging="      "))
    return head + "\n" + "\n".join(out) + "\n"


def _paint(style: Style, node: TreeNode, line: str) -> str:
    if node.state is None or (node.edge is not None and node.edge.ref_state.dangling):
        return style.red(line)
    if node.state.terminating:
        return style.yellow(line)
    return line
