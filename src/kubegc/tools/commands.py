"""The tools' command line: ``kubegc doctor | plan | tree | why`` (also ``kubectl gc ...``).

``add_parsers(sub)`` adds the four subcommands to ``kubegc.cli``'s parser; ``run(args,
plan_factory=...)`` executes one and returns the exit code (0 done, 1 failed — the
message is on stderr —, 3 for ``doctor --fail-on LEVEL`` when a finding at that level or
worse exists). Where the cluster comes from: ``--from FILE`` (a dump, ``-`` for
stdin), else ``--kubeconfig``/``--context`` (default ``$KUBECONFIG`` or
``~/.kube/config``), read-only either way (``session.open_session``). The planner's
simulation is injected by the caller (the composition root), never built here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

import aiohttp
import yaml

from kubegc.api.errors import StatusError
from kubegc.api.interning import intern_common
from kubegc.api.types import Obj
from kubegc.client.interface import APIResource
from kubegc.tools.audit_log import read_audit_log
from kubegc.tools.doctor import (
    DEFAULT_STUCK_AFTER,
    DoctorOptions,
    DoctorReport,
    Severity,
    diagnose,
)
from kubegc.tools.doctor.permissions import explain_permissions, impersonated_user
from kubegc.tools.finalizers import ControllerMap
from kubegc.tools.flags import HelpFormatter, add_now, examples, parse_duration
from kubegc.tools.inventory import Inventory
from kubegc.tools.plan import SimulationFactory, plan_operation
from kubegc.tools.plan_command import (
    CASCADES,
    PLAN_VERBS,
    add_plan_flags,
    operation_for,
    split_taint,
)
from kubegc.tools.render import (
    DEFAULT_LIMIT,
    FORMATS,
    GraphvizMissing,
    Report,
    Style,
    render,
    terminal_width,
    use_color,
)
from kubegc.tools.resolve import UnknownKind, resolve_kind, split_target
from kubegc.tools.session import Session, ToolError, open_session
from kubegc.tools.slim import Slim
from kubegc.tools.tree import build_tree
from kubegc.tools.wellformed import well_formed
from kubegc.tools.why import explain, recorded_kind

TOOLS = ("doctor", "plan", "tree", "why")
#: Exit status of ``doctor --fail-on`` when a finding at that level exists (1 is for
#: failures: bad input, an unreachable cluster).
EXIT_FINDINGS = 3


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"not a count: {text!r} (e.g. 50)")
    return value


def _source(p: argparse.ArgumentParser, *, namespaces: bool = True) -> None:
    g = p.add_argument_group("where to read")
    g.add_argument("--kubeconfig", default=None, help="kubeconfig file (default $KUBECONFIG "
                   "or ~/.kube/config)")
    g.add_argument("--context", default=None, help="kubeconfig context (default: current)")
    g.add_argument("--from", dest="from_file", metavar="FILE", default=None,
                   help="read a dump (kubectl get -A -o json|yaml ...) instead of a cluster; "
                        "'-' for stdin")
    add_now(g)
    g.add_argument("-n", "--namespace", default=None, help="namespace")
    if namespaces:
        g.add_argument("-A", "--all-namespaces", action="store_true",
                       help="every namespace (the default for doctor)")
    o = p.add_argument_group("output")
    o.add_argument("-o", "--output", choices=FORMATS, default="text",
                   help="text (default), json, dot or svg (svg needs Graphviz)")
    o.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the text (auto: on a terminal, unless NO_COLOR is set)")


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("doctor", help="stuck deletions, stuck namespaces, broken ownerReferences",
                       formatter_class=HelpFormatter, epilog=examples(
                           "%(prog)s                         every namespace of the current "
                           "context",
                           "%(prog)s -n shop -o json",
                           "%(prog)s --from dump.json --now '2026-01-01 10:00'",
                           "%(prog)s --fail-on warning       exit 3 on a warning or worse (CI)",
                           "%(prog)s configmap/blog-config -n lab --as jane   may jane set its "
                           "ownerReferences?",
                           "%(prog)s -f child.yaml --as system:serviceaccount:ops:operator"),
                       description="Find objects stuck deleting (with when, which finalizers, "
                                   "who removes them and whether it is alive, and what blocks a "
                                   "foreground deletion), stuck namespaces and broken "
                                   "ownerReferences; say what happens next and the safe fix. "
                                   "Given KIND/NAME: whether a user may change its "
                                   "ownerReferences and set blockOwnerDeletion on each, under "
                                   "OwnerReferencesPermissionEnforcement, the permission missing "
                                   "and the RBAC rule that grants it.")
    p.add_argument("target", nargs="*", metavar="KIND/NAME",
                   help="ask about this object's ownerReferences permissions instead")
    p.add_argument("-f", "--filename", default=None, metavar="FILE",
                   help="ask about the object of this manifest (to be created; '-' for stdin) "
                        "instead of KIND/NAME")
    who = p.add_argument_group("whose permissions (with KIND/NAME; default: yours)")
    who.add_argument("--as", dest="as_user", default=None, metavar="USER",
                     help="the user, as kubectl --as (a ServiceAccount: "
                          "system:serviceaccount:NS:NAME); asked with SubjectAccessReviews")
    who.add_argument("--as-group", dest="as_groups", action="append", default=[],
                     metavar="GROUP", help="a group of that user (repeat for more)")
    _source(p)
    p.add_argument("--stuck-after", type=parse_duration, default=DEFAULT_STUCK_AFTER,
                   metavar="DURATION",
                   help="deleting for longer than this is StuckDeletion (a warning, or an error "
                        "when nothing will release it); younger deletions are listed as "
                        f"Deleting (info) (default {int(DEFAULT_STUCK_AFTER)}s)")
    p.add_argument("--controllers-file", type=Path, default=None, metavar="FILE",
                   help="YAML mapping of finalizers to the controllers that remove them")
    p.add_argument("--fail-on", choices=tuple(s.label for s in Severity), default=None,
                   help="exit with status 3 when a finding of this severity or worse exists "
                        "(for CI gates; default: exit 0 whatever is found)")
    p = sub.add_parser("plan", help="what a delete, eviction, drain, taint or lost node would "
                       "do, simulated (nothing is written)",
                       formatter_class=HelpFormatter, epilog=examples(
                           "%(prog)s delete deployment/web -n shop",
                           "%(prog)s delete namespace/shop --cascade foreground -o json",
                           "%(prog)s delete site/blog -n lab --from dump.json",
                           "%(prog)s evict pod/web-7d9f8b-x2x4q -n shop   what pods/eviction "
                           "answers",
                           "%(prog)s drain node/worker-1 --ignore-daemonsets --timeout 5m",
                           "%(prog)s taint node/worker-1 maint=now:NoExecute",
                           "%(prog)s stop-kubelet node/worker-1   the node is lost"),
                       description="Load the cluster into an in-memory kubegc, run the real "
                                   "garbage collector, kubelet, namespace, pod GC, taint-"
                                   "eviction, node lifecycle and disruption controllers, do the "
                                   "operation there (delete; evict: POST pods/eviction; drain: "
                                   "as kubectl drain, cordon then evict with retries; taint: "
                                   "as kubectl taint; stop-kubelet: the node's kubelet stops, "
                                   "as a lost node) and report what happens, in order.")
    p.add_argument("verb", choices=PLAN_VERBS, help="the operation to plan")
    p.add_argument("target", nargs="+", metavar="KIND/NAME",
                   help="the object (taint: then the taint, key[=value]:Effect)")
    p.add_argument("--cascade", choices=tuple(CASCADES), default="background",
                   help="propagation policy, as kubectl delete --cascade (default background)")
    p.add_argument("--horizon", type=parse_duration, default=None, metavar="DURATION",
                   help="stop when nothing happened for this long (simulated; default: the "
                        "longest pod grace period + 60s)")
    p.add_argument("--simulated-only", action="store_true",
                   help="do not assume that controllers alive in the source remove their "
                        "finalizers (by default they are removed in the simulation, as those "
                        "controllers would after their clean-up)")
    p.add_argument("--controllers-file", type=Path, default=None, metavar="FILE")
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--steps", type=_count, default=DEFAULT_LIMIT, metavar="N",
                       help=f"text: show the first N steps (and N entries of each long list; "
                            f"default {DEFAULT_LIMIT}); -o json keeps every one")
    shown.add_argument("--all", dest="steps", action="store_const", const=None,
                       help="text: show every step and every entry")
    add_plan_flags(p)
    _source(p, namespaces=False)
    p = sub.add_parser("tree", help="the owner tree of an object, with each object's state",
                       formatter_class=HelpFormatter, epilog=examples(
                           "%(prog)s deployment/web -n shop",
                           "%(prog)s pod/web-7d9f8b-x2x4q -n shop --owners",
                           "%(prog)s deployment/web -n shop -o svg > tree.svg"))
    p.add_argument("target", nargs="+", metavar="KIND/NAME")
    p.add_argument("--owners", action="store_true", help="show owners (ancestors) instead")
    _source(p, namespaces=False)
    p = sub.add_parser("why", help="why an object is gone or going",
                       formatter_class=HelpFormatter, epilog=examples(
                           "%(prog)s pod/web-7d9f8b-x2x4q -n shop",
                           "%(prog)s configmap/settings -n shop --uid 5f0c...   one incarnation",
                           "%(prog)s deployment/web -n shop -o json"))
    p.add_argument("target", nargs="+", metavar="KIND/NAME")
    p.add_argument("--uid", default="", help="the object's uid (to pick one incarnation)")
    p.add_argument("--controllers-file", type=Path, default=None, metavar="FILE")
    p.add_argument("--audit-log", type=Path, default=None, metavar="FILE",
                   help="kube-apiserver's audit log (json format): who sent the DELETE")
    _source(p, namespaces=False)


async def run(args: argparse.Namespace, *, plan_factory: SimulationFactory | None = None,
              stdout: TextIO | None = None, stderr: TextIO | None = None,
              keep: list[object] | None = None) -> int:
    """``keep``: gets the session (its dump, inventories) not to free it (``tools.process``)."""
    out, err = stdout or sys.stdout, stderr or sys.stderr
    prog = f"{getattr(args, 'prog', 'kubegc')} {args.command}"
    commands: dict[str, Callable[[argparse.Namespace, Session], Awaitable[Report]]] = {
        "doctor": _doctor, "tree": _tree, "why": _why,
        "plan": lambda a, s: _plan(a, s, plan_factory)}
    try:
        # the doctor reads no more of a dump's objects than its checks need (``slim``)
        session = open_session(args, err, prepare=Slim() if args.command == "doctor"
                               else intern_common)
        try:
            report = await commands[args.command](args, session)
        finally:
            await session.close()
            if keep is not None:
                keep.append(session)
        _emit(report, args, out)
        if _fails(report, getattr(args, "fail_on", None)):
            return EXIT_FINDINGS
    except (ToolError, UnknownKind, GraphvizMissing, ValueError) as e:
        err.write(f"{prog}: {e}\n")
        return 1
    except StatusError as e:
        err.write(f"{prog}: Error from server ({e.reason}): {e.message}\n")
        return 1
    except (TimeoutError, aiohttp.ClientError, OSError) as e:
        err.write(f"{prog}: cannot reach the cluster: {e}\n")
        return 1
    return 0


def _fails(report: Report, fail_on: str | None) -> bool:
    """``--fail-on``: a finding at that severity or worse."""
    if fail_on is None or not isinstance(report, DoctorReport):
        return False
    worst = report.worst()
    return worst is not None and worst <= Severity[fail_on.upper()]


def _emit(report: Report, args: argparse.Namespace, out: TextIO) -> None:
    style = Style(color=use_color(out, args.color), width=terminal_width(out),
                  limit=getattr(args, "steps", DEFAULT_LIMIT))
    result = render(report, args.output, style=style)
    if isinstance(result, bytes):
        buffer = getattr(out, "buffer", None)
        if buffer is not None:
            buffer.write(result)
        else:
            out.write(result.decode())
    else:
        out.write(result)
    out.flush()


def _options(args: argparse.Namespace) -> DoctorOptions:
    mapping = ControllerMap()
    path = getattr(args, "controllers_file", None)
    if path is not None:
        try:
            mapping = ControllerMap.load(path)
        except (OSError, KeyError, TypeError, ValueError) as e:
            raise ToolError(f"cannot read controllers file {path}: {e}") from e
    return DoctorOptions(stuck_after=getattr(args, "stuck_after", DEFAULT_STUCK_AFTER),
                         mapping=mapping)


async def _doctor(args: argparse.Namespace, session: Session) -> Report:
    if args.target or args.filename:
        return await _permissions(args, session)
    if args.as_user or args.as_groups:
        raise ToolError("--as and --as-group ask about an object: give KIND/NAME or -f FILE")
    namespace = "" if args.all_namespaces else (args.namespace or "")
    inv = await session.inventory(namespace)
    if namespace and _namespace_missing(inv, namespace):
        raise ToolError(f'Error from server (NotFound): namespaces "{namespace}" not found')
    return diagnose(inv, _options(args))


async def _permissions(args: argparse.Namespace, session: Session) -> Report:
    if args.from_file:
        raise ToolError("KIND/NAME asks the cluster's authorizer: read a cluster "
                        "(--kubeconfig/--context), not a dump")
    if args.as_groups and not args.as_user:
        raise ToolError("--as-group needs --as USER")
    if args.target and args.filename:
        raise ToolError("give KIND/NAME or -f FILE, not both")
    resources = await session.client.discover()
    if args.filename:
        resource, obj = _manifest(args, resources, session.default_namespace)
    else:
        kind, name = split_target(args.target)
        resource = resolve_kind(resources, kind)
        namespace = (args.namespace or session.default_namespace) if resource.namespaced else ""
        obj = await session.client.get(resource.gvr, name, namespace=namespace)
    user = impersonated_user(args.as_user, args.as_groups) if args.as_user else None
    return await explain_permissions(session.client, resources, resource, obj, user=user,
                                     source=session.source)


def _manifest(args: argparse.Namespace, resources: list[APIResource], default_namespace: str
              ) -> tuple[APIResource, Obj]:
    """The object of ``-f FILE`` (one YAML or JSON document) and its resource."""
    try:
        text = sys.stdin.read() if args.filename == "-" else Path(args.filename).read_text()
        obj = yaml.safe_load(text)
    except (OSError, yaml.YAMLError) as e:
        raise ToolError(f"cannot read {args.filename}: {e}") from e
    if not isinstance(obj, dict) or not obj.get("kind") or not obj.get("apiVersion"):
        raise ToolError(f"{args.filename}: not a Kubernetes object (apiVersion and kind)")
    api_version, kind = str(obj["apiVersion"]), str(obj["kind"])
    found = [r for r in resources if r.api_version == api_version and r.kind == kind
             and "/" not in r.resource]
    if not found:
        raise ToolError(f'{args.filename}: no matches for kind "{kind}" in version '
                        f'"{api_version}"')
    meta = obj.setdefault("metadata", {})
    _, problems = well_formed([obj], datetime.now(UTC))
    if problems:  # the API server would refuse it: say why, as it would, in one line
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        first = problems[0]
        raise ToolError(f"{args.filename}: {first.field} {first.wrong}{more}")
    if found[0].namespaced:
        meta["namespace"] = meta.get("namespace") or args.namespace or default_namespace
    return found[0], obj


def _namespace_missing(inv: Inventory, namespace: str) -> bool:
    """The namespace is verifiably absent and nothing is left in it (a dump without
    Namespaces, or namespaces that could not be listed, prove nothing)."""
    return (inv.was_read("", "Namespace", "") and inv.find("", "Namespace", "", namespace) is None
            and not inv.in_namespace(namespace))


async def _target(args: argparse.Namespace, session: Session, *, whole_cluster: bool = False
                  ) -> tuple[APIResource, str, str, Inventory]:
    """The target's resource, name and namespace, and the inventory: the target's namespace
    (a Namespace: its content), or with ``whole_cluster`` every namespace."""
    kind, name = split_target(args.target)
    resource = resolve_kind(await session.client.discover(), kind)
    namespace = (args.namespace or session.default_namespace) if resource.namespaced else ""
    # a namespace's content is all in that namespace: no need to read the others
    scope = name if (resource.group, resource.kind) == ("", "Namespace") else namespace
    return resource, name, namespace, await session.inventory("" if whole_cluster else scope)


def _not_found(resource: APIResource, name: str) -> ToolError:
    group = f".{resource.group}" if resource.group else ""
    return ToolError(f'Error from server (NotFound): {resource.resource}{group} "{name}" not found')


async def _tree(args: argparse.Namespace, session: Session) -> Report:
    resource, name, namespace, inv = await _target(args, session)
    root = inv.find(resource.group, resource.kind, namespace, name)
    if root is None:
        raise _not_found(resource, name)
    return build_tree(inv, root, owners=args.owners, source=session.source)


async def _plan(args: argparse.Namespace, session: Session,
                factory: SimulationFactory | None) -> Report:
    if factory is None:
        raise ToolError("the planner needs a simulation: run it through `kubegc plan`")
    taint = split_taint(args)
    # the cascade may reach any namespace: -n only names the target's
    resource, name, namespace, inv = await _target(args, session, whole_cluster=True)
    target = inv.find(resource.group, resource.kind, namespace, name)
    if target is None:
        raise _not_found(resource, name)
    op = operation_for(args, inv, target, resource, taint)
    session.progress.say(f"simulating the {args.verb} on {len(inv.objects)} objects ...")
    try:
        return await plan_operation(inv, op, factory=factory, options=_options(args),
                                    horizon=args.horizon, assume_alive=not args.simulated_only)
    finally:
        session.progress.done()


async def _why(args: argparse.Namespace, session: Session) -> Report:
    kind, name = split_target(args.target)
    resource: APIResource | None
    try:
        resource = resolve_kind(await session.client.discover(), kind)
        kind = resource.kind
    except UnknownKind:
        # a kind that is no longer served (its CRD deleted) is explained only by the
        # records that name it; any other unknown kind is an error, as in tree and plan
        resource = None
        namespace = args.namespace or session.default_namespace
        recorded = await recorded_kind(session.client, kind, name, namespace)
        if recorded is None:
            raise
        kind = recorded
    namespaced = resource is None or resource.namespaced
    namespace = (args.namespace or session.default_namespace) if namespaced else ""
    inv = await session.inventory(namespace)
    audit = read_audit_log(args.audit_log) if args.audit_log is not None else None
    return await explain(session.client, inv, resource, kind=kind, name=name,
                         namespace=namespace, uid=args.uid, options=_options(args),
                         audit_log=audit)

