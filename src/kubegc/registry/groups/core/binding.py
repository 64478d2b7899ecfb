"""Binding a pod to a node: ``POST .../bindings`` and ``.../pods/<name>/binding`` (cf.
pkg/registry/core/pod/storage ``BindingREST.Create`` / ``setPodNodeAndMetadata``).

A binding is not stored: it sets the pod's ``spec.nodeName`` (with the binding's
annotations and labels and a ``PodScheduled=True`` condition) in one compare-and-swap
write, with the binding's uid and resourceVersion as preconditions. A pod that is being
deleted, already bound or gated cannot be bound: 409 on ``pods/binding``, as upstream
wraps the refusal.
"""

from __future__ import annotations

from typing import Any, ClassVar

from kubegc.api import errors
from kubegc.api.clock import format_time
from kubegc.api.errors import GroupResource, field_error
from kubegc.api.meta import is_being_deleted
from kubegc.api.resources import GroupVersionKind
from kubegc.api.types import Obj
from kubegc.registry.generic.rest import Creater, NamedCreater, Resource, WriteOptions
from kubegc.registry.generic.standard import StorageContext
from kubegc.registry.generic.store import Store
from kubegc.registry.generic.target import Target

_BINDING = GroupResource("", "pods/binding")


def validate_binding(binding: Obj) -> list[errors.StatusCause]:
    """``ValidatePodBinding``: the target is a Node (or kindless), named."""
    target = _map(binding, "target")
    causes = []
    if target.get("kind") not in (None, "", "Node"):
        causes.append(field_error("FieldValueNotSupported", "target.kind",
                                  'supported values: "Node"', target["kind"]))
    if not target.get("name"):
        causes.append(field_error("FieldValueRequired", "target.name", ""))
    return causes


async def bind(store: Store, pods: Target, binding: Obj, *, dry_run: bool = False) -> None:
    """Assign the pod ``binding.metadata.name`` to ``binding.target.name``."""
    meta = _map(binding, "metadata")
    name = str(meta.get("name") or "")
    causes = validate_binding(binding)
    if causes:
        raise errors.invalid("Binding", "", name, causes)
    node = str(_map(binding, "target")["name"])
    now = format_time(store.clock.now())

    async def update(pod: Obj) -> Obj:
        pod_meta = pod["metadata"]
        for key in ("uid", "resourceVersion"):
            if meta.get(key) and meta[key] != pod_meta.get(key):
                raise errors.conflict(_BINDING, name, f"Precondition failed: {key} in "
                                      f"precondition: {meta[key]}, {key} in object meta: "
                                      f"{pod_meta.get(key)}")
        spec = pod.setdefault("spec", {})
        refusal = _refusal(pod, spec)
        if refusal:
            raise errors.conflict(_BINDING, name, refusal)
        spec["nodeName"] = node
        for key in ("annotations", "labels"):
            if meta.get(key):
                pod_meta.setdefault(key, {}).update(meta[key])
        _set_scheduled(pod.setdefault("status", {}), now)
        return pod

    await store.guaranteed_update(pods, name, update, dry_run=dry_run)


def _map(obj: Obj, key: str) -> dict[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def _refusal(pod: Obj, spec: dict[str, Any]) -> str:
    name = pod["metadata"].get("name", "")
    if is_being_deleted(pod):
        return f"pod {name} is being deleted, cannot be assigned to a host"
    if spec.get("nodeName"):
        return f'pod {name} is already assigned to node "{spec["nodeName"]}"'
    if spec.get("schedulingGates"):
        return f"pod {name} has non-empty .spec.schedulingGates"
    return ""


def _set_scheduled(status: dict[str, Any], now: str) -> None:
    """``UpdatePodCondition`` with ``PodScheduled=True``."""
    conditions = status.setdefault("conditions", [])
    for condition in conditions:
        if condition.get("type") == "PodScheduled":
            if condition.get("status") != "True":
                condition.update(status="True", lastTransitionTime=now)
            return
    conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                       "lastTransitionTime": now})


def _bound(binding: Any, namespace: str, pod: str = "") -> Obj:
    """The Binding of a request, its name checked against the URL's pod (if any)."""
    if not isinstance(binding, dict):
        raise errors.bad_request("the body of the request must be an object")
    meta = binding.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise errors.bad_request("metadata must be an object")
    if pod and meta.get("name", pod) != pod:
        raise errors.bad_request("name in URL does not match name in Binding object")
    meta.setdefault("name", pod)
    if meta.get("namespace") not in (None, "", namespace):
        raise errors.bad_request("the namespace of the provided object does not match the "
                                 "namespace sent on the request")
    return binding


#: what a binding answers: upstream's ``&metav1.Status{Status: StatusSuccess}``, sent 201
CREATED: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                "code": 201}


class BindingREST(NamedCreater):
    """``POST .../pods/<name>/binding`` (upstream's ``BindingREST``)."""

    kind: ClassVar[GroupVersionKind | None] = GroupVersionKind("", "v1", "Binding")

    def __init__(self, ctx: StorageContext) -> None:
        self.store = ctx.store

    async def create_named(self, t: Target, name: str, obj: Obj, options: WriteOptions) -> Obj:
        await bind(self.store, t, _bound(obj, t.namespace, name), dry_run=options.dry_run)
        return dict(CREATED)


class LegacyBindingREST(Creater):
    """``POST .../namespaces/<ns>/bindings`` (upstream's ``LegacyBindingREST``): a binding
    of the pod its metadata names."""

    def __init__(self, ctx: StorageContext, pods: Resource) -> None:
        self.store = ctx.store
        self.pods = pods

    async def create(self, t: Target, obj: Obj, options: WriteOptions) -> Obj:
        pods = Target(self.pods.info, self.pods.strategy, "v1", t.namespace)
        await bind(self.store, pods, _bound(obj, t.namespace), dry_run=options.dry_run)
        return dict(CREATED)
