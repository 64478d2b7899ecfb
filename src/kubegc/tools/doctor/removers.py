"""A finalizer and who removes it (``finalizers.Remover``), in the doctor's words: the
cause it is of what it holds (``remover_cause``), what happens next (``remover_next``) and
the safe fix (``finalizer_fix``), which never suggests removing a finalizer by hand without
saying what clean-up that skips. Shared by stuck deletions (stuck.py) and stuck
namespaces (namespaces.py).
"""

from __future__ import annotations

from datetime import datetime

from kubegc.api.meta import (
    FINALIZER_DELETE_DEPENDENTS,
    FINALIZER_ORPHAN_DEPENDENTS,
    deletion_timestamp_of,
)
from kubegc.api.types import Obj
from kubegc.tools.doctor.context import remove_finalizer_command
from kubegc.tools.doctor.findings import Cause, CauseDetail
from kubegc.tools.finalizers import HOW_TO_NAME_IT, UNKNOWN_REMOVER, Alive, Remover
from kubegc.tools.model import ObjRef, timestamp


def grace_end(obj: Obj, now: datetime | None) -> tuple[str, bool] | None:
    """A terminating pod's grace period end (its deletionTimestamp) and whether it is still
    ahead (None: not known). The kubelet stops the containers by then (preStop hooks and
    TERM included), so that is when the wait ends at the latest."""
    ts = deletion_timestamp_of(obj)
    if not ts or now is None:
        return None
    when = timestamp(ts)
    return (ts, when > now) if when is not None else None


def remover_cause(obj: Obj, r: Remover, now: datetime | None = None
                  ) -> tuple[Cause, CauseDetail]:
    """A finalizer (not the garbage collector's), or a pod's graceful termination, as the
    cause of what it holds; the same finalizer and remover on many objects is one cause.
    A pod inside its grace period on a node whose kubelet is alive only waits: until its
    deletionTimestamp at the latest (the latest of the group's pods, ``CauseDetail.ends``)."""
    ref = ObjRef.of(obj)
    dead = r.alive is Alive.NO
    end = grace_end(obj, now) if r.finalizer.startswith("(") else None
    title = r.alive_at(now, facts=False)
    if end is not None and end[1] and r.alive is Alive.YES:
        return Cause(f"graceful termination inside the grace period: {r.who} ({title})"), \
            CauseDetail([f"{r.who} stops the containers (preStop hooks, TERM) within their "
                         f"grace period while it runs ({r.alive_at(now)}): gone by {end[0]} "
                         "at the latest"],
                        [f"wait: ends by {end[0]} (the end of the grace period)"],
                        at=[ref], ends=end[0])
    if end is not None and r.alive is Alive.YES:  # its grace period is over
        return Cause(f"graceful termination past its grace period: {r.who} ({title})"), \
            CauseDetail([f"the grace period ended at {end[0]}: {r.who} ({r.alive_at(now)}) "
                         "kills the containers that are left, so the pod should go within "
                         "seconds"],
                        [f"wait a few seconds; if it stays, read the logs of {r.who} (its "
                         "node is Ready, so the kubelet should have stopped it)"], at=[ref],
                        commands=[f"kubectl delete pod {ref.name} -n {ref.namespace} "
                                  "--grace-period=0 --force"],
                        by_hand=f"forcing a pod out skips {r.skips}")
    if r.finalizer.startswith("("):  # a pod's graceful termination: the kubelet
        return Cause(f"graceful termination: {r.who} ({title})"), CauseDetail(
            [f"its pods stay Terminating until {r.who} has stopped their containers"
             + (f": it was {r.alive_at(now)}" if dead else
                f" ({r.alive_at(now)})")],
            [f"bring {r.who} back (if the node is gone for good, the pod garbage collector "
             "force-deletes its pods)"], dead=dead, at=[ref],
            commands=[f"kubectl delete pod {ref.name} -n {ref.namespace} --grace-period=0 "
                      "--force"], by_hand=f"forcing a pod out skips {r.skips}")
    what = f"finalizer {r.finalizer}, removed by {r.who} ({title})"
    if r.alive is Alive.YES:
        return Cause(what), CauseDetail(
            [f"{r.who} removes it {r.removes_when} (it was {r.alive_at(now)})"],
            [f"wait: ends when {r.who} removes it {r.removes_when}; if it stays, read the "
             f"logs of {r.who}"], at=[ref])
    if r.who == UNKNOWN_REMOVER:
        advice = (f"find the controller that owns {r.finalizer} and make sure it runs "
                  f"({HOW_TO_NAME_IT}, and the doctor checks it)")
        when = "only if no controller will ever remove it"
    else:
        advice = f"start (or scale up) {r.who}: it does its clean-up and removes the finalizer"
        when = "only if it is gone for good"
    nexts = (f"the objects stay Terminating until {r.who} runs again (it was "
             f"{r.alive_at(now)})" if dead else
             "the objects stay Terminating until the controller that owns this finalizer "
             "removes it; nothing shows whether it runs")
    return Cause(what), CauseDetail(
        [nexts], [advice], dead=dead, at=[ref],
        commands=[remove_finalizer_command(obj, r.finalizer)],
        by_hand=f"{when}, remove it by hand; this skips {r.skips}")


