"""``--authorization-mode``: the authorizers and rule resolvers of the modes asked for, in
order (kube-apiserver's ``pkg/kubeapiserver/authorizer`` ``Config.New``)."""

from __future__ import annotations

from kubegc.api.auth import AlwaysAllow, AlwaysDeny, Authorizer, Privileged, Union
from kubegc.authz.rules import AllowAllRules, NoRules, RuleResolver, RuleResolvers
from kubegc.registry.groups.rbac.authorizer import RBACAuthorizer


def build_authorizer(modes: tuple[str, ...], rbac: RBACAuthorizer) -> Authorizer:
    """``--authorization-mode``'s union, ``system:masters`` first (kube-apiserver's
    ``BuildAuthorizer``)."""
    authorizers: list[Authorizer] = [Privileged()]
    for mode in modes:
        if mode == "AlwaysAllow":
            authorizers.append(AlwaysAllow())
        elif mode == "AlwaysDeny":
            authorizers.append(AlwaysDeny())
        elif mode == "RBAC":
            authorizers.append(rbac)
        else:
            raise ValueError(f"authorization-mode {mode!r} is not a valid mode")
    return Union(authorizers)


def build_rule_resolver(modes: tuple[str, ...], rbac: RBACAuthorizer) -> RuleResolver:
    """The modes' rule resolvers (``union.NewRuleResolvers``), for
    SelfSubjectRulesReview; ``system:masters`` is no rule resolver upstream either."""
    resolvers: list[RuleResolver] = []
    for mode in modes:
        resolvers.append(AllowAllRules() if mode == "AlwaysAllow" else NoRules()
                         if mode == "AlwaysDeny" else rbac)
    return RuleResolvers(resolvers)
