"""The authentication.k8s.io group (cf. pkg/registry/authentication): create-only
reviews, answered and not stored — ``SelfSubjectReview`` (who the requester is, ``kubectl
auth whoami``) and ``TokenReview`` (who a token is). The ServiceAccount ``token``
subresource is the core group's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubegc.api import errors
from kubegc.api.auth import UserInfo, request_user
from kubegc.api.authenticator import TokenAuthenticator
from kubegc.api.clock import Clock, format_time
from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.registry.generic.rest import Creater, Resource, WriteOptions
from kubegc.registry.generic.target import Target
from kubegc.registry.typed import decode_typed, definition_type
from kubegc.registry.typed.messages import cannot_be_handled

GROUP = "authentication.k8s.io"
API_VERSION = f"{GROUP}/v1"


def user_info(user: UserInfo) -> dict[str, Any]:
    """``authenticationv1.UserInfo`` as Go encodes it (every field ``omitempty``): the
    SelfSubjectReview's and the TokenReview's."""
    info: dict[str, Any] = {"username": user.name, "uid": user.uid,
                            "groups": list(user.groups),
                            "extra": {key: list(values) for key, values in user.extra.items()}}
    return {k: v for k, v in info.items() if v}


class SelfSubjectReviewREST(Creater):
    """Who the server takes the requester for (``REST.Create`` of
    pkg/registry/authentication/selfsubjectreview): the request's user after
    impersonation, so ``kubectl auth whoami --as bob`` says bob."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    async def create(self, t: Target, obj: Obj, options: WriteOptions) -> Obj:
        if not isinstance(obj, dict):
            raise errors.bad_request(
                "the object provided is unrecognized (must be of type object)")
        errors.checked_kind(obj, API_VERSION, t.info.kind)
        user = request_user()
        if user is None:
            raise errors.bad_request("no user present on request")
        return {"kind": t.info.kind, "apiVersion": API_VERSION,
                "metadata": {"creationTimestamp": format_time(self.clock.now())},
                "status": {"userInfo": user_info(user)}}


class TokenReviewREST(Creater):
    """Who a bearer token authenticates as, for which audiences, or why not (``REST.Create``
    of pkg/registry/authentication/tokenreview): the server's own authenticators (the
    admin token, the token file, ServiceAccount tokens) answer, for ``spec.audiences`` or,
    when none are given, the API audiences."""

    def __init__(self, authenticator: Callable[[], TokenAuthenticator | None]) -> None:
        self.authenticator = authenticator

    async def create(self, t: Target, obj: Obj, options: WriteOptions) -> Obj:
        if not isinstance(obj, dict):
            raise errors.bad_request("the body of the request must be an object")
        failure = decode_typed(obj, definition_type(f"io.k8s.api.authentication.v1.{t.info.kind}"))
        if failure is not None:
            raise cannot_be_handled(t.info.kind, "v1", failure.message)
        spec = obj.get("spec") or {}
        token = spec.get("token") or ""
        if not token:
            raise errors.bad_request("token is required for TokenReview in authentication")
        authenticator = self.authenticator()
        if authenticator is None:
            raise errors.route_not_found()
        audiences = tuple(spec.get("audiences") or ())
        result = await authenticator.authenticate_token(token, audiences or None)
        status: dict[str, Any] = {}
        if result.response is not None:
            status["authenticated"] = True
            status["user"] = user_info(result.response.user)
            if result.response.audiences:
                status["audiences"] = list(result.response.audiences)
        else:
            status["user"] = {}
            status["error"] = result.error
        metadata = dict(obj.get("metadata") or {})
        metadata.setdefault("creationTimestamp", None)
        return {"kind": t.info.kind, "apiVersion": API_VERSION, "metadata": metadata,
                "spec": spec, "status": status}


def resources(clock: Clock, *,
              authenticator: Callable[[], TokenAuthenticator | None]) -> list[Resource]:
    """``authenticator``: the server's, once it serves (None before: TokenReviews 404)."""
    return [
        Resource(builtin(GROUP, "selfsubjectreviews"), SelfSubjectReviewREST(clock)),
        Resource(builtin(GROUP, "tokenreviews"), TokenReviewREST(authenticator)),
    ]
