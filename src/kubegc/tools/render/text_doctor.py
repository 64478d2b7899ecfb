"""``kubegc doctor`` as text: a summary (counts, one line per root cause), then each root
cause with what happens next and its fix, said once, and the findings it holds, each with
its facts and, for objects being deleted, the seed's four answers. ``render_finding`` is
one finding on its own, with its own next and fix (the planner's hangs)."""

from __future__ import annotations

from kubegc.api.clock import format_time
from kubegc.tools.doctor import BlockingNode, DoctorReport, Finding, RootCause, Severity
from kubegc.tools.finalizers import Alive, Remover
from kubegc.tools.model import ObjRef
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
    """Summary first (counts, then one line per root cause), then each root cause with
    what happens next and its fix, said once, and the findings it holds."""
    out = _header(report, style)
    if not report.findings:
        out.append("")
        out.append(style.green("nothing is being deleted, no broken ownerReferences"))
        return "\n".join(out) + "\n"
    width = len(str(len(report.root_causes)))
    out.append("")
    out.append(style.bold("root causes"))
    for i, group in enumerate(report.root_causes, 1):
        mark = severity_color(style, group.severity, _MARK[group.severity])
        held = len(group.findings)
        tail = f"  ({held} findings)" if held > 1 else ""
        out.extend(_colored_first(style.wrap(f"{i:>{width}}. {group.cause}{tail}",
                                             indent=f"  {_MARK[group.severity]} ",
                                             hanging=" " * (6 + width)), mark, 2))
    shown: dict[int, int] = {}  # finding id -> the root cause it was detailed under
    for i, group in enumerate(report.root_causes, 1):
        out.append("")
        out.extend(_root_cause(i, group, style, shown))
    return "\n".join(out) + "\n"


def _header(report: DoctorReport, style: Style) -> list[str]:
    scope = f"namespace {report.namespace}" if report.namespace else "all namespaces"
    out = [style.bold("kubegc doctor") + f" — {report.source}, {scope}, "
           f"{format_time(report.now)}"]
    counts = [severity_color(style, s, f"{report.count(s)} {s.label}") for s in Severity]
    out.append(f"{report.objects_read} objects read; {len(report.findings)} findings: "
               + ", ".join(counts) + f"; {len(report.root_causes)} root cause"
               + ("" if len(report.root_causes) == 1 else "s"))
    out.append(f"{report.deleting} being deleted ({report.young} for less than --stuck-after "
               f"{int(report.stuck_after)}s: info)")
    for name, message in sorted(report.read_errors.items()):
        out.extend(style.wrap(f"could not read {name}: {message}", indent="  ! "))
    for note in report.notes:
        out.extend(style.wrap(note, indent="  note: "))
    return out


def _colored_first(lines: list[str], mark: str, at: int) -> list[str]:
    """Replace the plain severity mark at column ``at`` of the first line by ``mark``."""
    if lines:
        lines[0] = lines[0][:at] + mark + lines[0][at + 1:]
    return lines


def _root_cause(i: int, group: RootCause, style: Style, shown: dict[int, int]) -> list[str]:
    head = f"{_MARK[group.severity]} {i}."
    lines = style.wrap(str(group.cause), indent=head + "  ", hanging="    ")
    out = [severity_color(style, group.severity, head) + "  " + style.bold(
        lines[0][len(head) + 2:]), *lines[1:]]
    d = group.detail
    held = [f.object for f in group.findings]
    if d.at and d.at != held:
        out.extend(labelled(style, "    ", "on", _objects(d.at), width=5))
    out.extend(labelled(style, "    ", "holds", _objects(held), width=5))
    for text in d.next:
        out.extend(labelled(style, "    ", "next", text, width=5))
    for n, text in enumerate(d.fix, 1):
        out.extend(labelled(style, "    ", "fix" if n == 1 else "", f"{n}. {text}", width=5))
    if d.commands:
        out.extend(labelled(style, "    ", "" if d.fix else "fix", f"{len(d.fix) + 1}. "
                            f"{d.by_hand}:", width=5))
        for command in d.commands:
            out.append(" " * 13 + command)
    for f in group.findings:
        out.extend(_held_finding(f, style, shown, i))
    return out


def _objects(refs: list[ObjRef], limit: int = 12) -> str:
    text = ", ".join(str(r) for r in refs[:limit])
    return text + (f" and {len(refs) - limit} more" if len(refs) > limit else "")


def _held_finding(f: Finding, style: Style, shown: dict[int, int], group: int) -> list[str]:
    head = f"  {_MARK[f.severity]} {f.kind.value}"
    if id(f) in shown:
        lines = style.wrap(f"{f.title} (see {shown[id(f)]}.)", indent=head + "  ",
                           hanging="      ")
        return [severity_color(style, f.severity, head) + lines[0][len(head):], *lines[1:]]
    shown[id(f)] = group
    lines = style.wrap(f.title, indent=head + "  ", hanging="      ")
    out = [severity_color(style, f.severity, head) + "  " + style.bold(
        lines[0][len(head) + 2:]), *lines[1:]]
    out.extend(_body(f, style, "      "))
    if f.blocking:  # what the chain means for this owner; its leaves' causes are said above
        out.extend(labelled(style, "      ", "next", f.next[0]))
    return out


def _body(f: Finding, style: Style, indent: str) -> list[str]:
    if f.is_deletion:
        return _four_answers(f, style, indent)
    out: list[str] = []
    for fact in f.facts:
        out.extend(style.wrap(fact, indent=indent + "· "))
    return out


def render_finding(f: Finding, style: Style) -> list[str]:
    head = f"{_MARK[f.severity]} {f.kind.value}"
    lines = style.wrap(f.title, indent=head + "  ", hanging="    ")
    out = [severity_color(style, f.severity, head) + "  " + style.bold(
        lines[0][len(head) + 2:]), *lines[1:]]
    out.extend(_body(f, style, "    "))
    for text in f.next:
        out.extend(labelled(style, "    ", "next", text))
    for i, text in enumerate(f.fix, 1):
        out.extend(labelled(style, "    ", "fix" if i == 1 else "   ", f"{i}. {text}"))
    return out


def _four_answers(f: Finding, style: Style, indent: str) -> list[str]:
    out: list[str] = []
    facts = list(f.facts)
    if facts:
        out.extend(labelled(style, indent, "1 when", facts.pop(0), width=13))
    if facts:
        text = facts.pop(0).removeprefix("finalizers: ")
        out.extend(labelled(style, indent, "2 finalizers", text, width=13))
    left = next((x for x in facts if x.startswith("blocking dependents")), "")
    for fact in facts:
        if fact != left:
            out.extend(style.wrap(fact, indent=indent + "· "))
    for r in f.removers:
        out.extend(remover_lines(r, style, indent, label="3 who/alive"))
    if f.blocking:
        out.append(indent + style.bold("4 blocking".ljust(13)) + "  "
                   "dependents with blockOwnerDeletion=true still there:")
        out.extend(blocking_lines(f.blocking, style, indent + "  "))
    elif any(r.finalizer == "foregroundDeletion" for r in f.removers):
        text = left.partition(": ")[2] if "none read" in left else "none left"
        out.extend(labelled(style, indent, "4 blocking", text, width=13))
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
