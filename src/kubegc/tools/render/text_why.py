"""``kubegc why`` as text: the conclusion, the evidence (records or events), what the
doctor says about the object if it still exists, and the causes through its owners."""

from __future__ import annotations

from kubegc.tools.audit_log import describe
from kubegc.tools.render.style import Style
from kubegc.tools.render.text_doctor import render_finding
from kubegc.tools.why_report import Entry, WhyReport


def render_why(report: WhyReport, style: Style) -> str:
    out = [style.bold(f"kubegc why {report.query}") + style.dim(f" — {report.source}")]
    out.extend(_body(report, style, ""))
    return "\n".join(out) + "\n"


def _body(report: WhyReport, style: Style, indent: str) -> list[str]:
    out = style.wrap(report.conclusion, indent=indent + "→ ", hanging=indent + "  ")
    if report.query.uid:
        out.append(style.dim(f"{indent}  uid {report.query.uid}"))
    if report.entries:
        out.append(f"{indent}{style.bold('evidence')} ({report.evidence}):")
    for entry in report.entries:
        out.extend(_entry(entry, style, indent + "  ", report.query.uid))
    if not report.entries:
        out.append(f"{indent}{style.bold('evidence')}: no {report.evidence} about it")
    if report.audit is not None:
        named, collections = report.audit
        out.append(f"{indent}{style.bold('audit log')}: {len(named)} deletion(s) naming it, "
                   f"{len(collections)} DeleteCollection(s) that may have included it")
        for d in [*named, *collections]:
            out.extend(style.wrap(describe(d), indent=indent + "  · "))
    for finding in report.findings:
        out.extend(indent + line for line in render_finding(finding, style))
    for note in report.notes:
        out.extend(style.wrap(note, indent=indent + "note: ", hanging=indent + "      "))
    for cause in report.causes:
        out.append(f"{indent}{style.bold('because of its owner')} {cause.query}:")
        out.extend(_body(cause, style, indent + "    "))
    return out


def _entry(entry: Entry, style: Style, indent: str, uid: str) -> list[str]:
    other = f" (another {entry.object.kind} of that name, uid {entry.object.uid})" if (
        uid and entry.object.uid and entry.object.uid != uid) else ""
    policy = f" propagationPolicy={entry.policy}" if entry.policy else ""
    policy += f" by {entry.user}" if entry.user else ""
    head = f"{entry.time}  {entry.action}  {entry.reason}{policy}{other}"
    out = [indent + style.yellow(head)]
    out.extend(style.wrap(entry.message, indent=indent + "  "))
    if entry.rule:
        out.extend(style.wrap(f"rule: {entry.rule}", indent=indent + "  "))
    for owner in entry.owners:
        detail = f" ({owner['detail']})" if owner.get("detail") else ""
        out.extend(style.wrap(f"owner {owner.get('kind')}/{owner.get('name')} uid "
                              f"{owner.get('uid')}: {owner.get('classification')}{detail}",
                              indent=indent + "  · "))
    return out
