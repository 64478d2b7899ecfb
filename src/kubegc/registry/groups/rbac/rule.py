"""Which rules apply to a user in a namespace (cf. pkg/registry/rbac/validation/rule.go:
``DefaultRuleResolver``, ``VisitRulesFor``, ``RulesFor``, ``GetRoleReferenceRules``,
``appliesTo``, ``ConfirmNoEscalation``).

The ClusterRoleBindings' roles apply everywhere, the RoleBindings' of a namespace there;
a binding applies to a user named by one of its subjects (a User by name, a Group the
user is in, a ServiceAccount by ``system:serviceaccount:<ns>:<name>``, its namespace the
binding's when the subject has none). A binding whose role is missing contributes an
error instead of rules: rules only add, so what was found still decides.

Upstream has two readers of the policy: the authorizer reads informers' listers, whose
"not found" names the singular resource (``clusterrole.rbac.authorization.k8s.io "x" not
found``), and the RBAC storages read the registry, whose error names the plural
(``clusterroles...``). ``RoleNames`` says which of the two a resolver speaks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kubegc.api import errors
from kubegc.api.auth import SERVICE_ACCOUNT_PREFIX, UserInfo
from kubegc.api.errors import GroupResource, StatusError
from kubegc.api.goformat import go_quote
from kubegc.authz.rules import (
    GROUP,
    PolicyRule,
    aggregate_error,
    compact_rules,
    compact_string,
    covers,
)
from kubegc.registry.groups.rbac.index import Binding, PolicyIndex, Subject


@dataclass(frozen=True)
class RoleNames:
    """The resources a missing role's NotFound names."""

    role: str
    cluster_role: str


#: informers' listers (the authorizer)
LISTER_NAMES = RoleNames("role", "clusterrole")
#: the registry's stores (the RBAC storages' escalation checks)
STORE_NAMES = RoleNames("roles", "clusterroles")


def _describe_subject(subject: Subject, binding_namespace: str) -> str:
    """``describeSubject``."""
    if subject.kind == "ServiceAccount":
        namespace = subject.namespace or binding_namespace
        return f"{subject.kind} {go_quote(subject.name + '/' + namespace)}"
    return f"{subject.kind} {go_quote(subject.name)}"


class Source:
    """Where a rule came from (``clusterRoleBindingDescriber`` / ``roleBindingDescriber``):
    said in the reason of an allowed request (described once: it is said often)."""

    __slots__ = ("_text", "binding", "subject")

    def __init__(self, binding: Binding, subject: Subject) -> None:
        self.binding = binding
        self.subject = subject
        self._text = ""

    def __str__(self) -> str:
        if not self._text:
            b = self.binding
            if b.namespace:
                self._text = (
                    f"RoleBinding {go_quote(b.name + '/' + b.namespace)} of {b.role_kind} "
                    f"{go_quote(b.role_name)} to {_describe_subject(self.subject, b.namespace)}")
            else:
                self._text = (f"ClusterRoleBinding {go_quote(b.name)} of {b.role_kind} "
                              f"{go_quote(b.role_name)} to {_describe_subject(self.subject, '')}")
        return self._text


def applies_to_user(user: UserInfo, subject: Subject, namespace: str) -> bool:
    """``appliesToUser``."""
    if subject.kind == "User":
        return user.name == subject.name
    if subject.kind == "Group":
        return subject.name in user.groups
    if subject.kind == "ServiceAccount":
        sa_namespace = subject.namespace or namespace
        return bool(sa_namespace) and user.name == (
            f"{SERVICE_ACCOUNT_PREFIX}{sa_namespace}:{subject.name}")
    return False


def applies_to(user: UserInfo, binding: Binding, namespace: str) -> Subject | None:
    """``appliesTo``: the first subject of ``binding`` naming ``user``."""
    for subject in binding.subjects:
        if applies_to_user(user, subject, namespace):
            return subject
    return None


class ResolutionError(Exception):
    """A binding's role cannot be read: ``message`` is upstream's error text, ``status``
    what a request that needs the role answers (a NotFound, or a 500 for a kind RBAC does
    not know)."""

    def __init__(self, status: StatusError, message: str = "") -> None:
        super().__init__(message or status.message)
        self.status = status
        self.message = message or status.message


#: (where the rules come from, the rules) or, for a binding whose role is missing, the error
Visit = tuple[Source, tuple[PolicyRule, ...]] | ResolutionError


class DefaultRuleResolver:
    """``DefaultRuleResolver`` over a ``PolicyIndex``."""

    def __init__(self, index: PolicyIndex, names: RoleNames) -> None:
        self.index = index
        self.names = names

    def role_reference_rules(self, kind: str, name: str, binding_namespace: str
                             ) -> tuple[PolicyRule, ...]:
        """``GetRoleReferenceRules``; raises ``ResolutionError``."""
        if kind == "Role":
            role = self.index.role(binding_namespace, name)
            if role is None:
                raise ResolutionError(errors.not_found(GroupResource(GROUP, self.names.role),
                                                       name))
            return role.rules
        if kind == "ClusterRole":
            cluster_role = self.index.cluster_role(name)
            if cluster_role is None:
                raise ResolutionError(errors.not_found(
                    GroupResource(GROUP, self.names.cluster_role), name))
            return cluster_role.rules
        text = f"unsupported role reference kind: {go_quote(kind)}"
        raise ResolutionError(errors.internal_error(text), text)

    def visit_rules_for(self, user: UserInfo, namespace: str) -> Iterator[Visit]:
        """``VisitRulesFor``: the cluster bindings' rules first, then the namespace's."""
        yield from self._visit(user, self.index.cluster_bindings(), "")
        if namespace:
            yield from self._visit(user, self.index.bindings_in(namespace), namespace)

    def _visit(self, user: UserInfo, bindings: Iterator[Binding], namespace: str
               ) -> Iterator[Visit]:
        for binding in bindings:
            subject = applies_to(user, binding, namespace)
            if subject is None:
                continue
            try:
                rules = self.role_reference_rules(binding.role_kind, binding.role_name,
                                                  namespace)
            except ResolutionError as e:
                yield e
                continue
            yield Source(binding, subject), rules

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[PolicyRule], list[str]]:
        """``RulesFor``: every rule that applies, and the errors met finding them."""
        rules: list[PolicyRule] = []
        problems: list[str] = []
        for visit in self.visit_rules_for(user, namespace):
            if isinstance(visit, ResolutionError):
                problems.append(visit.message)
            else:
                rules.extend(visit[1])
        return rules, problems


def escalation_error(user: UserInfo, resolver: DefaultRuleResolver, namespace: str,
                     rules: tuple[PolicyRule, ...] | list[PolicyRule]) -> str | None:
    """``ConfirmNoEscalation``: None when ``user`` holds every rule of ``rules`` in
    ``namespace``, else the message that says which it does not hold."""
    owner_rules, problems = resolver.rules_for(user, namespace)
    ok, missing = covers(owner_rules, rules)
    if ok:
        return None
    described = sorted({compact_string(r) for r in compact_rules(missing)})
    groups = "[" + " ".join(go_quote(g) for g in user.groups) + "]"
    message = (f"user {go_quote(user.name)} (groups={groups}) is attempting to grant RBAC "
               "permissions not currently held:\n" + "\n".join(described))
    if problems:
        message += f"; resolution errors: [{aggregate_error(problems)}]"
    return message