def remover_next(obj: Obj, r: Remover, now: datetime | None = None) -> list[str]:
    ref = ObjRef.of(obj)
    if r.alive is Alive.YES:
        return [f"{r.finalizer}: {r.who} removes it {r.removes_when} (it was "
                f"{r.alive_at(now)})"]
    if r.alive is Alive.NO:
        return [f"{r.finalizer}: {r.who} was {r.alive_at(now)}, so {ref.short} stays "
                "Terminating until it runs again"]
    if r.who == UNKNOWN_REMOVER:
        return [f"{r.finalizer}: {ref.short} stays Terminating until the controller that owns "
                "this finalizer removes it; nothing names that controller, so nothing shows "
                "whether it runs"]
    return [f"{r.finalizer}: {ref.short} stays Terminating until {r.who} removes it; "
            f"{r.alive_at(now)}"]


def finalizer_fix(obj: Obj, r: Remover, now: datetime | None = None) -> str | None:
    """The safe fix for one finalizer (None for the garbage collector's own, which the
    blocking chain explains)."""
    if r.finalizer in (FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN_DEPENDENTS):
        return None
    end = grace_end(obj, now) if r.finalizer.startswith("(") else None
    if end is not None and end[1] and r.alive is Alive.YES:
        return (f"wait: ends by {end[0]} (the end of the grace period; {r.who} was "
                f"{r.alive_at(now)})")
    if r.alive is Alive.YES:
        return (f"{r.finalizer}: wait: ends when {r.who} removes it {r.removes_when} (it was "
                f"{r.alive_at(now)}); if it stays, read the logs of {r.who}")
    if r.finalizer.startswith("("):
        ref = ObjRef.of(obj)
        return (f"bring {r.who} back (if the node is gone for good, the pod garbage collector "
                "force-deletes its pods). Forcing it now, `kubectl delete pod "
                f"{ref.name} -n {ref.namespace} --grace-period=0 --force`, skips {r.skips}")
    if r.who == UNKNOWN_REMOVER:
        return (f"{r.finalizer}: find the controller that owns this finalizer and make sure it "
                f"runs ({HOW_TO_NAME_IT}, and the doctor checks it). Only if no controller will "
                f"ever remove it, remove it by hand: "
                f"{remove_finalizer_command(obj, r.finalizer)} — this skips {r.skips}")
    return (f"{r.finalizer}: start (or scale up) {r.who}: it does its clean-up and removes "
            f"the finalizer. Only if it is gone for good, remove the finalizer by hand: "
            f"{remove_finalizer_command(obj, r.finalizer)} — this skips {r.skips}")
