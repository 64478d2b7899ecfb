"""The ``scale`` subresource (cf. the ``ScaleREST`` of pkg/registry/apps/deployment/storage
and its siblings): an ``autoscaling/v1`` Scale view of ``spec.replicas`` that
``kubectl scale`` (a PATCH) and autoscalers read and write."""

from __future__ import annotations

from typing import Any, ClassVar

import orjson

from kubegc.api import errors
from kubegc.api.resources import GroupVersionKind
from kubegc.api.types import Obj, clone
from kubegc.registry.fieldmanager import apply_patch
from kubegc.registry.generic.decoding import check_scale
from kubegc.registry.generic.patching import patch
from kubegc.registry.generic.rest import Getter, Patcher, Updater, WriteOptions
from kubegc.registry.generic.standard import StorageContext
from kubegc.registry.generic.target import Target

MERGE_PATCH = "application/merge-patch+json"


def format_selector(selector: Any) -> str:
    """``metav1.FormatLabelSelector`` (or a plain map's ``labels.SelectorFromSet``)."""
    if not isinstance(selector, dict):
        return ""
    if "matchLabels" not in selector and "matchExpressions" not in selector:
        return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))  # RC: a plain map
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        parts.append(_requirement(expr))
    return ",".join(parts)


def _requirement(expr: dict[str, Any]) -> str:
    key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
    if op == "In":
        return f"{key} in ({','.join(values)})"
    if op == "NotIn":
        return f"{key} notin ({','.join(values)})"
    return str(key) if op == "Exists" else f"!{key}"


def to_scale(obj: Obj) -> Obj:
    meta = obj["metadata"]
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return {
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion",
                                           "creationTimestamp") if k in meta},
        "spec": {"replicas": spec.get("replicas", 0)},
        "status": {"replicas": status.get("replicas", 0),
                   "selector": format_selector(spec.get("selector"))},
    }


class ScaleREST(Getter, Updater, Patcher):
    kind: ClassVar[GroupVersionKind | None] = GroupVersionKind("autoscaling", "v1", "Scale")

    def __init__(self, ctx: StorageContext) -> None:
        self.store = ctx.store

    async def get(self, t: Target, name: str) -> Obj:
        return to_scale(await self.store.get(t, name))

    async def update(self, t: Target, name: str, obj: Obj,
                     options: WriteOptions) -> tuple[Obj, bool]:
        current = await self.store.get(t, name)
        return await self._write(t, name, obj, "", options, current), False

    async def patch(self, t: Target, name: str, patch_type: str, body: bytes,
                    options: WriteOptions) -> tuple[Obj, bool]:
        current = await self.store.get(t, name)
        wanted = apply_patch(patch_type, to_scale(current), body, group="autoscaling",
                             kind="Scale")
        return await self._write(t, name, wanted, patch_type, options, current), False

    async def _write(self, t: Target, name: str, wanted: Any, patch_type: str,
                     options: WriteOptions, current: Obj) -> Obj:
        """Set ``spec.replicas`` of the object to the Scale ``wanted``'s."""
        if not isinstance(wanted, dict):
            raise errors.bad_request("the body of the request must be a Scale object")
        check_scale(wanted, patch_type)
        replicas = (wanted.get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or replicas < 0:
            raise errors.invalid("Scale", "autoscaling", name, [errors.field_error(
                "FieldValueInvalid", "spec.replicas", "must be greater than or equal to 0",
                replicas)])
        rv = (wanted.get("metadata") or {}).get("resourceVersion")
        if rv:  # an update of exactly the version read
            updated = clone(current)
            updated.setdefault("spec", {})["replicas"] = replicas
            updated["metadata"]["resourceVersion"] = rv
            obj, _ = await self.store.update(t, name, updated, dry_run=options.dry_run)
        else:
            body = orjson.dumps({"spec": {"replicas": replicas}})
            obj, _ = await patch(self.store, t, name, MERGE_PATCH, body,
                                 dry_run=options.dry_run)
        return to_scale(obj)
