"""``kubegc plan`` as text, the verdict first: what goes, what stays, what hangs and on
whom; then the summary by kind and outcome; then the steps in order (what happens anyway
first), the order constraints, the doctor's diagnosis of what hangs, warnings, what was
not simulated and notes.

Long lists (steps, deleted objects, survivors, hangs, constraints) show ``style.limit``
entries (``--steps N``; ``--all``: every one) and say how many more there are; the
summary counts them all, and ``-o json`` keeps every entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from kubegc.tools.model import human_duration
from kubegc.tools.plan import PlanReport, Step, StepAction
from kubegc.tools.plan.report import KindCount, Survivor
from kubegc.tools.render.style import Style
from kubegc.tools.render.text_doctor import render_finding

_ACTION_WIDTH = max(len(a.value) for a in StepAction)
_LABEL = 8  # width of the verdict's labels
VERDICT_ITEMS = 5  # entries of each of the verdict's lists (all with --all)
T = TypeVar("T")


def _t(seconds: float) -> str:
    return "t+" + (f"{seconds:.1f}s" if seconds < 60 else human_duration(seconds))


def _shown(items: Sequence[T], style: Style, limit: int | None = -1
           ) -> tuple[Sequence[T], str]:
    """The entries to show (``limit``, default ``style.limit``), and the line that says
    how many are not."""
    limit = style.limit if limit == -1 else limit
    if limit is None or len(items) <= limit:
        return items, ""
    rest = len(items) - limit
    return items[:limit], style.dim(f"… and {rest:,} more (--steps N or --all to see them; "
                                    "-o json lists every one)")


def _verdict_limit(style: Style) -> int | None:
    return None if style.limit is None else min(VERDICT_ITEMS, style.limit)


def _steps(steps: Sequence[Step], style: Style) -> list[str]:
    out = []
    for step in steps:
        color = {StepAction.DELETED: style.red, StepAction.DELETION_STARTED: style.yellow,
                 StepAction.OWNER_REF_REMOVED: style.cyan}.get(step.action, str)
        head = f"  {step.seq:>3}  {_t(step.time):>7}  {step.action.value:<{_ACTION_WIDTH}}  "
        out.append(color(head) + style.bold(str(step.object)))
        latest = f"at the latest {_t(step.latest)}" if step.latest is not None else ""
        if step.earliest is not None:  # a range on a real cluster (a lost node's monitor)
            latest = f"between {_t(step.earliest)} and {_t(step.latest or step.time)}"
        tail = " — ".join(p for p in (latest if step.detail.find("up to t+") < 0 else "",
                                      step.detail, (f"by {step.by}" if step.by else ""),
                                      step.reason) if p)
        if tail:
            out.extend(style.wrap(tail, indent=" " * 16))
    return out


def _list(style: Style, label: str, lines: list[str], more: str) -> list[str]:
    """``label`` then the first of ``lines`` on its line, the others under it."""
    out = []
    head = "  " + style.bold(label.ljust(_LABEL)) + " "
    pad = " " * (_LABEL + 3)
    for i, line in enumerate(lines):
        wrapped = style.wrap(line, indent=pad, hanging=pad + "  ")
        wrapped[0] = (head if i == 0 else pad) + wrapped[0][len(pad):]
        out.extend(wrapped)
    if more:
        out.append(pad + more)
    return out


def _survivor(s: Survivor) -> str:
    parts = []
    if s.lost:
        parts.append(f"its reference to {', '.join(o.short for o in s.lost)} is removed")
    if s.dangling:
        parts.append(f"it keeps its reference to {', '.join(o.short for o in s.dangling)}, "
                     "deleted: the garbage collector never collects a cluster-scoped dependent "
                     "of a namespaced owner (OwnerRefInvalidNamespace)")
    if s.kept_by:
        parts.append(f"kept by {', '.join(o.short for o in s.kept_by)}")
    elif not s.dangling:
        parts.append("orphaned: no owner left")
    return f"{s.object}: " + "; ".join(parts)


def _verdict(report: PlanReport, style: Style) -> list[str]:
    verdict = report.verdict
    if verdict is None:
        return []
    paint = style.green if verdict.completes else style.red
    out = style.wrap(verdict.text, indent="VERDICT  ", hanging="         ")
    out[0] = style.bold("VERDICT") + "  " + paint(out[0][len("VERDICT  "):])
    out[1:] = [paint(line) for line in out[1:]]
    limit = _verdict_limit(style)
    deleted, more = _shown(report.deleted, style, limit)
    out += _list(style, "goes", [str(d) for d in deleted] or ["nothing"], more)
    survivors, more = _shown(report.survivors, style, limit)
    out += _list(style, "stays", [_survivor(s) for s in survivors]
                 or ["nothing loses an owner and stays"], more)
    hangs, more = _shown(verdict.hangs, style, limit)
    out += _list(style, "hangs", [
        f"{h.object} — " + "; ".join(
            ("" if holder.object == h.object else f"held by {holder.object}: ")
            + holder.reason for holder in h.held_by) for h in hangs] or ["nothing"], more)
    return out


def _summary(rows: list[KindCount], style: Style) -> list[str]:
    if not rows:
        return []
    width = max(len("KIND"), *(len(r.kind) for r in rows))
    head = f"  {'KIND':<{width}}  DELETED  HANGING  ORPHANED  KEPT BY ANOTHER OWNER"
    out = ["", style.bold("SUMMARY"), style.dim(head)]
    for r in rows:
        out.append(f"  {r.kind:<{width}}  {r.deleted:>7,}  {r.hanging:>7,}  {r.orphaned:>8,}  "
                   f"{r.kept:>21,}")
    return out


def _section(title: str, items: Sequence[T], style: Style,
             lines: Callable[[Sequence[T]], list[str]], empty: str = "") -> list[str]:
    """A titled section of ``items`` (as many as ``style.limit``), each as ``lines`` puts
    it, with how many are not shown."""
    shown, more = _shown(items, style)
    count = f" ({len(items):,})" if len(shown) == len(items) else \
        f" (first {len(shown):,} of {len(items):,})"
    body = lines(shown) or ([f"  {empty}"] if empty else [])
    return ["", style.bold(title + count), *body, *([f"  {more}"] if more else [])]


def _details(report: PlanReport, style: Style) -> list[str]:
    """The long lists, after the verdict and the summary."""
    out: list[str] = []
    if report.pending:
        out += _section("ALREADY PENDING (happens anyway, before the delete: see kubegc "
                        "doctor)", report.pending, style, lambda s: _steps(s, style))
    out += _section("STEPS", report.steps, style, lambda s: _steps(s, style))
    out += _section("DELETED, in this order", report.deleted, style,
                    lambda d: [f"  {i:>3}. {ref}" for i, ref in enumerate(d, 1)], "nothing")
    if report.constraints:
        out += _section("ORDER CONSTRAINTS (enforced by the garbage collector)",
                        report.constraints, style,
                        lambda cs: [line for c in cs for line in style.wrap(str(c),
                                                                           indent="  - ")])
    if report.hanging:
        quiet = human_duration(report.simulated_seconds)
        out += _section(f"HANGS (the doctor's diagnosis, when the simulation went quiet after "
                        f"{quiet})", report.hanging, style,
                        lambda fs: ["  " + line for f in fs for line in render_finding(f, style)])
    return out


def render_plan(report: PlanReport, style: Style) -> str:
    cascade = f" --cascade={report.propagation.lower()}" if report.propagation else ""
    verb = report.operation.verb if report.operation is not None else "delete"
    reach = (f" of the {report.objects_simulated:,} objects the {verb} can reach (of "
             f"{report.objects_read:,} read)" if report.objects_read else "")
    out = [style.bold(f"kubegc plan {verb} {report.target}{cascade}"),
           style.dim(f"source: {report.source}; simulated with "
                     f"{', '.join(report.controllers) or 'no controller'} on an in-memory "
                     f"copy{reach} — nothing was written to the source"), ""]
    out += _verdict(report, style)
    out += _summary(report.verdict.by_kind if report.verdict else [], style)
    out += _details(report, style)
    for title, items in (("WARNINGS (events the delete emits)", report.warnings),
                         ("NOT SIMULATED (kinds kubegc does not serve)",
                          [str(s) for s in report.skipped]), ("NOTES", report.notes)):
        if items:
            out.append("")
            out.append(style.bold(title))
            for item in items:
                out.extend(style.wrap(item, indent="  - "))
    return "\n".join(out) + "\n"
