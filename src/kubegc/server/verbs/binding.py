"""POST of a ``Binding`` (``/api/v1/namespaces/<ns>/bindings`` and
``.../pods/<name>/binding``): 201 with a Success Status, nothing stored
(``registry.binding``)."""

from __future__ import annotations

from kubegc.api import errors
from kubegc.registry.binding import bind
from kubegc.server.context import ServerContext, json_response
from kubegc.server.http import Request, Response
from kubegc.server.negotiation import decode_body
from kubegc.server.verbs.params import dry_run


async def create(ctx: ServerContext, request: Request, namespace: str,
                 pod: str = "") -> Response:
    if request.method != "POST":
        raise errors.StatusError(405, "MethodNotAllowed", "the server does not allow this "
                                 "method on the requested resource", kind="bindings")
    body = decode_body(await request.read(), request.headers.get("Content-Type", ""))
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be an object")
    meta = body.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise errors.bad_request("metadata must be an object")
    if pod and meta.get("name", pod) != pod:
        raise errors.bad_request("name in URL does not match name in Binding object")
    meta.setdefault("name", pod)
    if meta.get("namespace") not in (None, "", namespace):
        raise errors.bad_request("the namespace of the provided object does not match the "
                                 "namespace sent on the request")
    pods = ctx.registry.target("", "v1", "pods", namespace)
    await bind(ctx.registry.store, pods, body, dry_run=dry_run(request))
    return json_response({"kind": "Status", "apiVersion": "v1", "metadata": {},
                          "status": "Success", "code": 201}, 201)
