"""``--authorization-mode``'s union (kube-apiserver's ``BuildAuthorizer``): system:masters
first, then the modes in order; the rules review asks the same modes."""

from __future__ import annotations

from kubegc.api.auth import ADMIN, Attributes, Decision, UserInfo
from kubegc.authz.rules import ALL_RULES
from kubegc.registry.groups.rbac import PolicyIndex, RBACAuthorizer
from kubegc.registry.groups.rbac.modes import build_authorizer, build_rule_resolver

BOB = UserInfo("bob", groups=("system:authenticated",))


def pods(user: UserInfo) -> Attributes:
    return Attributes(user=user, verb="list", resource="pods", namespace="ns")


def test_always_allow_allows_and_lists_every_rule() -> None:
    rbac = RBACAuthorizer(PolicyIndex())
    assert build_authorizer(("AlwaysAllow",), rbac).authorize(pods(BOB))[0] is Decision.ALLOW
    review = build_rule_resolver(("AlwaysAllow",), rbac).rules_for(BOB, "ns")
    assert (review.resource_rules, review.non_resource_rules) == (
        [ALL_RULES[0]], [ALL_RULES[1]])


def test_rbac_then_always_deny_says_both_reasons_and_masters_pass() -> None:
    rbac = RBACAuthorizer(PolicyIndex())
    union = build_authorizer(("RBAC", "AlwaysDeny"), rbac)
    assert union.authorize(pods(BOB)) == (Decision.NO_OPINION, "Everything is forbidden.")
    assert union.authorize(pods(ADMIN))[0] is Decision.ALLOW
    assert build_rule_resolver(("RBAC", "AlwaysDeny"), rbac).rules_for(BOB, "ns").errors == []
