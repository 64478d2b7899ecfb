"""``kubegc doctor`` as text: a header, then each finding with its facts, the seed's four
answers for stuck objects, what happens next and the safe fix."""

from __future__ import annotations

from kubegc.api.clock import format_time
from kubegc.tools.doctor import BlockingNode, DoctorReport, Finding, FindingKind, Severity
from kubegc.tools.finalizers import Alive, Remover
from kubegc.tools.render.style import Style

_MARK = {Severity.ERROR: "✖", Severity.WARNING: "▲", Severity.INFO: "●"}


def severity_color(style: Style, severity: Severity, text: str) -> str:
    return {Severity.ERROR: style.red, Severity.WARNING: style.yellow,
            Severity.INFO: style.cyan}[severity](text)


def alive_color(style: Style, alive: Alive) -> str:
    return {Alive.YES: style.green, Alive.NO: style.red,
            Alive.UNKNOWN: style.yellow}[alive](alive.value)


def labelled(style: Style, indent: str, label: str, text: str, *, width: int = 0) -> list[str]:
    """``label`` (bold) then ``text`` wrapped under itself."""
    pad = label.ljust(width) + "  " if width else label + "  "
    lines = style.wrap(text, indent=indent + pad, hanging=indent + " " * len(pad))
    first = lines[0][len(indent) + len(pad):]
    return [indent + style.bold(pad) + first, *lines[1:]]


def render_doctor(report: DoctorReport, style: Style) -> str:
    scope = f"namespace {report.namespace}" if report.namespace else "all namespaces"
    out = [style.bold("kubegc doctor") + f" — {report.source}, {scope}, "
           f"{format_time(report.now)}"]
    counts = [severity_color(style, s, f"{report.count(s)} {s.label}") for s in Severity]
    out.append(f"{report.objects_read} objects read; findings: " + ", ".join(counts)
               + f" (stuck: deleting for more than {int(report.stuck_after)}s)")
    for name, message in sorted(report.read_errors.items()):
        out.extend(style.wrap(f"could not read {name}: {message}", indent="  ! "))
    for note in report.notes:
        out.extend(style.wrap(note, indent="  note: "))
    if not report.findings:
        out.append("")
        out.append(style.green("no stuck deletions, no broken ownerReferences"))
    for finding in report.findings:
        out.append("")
        out.extend(render_finding(finding, style))
    return "\n".join(out) + "\n"


def render_finding(f: Finding, style: Style) -> list[str]:
    head = f"{_MARK[f.severity]} {f.kind.value}"
    lines = style.wrap(f.title, indent=head + "  ", hanging="    ")
    out = [severity_color(style, f.severity, head) + "  " + style.bold(
        lines[0][len(head) + 2:]), *lines[1:]]
    if f.kind in (FindingKind.STUCK_DELETION, FindingKind.STUCK_NAMESPACE):
        out.extend(_four_answers(f, style))
    else:
        for fact in f.facts:
            out.extend(style.wrap(fact, indent="    · "))
    for text in f.next:
        out.extend(labelled(style, "    ", "next", text))
    for i, text in enumerate(f.fix, 1):
        out.extend(labelled(style, "    ", "fix" if i == 1 else "   ", f"{i}. {text}"))
    return out


def _four_answers(f: Finding, style: Style) -> list[str]:
    out: list[str] = []
    facts = list(f.facts)
    if facts:
        out.extend(labelled(style, "    ", "1 when", facts.pop(0), width=13))
    if facts:
        text = facts.pop(0).removeprefix("finalizers: ")
        out.extend(labelled(style, "    ", "2 finalizers", text, width=13))
    for fact in facts:
        out.extend(style.wrap(fact, indent="    · "))
    for r in f.removers:
        out.extend(remover_lines(r, style, "    ", label="3 who/alive"))
    if f.blocking:
        out.append("    " + style.bold("4 blocking".ljust(13)) + "  "
                   "dependents with blockOwnerDeletion=true still there:")
        out.extend(blocking_lines(f.blocking, style, "      "))
    elif any(r.finalizer == "foregroundDeletion" for r in f.removers):
        out.append("    " + style.bold("4 blocking".ljust(13)) + "  none left")
    return out


def remover_lines(r: Remover, style: Style, indent: str, *, label: str = "") -> list[str]:
    pad = (label.ljust(13) + "  ") if label else ""
    text = f"{r.finalizer} ← {r.who}: "
    lines = style.wrap(text + r.alive.value, indent=indent + pad,
                       hanging=indent + " " * (len(pad) + 2))
    last = lines[-1]
    if last.endswith(r.alive.value):
        lines[-1] = last[: -len(r.alive.value)] + alive_color(style, r.alive)
    if pad:
        lines[0] = indent + style.bold(pad) + lines[0][len(indent) + len(pad):]
    sub = indent + " " * (len(pad) + 2)
    if not r.evidence:
        lines.extend(style.wrap(f"evidence: none ({r.found_by})", indent=sub))
    for ev in r.evidence:
        lines.extend(style.wrap(f"evidence: {ev.source}: {ev.fact}", indent=sub,
                                hanging=sub + "  "))
    return lines


def blocking_lines(nodes: list[BlockingNode], style: Style, indent: str) -> list[str]:
    out: list[str] = []
    for i, node in enumerate(nodes):
        last = i == len(nodes) - 1
        branch, cont = ("└─ ", "   ") if last else ("├─ ", "│  ")
        out.append(indent + branch + style.bold(str(node.object)) + "  " + style.dim(node.state))
        out.extend(style.wrap(node.holds_because, indent=indent + cont + "  ",
                              hanging=indent + cont + "  "))
        for r in node.removers:
            out.extend(remover_lines(r, style, indent + cont + "  "))
        out.extend(blocking_lines(node.dependents, style, indent + cont))
    return out
