"""``kubegc plan VERB``'s arguments: the verbs (``PLAN_VERBS``), their flags, and the
``Operation`` each one plans (``operation_for``); ``kubegc.tools.commands`` runs it.

The verbs and flags are kubectl's: ``delete`` (``--cascade``), ``evict`` (the Eviction
``kubectl drain`` sends for each pod), ``drain`` (``--ignore-daemonsets``,
``--delete-emptydir-data``, ``--force``, ``--timeout``), ``taint`` (``key[=value]:Effect``)
and ``stop-kubelet`` (a lost node: kubegc's ``kubegc.io/kubelet: stopped``).
"""

from __future__ import annotations

import argparse

from kubegc.api.meta import DeletionPropagation
from kubegc.api.types import Obj
from kubegc.client.interface import APIResource
from kubegc.tools.flags import parse_duration
from kubegc.tools.inventory import Inventory
from kubegc.tools.plan.drain import DrainOperation
from kubegc.tools.plan.drain_filters import DrainOptions
from kubegc.tools.plan.lost_node import StopKubeletOperation
from kubegc.tools.plan.operations import (
    DeleteOperation,
    EvictOperation,
    Operation,
    TaintOperation,
    parse_taint,
)
from kubegc.tools.session import ToolError

PLAN_VERBS = ("delete", "evict", "drain", "taint", "stop-kubelet")
CASCADES = {"background": DeletionPropagation.BACKGROUND,
            "foreground": DeletionPropagation.FOREGROUND, "orphan": DeletionPropagation.ORPHAN}
#: the kind each verb acts on (delete: any)
_KINDS = {"evict": "Pod", "drain": "Node", "taint": "Node", "stop-kubelet": "Node"}


def add_plan_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("drain (as kubectl drain)")
    g.add_argument("--ignore-daemonsets", action="store_true",
                   help="skip DaemonSet-managed pods (without it, drain refuses)")
    g.add_argument("--delete-emptydir-data", action="store_true",
                   help="evict pods with emptyDir volumes too (without it, drain refuses)")
    g.add_argument("--force", action="store_true",
                   help="evict pods that declare no controller too (without it, drain refuses)")
    g.add_argument("--timeout", type=parse_duration, default=0.0, metavar="DURATION",
                   help="give up retrying refused evictions after this long (simulated; "
                        "default 0: kubectl retries for ever)")


def split_taint(args: argparse.Namespace) -> str:
    """``plan taint node/N SPEC``: the taint is the last argument."""
    if args.verb != "taint":
        return ""
    if len(args.target) < 2:
        raise ToolError("plan taint needs a taint: plan taint node/NAME key[=value]:Effect")
    spec = str(args.target[-1])
    args.target = args.target[:-1]
    return spec


def operation_for(args: argparse.Namespace, inv: Inventory, target: Obj,
                  resource: APIResource, taint: str) -> Operation:
    kind = _KINDS.get(args.verb)
    if kind is not None and (resource.group, resource.kind) != ("", kind):
        raise ToolError(f"plan {args.verb} acts on a {kind}, not a {resource.kind}")
    if args.verb == "evict":
        return EvictOperation(target)
    if args.verb == "drain":
        return DrainOperation(target, inv=inv, options=DrainOptions(
            ignore_daemonsets=args.ignore_daemonsets,
            delete_emptydir_data=args.delete_emptydir_data, force=args.force,
            timeout=args.timeout))
    if args.verb == "taint":
        return TaintOperation(target, taint=parse_taint(taint))
    if args.verb == "stop-kubelet":
        return StopKubeletOperation(target)
    return DeleteOperation(target, resource=resource, propagation=CASCADES[args.cascade])
