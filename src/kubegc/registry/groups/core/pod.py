"""The pod storage (cf. pkg/registry/core/pod): the pod strategy (graceful deletion,
``PrepareForCreate``'s Pending phase and QoS class) and ``pods/log``. The ``binding``
subresource is ``binding.BindingREST``; the kubelet simulator, not the storage, runs the
pods."""

from __future__ import annotations

from typing import Any

from kubegc.api.types import Obj
from kubegc.registry.generic.rest import Connecter, Raw
from kubegc.registry.generic.standard import StorageContext
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.generic.target import Target


def _pod_create(obj: Obj) -> None:
    obj["status"] = {"phase": "Pending", "qosClass": qos_class(obj)}


def qos_class(pod: Obj) -> str:
    """``GetPodQOS``: Guaranteed when every container limits cpu and memory and requests
    what it limits, BestEffort when none requests or limits anything, else Burstable."""
    containers = (pod.get("spec") or {}).get("containers") or []
    requests_any = False
    guaranteed = bool(containers)
    for c in containers:
        res = c.get("resources") or {}
        limits, requests = res.get("limits") or {}, res.get("requests") or {}
        if limits or requests:
            requests_any = True
        limited = bool(limits.get("cpu") and limits.get("memory"))
        if not limited or any(requests.get(k, limits.get(k)) != limits.get(k)
                              for k in ("cpu", "memory")):
            guaranteed = False
    if guaranteed:
        return "Guaranteed"
    return "Burstable" if requests_any else "BestEffort"


def strategy(**more: Any) -> Strategy:
    """The pod strategy (``more``: its validation and defaulting)."""
    return Strategy(graceful=True, tracks_generation=True, prepare_for_create=_pod_create,
                    return_deleted_object=True, **more)


class LogREST(Connecter):
    """``pods/<name>/log``: kubegc runs no containers, so there is no log to stream; the
    answer says so (upstream's ``LogREST`` streams the kubelet's)."""

    def __init__(self, ctx: StorageContext) -> None:
        self.store = ctx.store

    async def connect(self, t: Target, name: str) -> Raw:
        obj = await self.store.get(t, name)
        text = f"(kubegc simulates pod {obj['metadata']['name']}: there is no container log)\n"
        return Raw(text.encode())
