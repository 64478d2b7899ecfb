"""POST of an authorization.k8s.io review (SelfSubjectAccessReview, SubjectAccessReview,
LocalSubjectAccessReview, SelfSubjectRulesReview): 201 with the answered review, nothing
stored (``registry.authorization``). The requester is the request's user; the answer is
the server's authorizer's (its rule resolver's for a rules review)."""

from __future__ import annotations

from kubegc.api import errors
from kubegc.api.auth import request_user
from kubegc.api.clock import format_time
from kubegc.api.types import Obj
from kubegc.registry import Target
from kubegc.registry.authorization import REVIEWS
from kubegc.registry.fieldmanager import record_update
from kubegc.server.context import ServerContext, json_response
from kubegc.server.http import Request, Response
from kubegc.server.negotiation import decode_body
from kubegc.server.verbs.params import field_manager


def _not_allowed(t: Target) -> errors.StatusError:
    return errors.StatusError(405, "MethodNotAllowed", "the server does not allow this "
                              "method on the requested resource", group=t.info.group,
                              kind=t.info.resource)


async def create(ctx: ServerContext, request: Request, t: Target, name: str) -> Response:
    if request.method != "POST" or name:
        raise _not_allowed(t)
    user = request_user()
    if user is None:
        raise errors.bad_request("no user present on request")
    body = decode_body(await request.read(), request.headers.get("Content-Type", ""),
                       t.info.kind)
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be an object")
    if body.get("metadata") is not None and not isinstance(body.get("metadata"), dict):
        raise errors.bad_request("metadata must be an object")
    registry = ctx.registry
    answer = REVIEWS[t.info.resource](registry.authorizer, registry.rule_resolver, user,
                                      t.namespace, body)
    if t.info.resource != "selfsubjectrulesreviews":
        _manage_fields(ctx, request, answer)
    return json_response(answer, 201)


def _manage_fields(ctx: ServerContext, request: Request, answer: Obj) -> None:
    """The create handler's field manager runs on every create, stored or not: the answer
    carries the requester's managedFields entry for what it sent (its spec)."""
    asked = {k: answer[k] for k in ("apiVersion", "kind", "spec")}
    entries = record_update(None, {**asked, "metadata": {}}, manager=field_manager(request),
                            now=format_time(ctx.clock.now()))
    if entries:
        answer["metadata"]["managedFields"] = entries
