"""``kubegc doctor KIND/NAME --as USER`` as text: who, what the cluster enforces (with its
evidence), then each question — change ownerReferences, and blockOwnerDeletion per
reference — with its verdict, the missing permission, the API server's 403 and the rule
that grants it, as YAML to paste into a Role or ClusterRole."""

from __future__ import annotations

from kubegc.authz.ownerreferences import PLUGIN_NAME
from kubegc.tools.doctor.access import State
from kubegc.tools.doctor.permissions import Answer, PermissionsReport, Rule
from kubegc.tools.render.style import Style
from kubegc.tools.render.text_doctor import labelled


def render_permissions(report: PermissionsReport, style: Style) -> str:
    obj = report.object
    where = f" -n {obj.namespace}" if obj.namespace else ""
    who = "you (the kubeconfig's user)" if report.user is None else (
        f"{report.user.name} (groups {', '.join(report.user.groups) or 'none'})")
    out = [style.bold(f"kubegc doctor {obj.short}{where}") + style.dim(f" — {report.source}"),
           f"may {who} set the ownerReferences of {obj.short}{where}?"]
    access = report.access
    plugin = {State.ON: "on", State.OFF: "off: nothing below is checked by this cluster",
              State.UNKNOWN: "unknown"}[access.plugin]
    rbac = {State.ON: "an authorizer (RBAC) decides",
            State.OFF: "every request is allowed (no RBAC)",
            State.UNKNOWN: "unknown"}[access.rbac]
    evidence = access.plugin_evidence or "no evidence"
    out += labelled(style, "  ", PLUGIN_NAME, f"{plugin} — {evidence}", width=len(PLUGIN_NAME))
    out += labelled(style, "  ", "authorization", f"{rbac} — {access.rbac_evidence}",
                    width=len(PLUGIN_NAME))
    out.append("")
    out += _question(report, "changing ownerReferences (an update, patch or apply that adds, "
                             "removes or edits one)", report.change, style)
    if not report.refs:
        out.append(style.dim(f"  {obj.short} has no ownerReferences"))
    for ref in report.refs:
        r = ref.ref
        now = str(r.get("blockOwnerDeletion")).lower() if "blockOwnerDeletion" in r else "unset"
        title = (f"ownerReferences[{ref.index}] {r.get('kind')}/{r.get('name')} "
                 f"({r.get('apiVersion')}; blockOwnerDeletion {now}): setting "
                 "blockOwnerDeletion: true")
        out += _question(report, title, ref.answer, style)
    rules = list(dict.fromkeys(a.rule for a in (report.change, *(r.answer for r in report.refs))
                               if a.rule is not None and not a.allowed))
    if len(rules) > 1:
        out.append(style.bold("the rules that grant everything refused above") + " (of one "
                   "Role or ClusterRole):")
        out += ["  " + line for rule in rules for line in rule.yaml().splitlines()]
    for note in report.notes:
        out += style.wrap(note, indent="note: ", hanging="      ")
    return "\n".join(out) + "\n"


def _verdict(report: PermissionsReport, answer: Answer, style: Style) -> tuple[str, str]:
    """(mark, what follows "is") as the cluster's enforcement allows saying it."""
    if answer.allowed is None:
        return style.yellow("?"), "unknown: the cluster could not be asked"
    if report.access.rbac is State.OFF:
        return style.cyan("○"), ("allowed: this cluster allows every request; under RBAC it "
                                 "needs the permissions below")
    if answer.allowed:
        return style.green("✔"), "allowed"
    if report.access.plugin is State.OFF:
        return style.cyan("○"), f"not checked ({PLUGIN_NAME} is off); refused if it were on"
    if report.enforced is None:
        return style.yellow("?"), f"refused if {PLUGIN_NAME} is on (not known here)"
    return style.red("✖"), "refused"


def _question(report: PermissionsReport, title: str, answer: Answer,
              style: Style) -> list[str]:
    mark, verdict = _verdict(report, answer, style)
    out = style.wrap(f"{title} is {verdict}", indent="x ", hanging="    ")
    out[0] = mark + out[0][1:]
    if answer.missing is not None:
        out += labelled(style, "    ", "missing", answer.missing.describe(), width=8)
    if answer.unmapped is not None:
        out += labelled(style, "    ", "missing", f"the cluster serves no {answer.unmapped}: "
                        "fix the reference's apiVersion/kind, or install the CRD that serves "
                        "it", width=8)
    if answer.message is not None:
        said = f"{report.forbidden_name} is forbidden: {answer.message}"
        label = "answer" if report.enforced else "would be"
        out.append(f"    {style.bold(label.ljust(8))}  {said}")  # one line: greppable
    if answer.rule is not None:
        out += _grant(answer.rule, style)
    elif answer.allowed and report.access.rbac is State.OFF:
        for permission in answer.permissions:
            if permission.record.api_group != "*":
                out += labelled(style, "    ", "needs", permission.describe(), width=8)
                out += _grant(Rule.granting(permission.record), style)
    elif answer.allowed:
        for permission in answer.permissions:
            if permission.allowed and permission.verdict is not None:
                reason = f": {permission.verdict.reason}" if permission.verdict.reason else ""
                out += labelled(style, "    ", "allowed", permission.describe() + reason,
                                width=8)
    return out


def _grant(rule: Rule, style: Style) -> list[str]:
    out = labelled(style, "    ", "grant", f"with this rule {rule.where()}:", width=8)
    out += ["              " + line for line in rule.yaml().splitlines()]
    return out
