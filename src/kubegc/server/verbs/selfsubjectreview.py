"""POST of an ``authentication.k8s.io/v1 SelfSubjectReview``: who the server takes the
requester for (``kubectl auth whoami``), answered 201, nothing stored (cf.
pkg/registry/authentication/selfsubjectreview ``REST.Create``). The requester is the
request's user after impersonation, so ``kubectl auth whoami --as bob`` says bob."""

from __future__ import annotations

from typing import Any

from kubegc.api import errors
from kubegc.api.auth import UserInfo, request_user
from kubegc.api.clock import format_time
from kubegc.server.context import ServerContext, json_response
from kubegc.server.http import Request, Response
from kubegc.server.negotiation import decode_body

API_VERSION = "authentication.k8s.io/v1"
KIND = "SelfSubjectReview"


def user_info(user: UserInfo) -> dict[str, Any]:
    """``authenticationv1.UserInfo`` as Go encodes it (every field ``omitempty``): the
    SelfSubjectReview's and the TokenReview's."""
    info: dict[str, Any] = {"username": user.name, "uid": user.uid,
                            "groups": list(user.groups),
                            "extra": {key: list(values) for key, values in user.extra.items()}}
    return {k: v for k, v in info.items() if v}


async def create(ctx: ServerContext, request: Request) -> Response:
    if request.method != "POST":
        raise errors.StatusError(405, "MethodNotAllowed", "the server does not allow this "
                                 "method on the requested resource",
                                 group="authentication.k8s.io", kind="selfsubjectreviews")
    body = decode_body(await request.read(), request.headers.get("Content-Type", ""), KIND)
    if not isinstance(body, dict):
        raise errors.bad_request("the object provided is unrecognized (must be of type object)")
    errors.checked_kind(body, API_VERSION, KIND)
    user = request_user()
    if user is None:
        raise errors.bad_request("no user present on request")
    return json_response({
        "kind": KIND, "apiVersion": API_VERSION,
        "metadata": {"creationTimestamp": format_time(ctx.clock.now())},
        "status": {"userInfo": user_info(user)}}, 201)
