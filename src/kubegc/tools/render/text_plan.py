"""``kubegc plan`` as text: the steps in order, then deleted objects, order constraints,
survivors, what hangs (with the doctor's four answers), warnings and what was not
simulated."""

from __future__ import annotations

from kubegc.tools.model import human_duration
from kubegc.tools.plan import PlanReport, Step, StepAction
from kubegc.tools.render.style import Style
from kubegc.tools.render.text_doctor import render_finding

_ACTION_WIDTH = max(len(a.value) for a in StepAction)


def _t(seconds: float) -> str:
    return "t+" + (f"{seconds:.1f}s" if seconds < 60 else human_duration(seconds))


def _steps(steps: list[Step], style: Style) -> list[str]:
    out = []
    for step in steps:
        color = {StepAction.DELETED: style.red, StepAction.DELETION_STARTED: style.yellow,
                 StepAction.OWNER_REF_REMOVED: style.cyan}.get(step.action, str)
        head = f"  {step.seq:>3}  {_t(step.time):>7}  {step.action.value:<{_ACTION_WIDTH}}  "
        out.append(color(head) + style.bold(str(step.object)))
        tail = " — ".join(p for p in (step.detail, (f"by {step.by}" if step.by else ""),
                                      step.reason) if p)
        if tail:
            out.extend(style.wrap(tail, indent=" " * 16))
    return out


def render_plan(report: PlanReport, style: Style) -> str:
    cascade = f" --cascade={report.propagation.lower()}" if report.propagation else ""
    out = [style.bold(f"kubegc plan delete {report.target}{cascade}"),
           style.dim(f"source: {report.source}; simulated with "
                     f"{', '.join(report.controllers) or 'no controller'} on an in-memory "
                     "copy — nothing was written to the source")]
    if report.error:
        out.append(style.red(f"the delete itself fails: {report.error}"))
    if report.pending:
        out.append("")
        out.append(style.bold("ALREADY PENDING") + " (happens anyway, before the delete: see "
                   "kubegc doctor)")
        out.extend(_steps(report.pending, style))
    out.append("")
    out.append(style.bold("STEPS"))
    out.extend(_steps(report.steps, style))
    out.append("")
    out.append(style.bold(f"DELETED ({len(report.deleted)}, in this order)"))
    out.extend(f"  {i:>3}. {d}" for i, d in enumerate(report.deleted, 1))
    if not report.deleted:
        out.append("  nothing")
    if report.constraints:
        out.append("")
        out.append(style.bold("ORDER CONSTRAINTS (enforced by the garbage collector)"))
        for c in report.constraints:
            out.extend(style.wrap(str(c), indent="  - "))
    out.append("")
    out.append(style.bold("SURVIVORS"))
    for s in report.survivors:
        lost = ", ".join(o.short for o in s.lost)
        kept = ("kept by " + ", ".join(o.short for o in s.kept_by)) if s.kept_by else \
            "orphaned: no owner left"
        out.extend(style.wrap(f"{s.object}: reference to {lost} removed; {kept}", indent="  "))
    if not report.survivors:
        out.append("  none lose an owner and stay")
    out.append("")
    out.append(style.bold("HANGS") + (" (still deleting when the simulation went quiet after "
                                     f"{human_duration(report.simulated_seconds)})"))
    if not report.hanging:
        out.append(style.green("  nothing: the delete completes"))
    for finding in report.hanging:
        out.extend("  " + line for line in render_finding(finding, style))
    for title, items in (("WARNINGS (events the delete emits)", report.warnings),
                         ("NOT SIMULATED (kinds kubegc does not serve)",
                          [str(s) for s in report.skipped]), ("NOTES", report.notes)):
        if items:
            out.append("")
            out.append(style.bold(title))
            for item in items:
                out.extend(style.wrap(item, indent="  - "))
    return "\n".join(out) + "\n"
