"""The authorization.k8s.io group (cf. pkg/registry/authorization): the four review APIs,
create-only and stored nowhere (``reviews.py`` answers them). The requester is the
request's user; the answer is the server's authorizer's (its rule resolver's for a rules
review)."""

from __future__ import annotations

from collections.abc import Callable

from kubegc.api import errors
from kubegc.api.auth import Authorizer, UserInfo, request_user
from kubegc.api.clock import Clock, format_time
from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.authz.rules import RuleResolver
from kubegc.registry.fieldmanager import record_update
from kubegc.registry.generic.rest import Creater, Resource, WriteOptions
from kubegc.registry.generic.target import Target
from kubegc.registry.groups.authorization import reviews

GROUP = reviews.GROUP

#: (authorizer, rule resolver, requester, namespace of the request, review) -> the answer
Answer = Callable[[Authorizer, RuleResolver, UserInfo, str, Obj], Obj]


class ReviewREST(Creater):
    """One review API: checks what every review checks (a requester; a body that is an
    object with object metadata), answers with ``answer``, and — but for the rules review,
    whose answer is a new object — records the requester's managedFields entry for what
    it sent, as the create handler's field manager does on every create, stored or not."""

    def __init__(self, answer: Answer, *, authorizer: Callable[[], Authorizer],
                 rule_resolver: Callable[[], RuleResolver], clock: Clock,
                 echoes_spec: bool = True) -> None:
        self.answer = answer
        self.authorizer = authorizer
        self.rule_resolver = rule_resolver
        self.clock = clock
        self.echoes_spec = echoes_spec

    async def create(self, t: Target, obj: Obj, options: WriteOptions) -> Obj:
        user = request_user()
        if user is None:
            raise errors.bad_request("no user present on request")
        if obj.get("metadata") is not None and not isinstance(obj.get("metadata"), dict):
            raise errors.bad_request("metadata must be an object")
        answer = self.answer(self.authorizer(), self.rule_resolver(), user, t.namespace, obj)
        if self.echoes_spec:
            asked = {k: answer[k] for k in ("apiVersion", "kind", "spec")}
            entries = record_update(None, {**asked, "metadata": {}},
                                    manager=options.field_manager,
                                    now=format_time(self.clock.now()))
            if entries:
                answer["metadata"]["managedFields"] = entries
        return answer


def resources(clock: Clock, *, authorizer: Callable[[], Authorizer],
              rule_resolver: Callable[[], RuleResolver]) -> list[Resource]:
    def review(resource: str, answer: Answer, *, echoes_spec: bool = True) -> Resource:
        return Resource(builtin(GROUP, resource), ReviewREST(
            answer, authorizer=authorizer, rule_resolver=rule_resolver, clock=clock,
            echoes_spec=echoes_spec))

    return [
        review("localsubjectaccessreviews", lambda a, r, u, ns, body: (
            reviews.local_subject_access_review(a, ns, body))),
        review("selfsubjectaccessreviews", lambda a, r, u, ns, body: (
            reviews.self_subject_access_review(a, u, body))),
        review("selfsubjectrulesreviews", lambda a, r, u, ns, body: (
            reviews.self_subject_rules_review(r, u, body)), echoes_spec=False),
        review("subjectaccessreviews", lambda a, r, u, ns, body: (
            reviews.subject_access_review(a, body))),
    ]
