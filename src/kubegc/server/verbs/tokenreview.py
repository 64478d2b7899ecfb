"""``POST /apis/authentication.k8s.io/v1/tokenreviews``: who a bearer token authenticates
as, for which audiences, or why not; 201, nothing stored (cf.
pkg/registry/authentication/tokenreview ``REST.Create``).

The token is authenticated by this server's own authenticators (``ctx.authentication``:
the admin token, the token file, ServiceAccount tokens), for ``spec.audiences`` or, when
none are given, the API audiences.
"""

from __future__ import annotations

from typing import Any

from kubegc.api import errors
from kubegc.registry.typed import decode_typed, definition_type
from kubegc.registry.typed.messages import cannot_be_handled
from kubegc.server.context import ServerContext, json_response
from kubegc.server.http import Request, Response
from kubegc.server.negotiation import decode_body
from kubegc.server.verbs.selfsubjectreview import user_info

KIND = "TokenReview"
API_VERSION = "authentication.k8s.io/v1"


def _review(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be an object")
    failure = decode_typed(body, definition_type(f"io.k8s.api.authentication.v1.{KIND}"))
    if failure is not None:
        raise cannot_be_handled(KIND, "v1", failure.message)
    return body


async def create(ctx: ServerContext, request: Request) -> Response:
    body = _review(decode_body(await request.read(),
                               request.headers.get("Content-Type", ""), KIND))
    spec = body.get("spec") or {}
    token = spec.get("token") or ""
    if not token:
        raise errors.bad_request("token is required for TokenReview in authentication")
    audiences = tuple(spec.get("audiences") or ())
    result = await ctx.authentication.authenticate_token(token, audiences or None)
    status: dict[str, Any] = {}
    if result.response is not None:
        status["authenticated"] = True
        status["user"] = user_info(result.response.user)
        if result.response.audiences:
            status["audiences"] = list(result.response.audiences)
    else:
        status["user"] = {}
        status["error"] = result.error
    metadata = dict(body.get("metadata") or {})
    metadata.setdefault("creationTimestamp", None)
    return json_response({"kind": KIND, "apiVersion": API_VERSION, "metadata": metadata,
                          "spec": spec, "status": status}, 201)
