"""``POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token``: a TokenRequest answered
with a ServiceAccount token, 201, nothing stored (``registry.serviceaccount_token``)."""

from __future__ import annotations

from kubegc.api import errors
from kubegc.server.context import ServerContext, json_response
from kubegc.server.http import Request, Response
from kubegc.server.negotiation import decode_body
from kubegc.server.verbs.params import with_warnings


async def create(ctx: ServerContext, request: Request, namespace: str, name: str) -> Response:
    if request.method != "POST":
        raise errors.StatusError(405, "MethodNotAllowed", "the server does not allow this "
                                 "method on the requested resource", kind="serviceaccounts")
    body = decode_body(await request.read(), request.headers.get("Content-Type", ""),
                       "TokenRequest")
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be an object")
    warnings: list[str] = []
    answer = await ctx.registry.create_token(namespace, name, body, warnings=warnings)
    return with_warnings(json_response(answer, 201), warnings)
