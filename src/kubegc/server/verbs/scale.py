"""The ``scale`` subresource: an ``autoscaling/v1`` Scale view of ``spec.replicas``
(kubectl scale PATCHes it and needs a Scale back)."""

from __future__ import annotations

from typing import Any

import orjson

from kubegc.api import errors
from kubegc.api.types import Obj, clone
from kubegc.registry import Target
from kubegc.registry.decoding import check_scale
from kubegc.registry.fieldmanager import apply_patch
from kubegc.server.context import ServerContext, json_response
from kubegc.server.http import Request, Response
from kubegc.server.negotiation import decode_body
from kubegc.server.verbs.params import dry_run


def format_selector(selector: Any) -> str:
    if not isinstance(selector, dict):
        return ""
    if "matchLabels" not in selector and "matchExpressions" not in selector:
        return ",".join(f"{k}={v}" for k, v in sorted(selector.items()))  # RC: a plain map
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


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


async def scale(ctx: ServerContext, request: Request, t: Target, name: str) -> Response:
    if request.method == "GET":
        return json_response(to_scale(await ctx.registry.get(t, name)))
    if request.method not in ("PUT", "PATCH"):
        raise errors.method_not_supported(t.gr, request.method)
    body = await request.read()
    content_type = request.headers.get("Content-Type", "").split(";")[0].strip()
    current = await ctx.registry.get(t, name)
    if request.method == "PUT":
        wanted = decode_body(body, content_type, "Scale")
    else:
        wanted = apply_patch(content_type, to_scale(current), body, group="autoscaling",
                             kind="Scale")
    if not isinstance(wanted, dict):
        raise errors.bad_request("the body of the request must be a Scale object")
    check_scale(wanted, "" if request.method == "PUT" else content_type)
    replicas = (wanted.get("spec") or {}).get("replicas")
    if not isinstance(replicas, int) or replicas < 0:
        raise errors.invalid("Scale", "autoscaling", name, [errors.field_error(
            "FieldValueInvalid", "spec.replicas", "must be greater than or equal to 0",
            replicas)])
    updated = clone(current)
    updated.setdefault("spec", {})["replicas"] = replicas
    rv = (wanted.get("metadata") or {}).get("resourceVersion")
    if rv:
        updated["metadata"]["resourceVersion"] = rv
    patch_body = orjson.dumps({"spec": {"replicas": replicas}})
    if rv:
        obj, _ = await ctx.registry.update(t, name, updated, dry_run=dry_run(request))
    else:
        obj, _ = await ctx.registry.patch(t, name, "application/merge-patch+json", patch_body,
                                          dry_run=dry_run(request))
    return json_response(to_scale(obj))
