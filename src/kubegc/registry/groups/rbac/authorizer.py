"""The RBAC authorizer (cf. plugin/pkg/auth/authorizer/rbac/rbac.go ``RBACAuthorizer``).

A request is allowed by the first rule that grants it, the reason naming the binding
(``RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "z"``). Otherwise RBAC
has no opinion: the reason is empty, or ``RBAC: `` and the errors met resolving the user's
bindings (a binding to a missing role), which the 403 then says.

The rules that apply to a user in a namespace are resolved once per policy change: the
server asks for every request, the controllers for every call, mostly as the same few
users (``_cache``, keyed by user and namespace, dropped when the index's generation moves).
"""

from __future__ import annotations

from collections import OrderedDict

from kubegc.api.auth import Attributes, Decision, UserInfo
from kubegc.authz.rules import RulesReview, aggregate_error, review_of, rule_allows
from kubegc.registry.groups.rbac.index import PolicyIndex
from kubegc.registry.groups.rbac.rule import (
    LISTER_NAMES,
    DefaultRuleResolver,
    ResolutionError,
    Visit,
)

#: (user name, groups, namespace) entries kept
CACHE_SIZE = 4096


class RBACAuthorizer:
    """``authorizer.Authorizer`` and ``authorizer.RuleResolver`` over the stored policy."""

    def __init__(self, index: PolicyIndex) -> None:
        self.resolver = DefaultRuleResolver(index, LISTER_NAMES)
        self._index = index
        self._generation = -1
        self._cache: OrderedDict[tuple[str, tuple[str, ...], str], list[Visit]] = OrderedDict()

    def _visits(self, user: UserInfo, namespace: str) -> list[Visit]:
        if self._generation != self._index.generation:
            self._cache.clear()
            self._generation = self._index.generation
        key = (user.name, user.groups, namespace)
        visits = self._cache.get(key)
        if visits is None:
            visits = list(self.resolver.visit_rules_for(user, namespace))
            self._cache[key] = visits
            if len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return visits

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        problems: list[str] = []
        for visit in self._visits(attrs.user, attrs.namespace):
            if isinstance(visit, ResolutionError):
                problems.append(visit.message)
                continue
            source, rules = visit
            for rule in rules:
                if rule_allows(attrs, rule):
                    return Decision.ALLOW, f"RBAC: allowed by {source}"
        if problems:
            return Decision.NO_OPINION, f"RBAC: {aggregate_error(problems)}"
        return Decision.NO_OPINION, ""

    def rules_for(self, user: UserInfo, namespace: str) -> RulesReview:
        """``RBACAuthorizer.RulesFor`` (never incomplete)."""
        rules, problems = self.resolver.rules_for(user, namespace)
        review = review_of(rules)
        if problems:
            review.errors.append(aggregate_error(problems))
        return review
