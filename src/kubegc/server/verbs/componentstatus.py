"""GET and LIST of ``componentstatuses``: computed, not stored (cf.
pkg/registry/core/componentstatus, a ``Getter`` and ``Lister`` only — no watch, no
writes: 405).

kube-apiserver probes the scheduler, the controller manager and each etcd member. kubegc's
scheduler and controllers run in the server's own process: both are Healthy once its
controllers have synced (``ServerContext.ready``). No etcd member is listed, whatever the
storage. Every answer carries upstream's deprecation warning.
"""

from __future__ import annotations

from typing import Any

from kubegc.api import errors
from kubegc.registry import Target
from kubegc.server.context import ServerContext, json_response
from kubegc.server.http import Request, Response
from kubegc.server.negotiation import Shape, partial_metadata, partial_metadata_list, response_shape
from kubegc.server.verbs.get import table
from kubegc.server.verbs.params import flag, with_warnings

DEPRECATION = "v1 ComponentStatus is deprecated in v1.19+"
COMPONENTS = ("controller-manager", "scheduler")


def component_status(name: str, healthy: bool) -> dict[str, Any]:
    condition = {"type": "Healthy", "status": "True" if healthy else "False",
                 "message": "ok" if healthy else "", "error": "" if healthy else (
                     "kubegc's controllers have not synced yet")}
    return {"kind": "ComponentStatus", "apiVersion": "v1",
            "metadata": {"name": name, "creationTimestamp": None},
            "conditions": [{k: v for k, v in condition.items() if v}]}


async def serve(ctx: ServerContext, request: Request, t: Target, name: str) -> Response:
    if request.method not in ("GET", "HEAD") or flag(request, "watch"):
        raise errors.StatusError(405, "MethodNotAllowed",
                                 "the server does not allow this method on the requested "
                                 "resource", group="", kind="componentstatuses")
    healthy = ctx.ready()
    items = [component_status(n, healthy) for n in COMPONENTS]
    shape = response_shape(request.headers.get("Accept", ""))
    if name:
        found = [i for i in items if i["metadata"]["name"] == name]
        if not found:
            raise errors.not_found(t.gr, name)
        items = found
    listed = {"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {},
              "items": items}
    body: Any
    if shape is Shape.TABLE:
        body = table(ctx, request, t, items, {})
    elif shape is Shape.METADATA:
        body = partial_metadata(items[0]) if name else partial_metadata_list(listed)
    else:
        body = items[0] if name else listed
    return with_warnings(json_response(body), [DEPRECATION])
