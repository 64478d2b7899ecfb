"""Render the tools' reports: ``text`` (coloured when on a terminal), ``json``, ``dot`` and
``svg`` (through Graphviz's ``dot``).

``render(report, fmt, style=...)`` returns ``str`` (``bytes`` for svg); JSON is the
report's ``to_dict()`` with sorted keys and two-space indentation.
"""

from __future__ import annotations

from typing import Any

import orjson

from kubegc.tools.doctor import DoctorReport
from kubegc.tools.doctor.permissions import PermissionsReport
from kubegc.tools.plan import PlanReport
from kubegc.tools.render.dot import (
    Graph,
    GraphvizMissing,
    doctor_graph,
    svg,
    tree_graph,
    why_graph,
)
from kubegc.tools.render.dot_plan import plan_graph
from kubegc.tools.render.style import (
    DEFAULT_LIMIT,
    DEFAULT_WIDTH,
    Style,
    terminal_width,
    use_color,
)
from kubegc.tools.render.text_doctor import render_doctor
from kubegc.tools.render.text_permissions import render_permissions
from kubegc.tools.render.text_plan import render_plan
from kubegc.tools.render.text_tree import render_tree
from kubegc.tools.render.text_why import render_why
from kubegc.tools.tree import TreeReport
from kubegc.tools.why_report import WhyReport

FORMATS = ("text", "json", "dot", "svg")
Report = DoctorReport | PermissionsReport | PlanReport | TreeReport | WhyReport

__all__ = ["DEFAULT_LIMIT", "DEFAULT_WIDTH", "FORMATS", "GraphvizMissing", "Report", "Style",
           "graph", "render", "terminal_width", "use_color"]


def graph(report: Report) -> Graph:
    if isinstance(report, PermissionsReport):
        raise ValueError("-o dot and -o svg draw graphs; this answer is text or json")
    if isinstance(report, DoctorReport):
        return doctor_graph(report)
    if isinstance(report, PlanReport):
        return plan_graph(report)
    if isinstance(report, TreeReport):
        return tree_graph(report)
    return why_graph(report)


def text(report: Report, style: Style) -> str:
    if isinstance(report, PermissionsReport):
        return render_permissions(report, style)
    if isinstance(report, DoctorReport):
        return render_doctor(report, style)
    if isinstance(report, PlanReport):
        return render_plan(report, style)
    if isinstance(report, TreeReport):
        return render_tree(report, style)
    return render_why(report, style)


def to_json(report: Report) -> str:
    """Sorted keys, two-space indentation (the bytes ``json.dumps(indent=2, sort_keys=True,
    ensure_ascii=False)`` writes, ~20x faster: a 10,000-step plan took 0.5 s)."""
    data: Any = report.to_dict()
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n"


def render(report: Report, fmt: str, *, style: Style | None = None) -> str | bytes:
    if fmt == "json":
        return to_json(report)
    if fmt == "dot":
        return graph(report).to_dot()
    if fmt == "svg":
        return svg(graph(report).to_dot())
    if fmt == "text":
        return text(report, style or Style())
    raise ValueError(f"unknown output format {fmt!r}; use one of {', '.join(FORMATS)}")
