"""Causes that are held by others, linked up to what a person can act on.

A CustomResourceDefinition being deleted keeps ``customresourcecleanup.apiextensions.k8s.io``
while the API server deletes its instances and waits until they are gone (upstream's
``CRDFinalizer.sync`` and ``deleteInstances``, staging/src/k8s.io/apiextensions-apiserver/
pkg/controller/finalizer/crd_finalizer.go: condition ``Terminating``, reason
``InstanceDeletionInProgress``). Its remover, the API server, is alive; what holds it is an
instance's finalizer that nobody removes. So the CRD's causes are its instances' causes
(the same ``Cause`` as the instances' own findings, so ``causes.root_causes`` shows one
root cause holding both), and its fix names the instance and the instance's fix, never
"nothing to do but wait".
"""

from __future__ import annotations

from kubegc.api.meta import GC_FINALIZERS, finalizers_of
from kubegc.api.types import Obj
from kubegc.tools.doctor.context import Context
from kubegc.tools.doctor.findings import Cause, CauseDetail
from kubegc.tools.doctor.removers import finalizer_fix, remover_cause
from kubegc.tools.model import ObjRef

CRD_CLEANUP = "customresourcecleanup.apiextensions.k8s.io"
#: at most this many holders are named in a fix
SHOWN = 5


def is_crd(obj: Obj) -> bool:
    return (obj.get("kind") == "CustomResourceDefinition"
            and str(obj.get("apiVersion") or "").startswith("apiextensions.k8s.io/"))


def crd_kind(crd: Obj) -> tuple[str, str]:
    spec = crd.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    names = spec.get("names")
    names = names if isinstance(names, dict) else {}
    return str(spec.get("group") or ""), str(names.get("kind") or "")


def crd_instances(ctx: Context, crd: Obj) -> list[Obj]:
    group, kind = crd_kind(crd)
    return ctx.inv.of_kind(group, kind) if kind else []


def crd_holders(ctx: Context, crd: Obj) -> list[Obj]:
    """The CRD's instances with a finalizer of their own (the garbage collector's included:
    an instance deleted in the foreground waits for its dependents)."""
    if CRD_CLEANUP not in finalizers_of(crd):
        return []
    return sorted((o for o in crd_instances(ctx, crd) if finalizers_of(o)), key=ObjRef.of)


def crd_unread(ctx: Context, crd: Obj) -> bool:
    """Whether the inventory may lack the CRD's instances (a dump without them)."""
    group, kind = crd_kind(crd)
    return bool(kind) and not ctx.inv.may_hold(group, kind)


def unread_instances_cause(ctx: Context, crd: Obj) -> tuple[Cause, CauseDetail] | None:
    """A CRD waiting for its instances, read where they may be missing (a dump without
    them): what holds it cannot be told — said so, never "wait"."""
    if CRD_CLEANUP not in finalizers_of(crd) or crd_holders(ctx, crd) or not crd_unread(
            ctx, crd):
        return None
    ref = ObjRef.of(crd)
    group, kind = crd_kind(crd)
    where = "not in the dump" if ctx.inv.dump else "not read"
    return Cause(f"CRD whose instances are {where}", ref), CauseDetail(
        [f"the API server deletes the {kind}.{group} instances and waits until they are gone; "
         f"they are {where}, so whether one is held by a finalizer cannot be told"],
        [f"read the cluster itself (or a dump with the {kind}.{group} objects) to see which "
         "instance holds it: kubectl get "
         f"{kind.lower()}.{group} -A -o custom-columns=NAME:.metadata.name,"
         "NAMESPACE:.metadata.namespace,FINALIZERS:.metadata.finalizers"], at=[ref])


def finalizer_causes(ctx: Context, holders: list[Obj]) -> dict[Cause, CauseDetail]:
    """The causes of the holders' own finalizers (the GC's excepted), merged: the same as
    those objects' own findings give."""
    out: dict[Cause, CauseDetail] = {}
    for obj in holders:
        for r in ctx.removers(obj, skip=GC_FINALIZERS):
            cause, detail = remover_cause(obj, r, ctx.inv.now)
            if cause in out:
                out[cause].merge(detail)
            else:
                out[cause] = detail.copy()
    return out


def holder_causes(ctx: Context, holders: list[Obj]) -> dict[Cause, CauseDetail]:
    """What holds the holders: their own finalizers' causes (as their own findings say)."""
    out = finalizer_causes(ctx, holders)
    for obj in holders:
        if not any(f not in GC_FINALIZERS for f in finalizers_of(obj)):
            ref = ObjRef.of(obj)
            out[Cause("instance deleting its own dependents", ref)] = CauseDetail(
                [f"{ref.short} waits for the garbage collector (see its own finding)"],
                [f"see the finding of {ref}: what holds it holds the CRD"], at=[ref])
    return out


def crd_next(ctx: Context, crd: Obj) -> list[str]:
    holders = crd_holders(ctx, crd)
    if not holders:
        return []
    return [f"{CRD_CLEANUP}: the API server has deleted its instances and waits until they "
            f"are gone; {_names(holders)} still "
            + ("has" if len(holders) == 1 else "have")
            + " finalizers, so the CRD stays Terminating (InstanceDeletionInProgress) until "
            "they are removed"]


def crd_fix(ctx: Context, crd: Obj) -> list[str]:
    """The CRD's fix: its holders' fixes, each prefixed with the chain."""
    out = []
    name = ObjRef.of(crd).short
    for obj in crd_holders(ctx, crd)[:SHOWN]:
        ref = ObjRef.of(obj)
        fixes = [text for r in ctx.removers(obj, skip=GC_FINALIZERS)
                 if (text := finalizer_fix(obj, r, ctx.inv.now))]
        for text in fixes or [f"see the finding of {ref}: it waits for its dependents"]:
            out.append(f"{name} waits for its instance {ref} ({', '.join(finalizers_of(obj))})"
                       f": {text}")
    return out


def _names(objs: list[Obj]) -> str:
    shown = ", ".join(str(ObjRef.of(o)) for o in objs[:SHOWN])
    return shown + (f" and {len(objs) - SHOWN} more" if len(objs) > SHOWN else "")
