"""RBAC as kube-apiserver does it (cf. plugin/pkg/auth/authorizer/rbac and
pkg/registry/rbac).

- ``index``: the stored Roles, ClusterRoles, RoleBindings and ClusterRoleBindings in
  memory, current as soon as a write of this server returns (and fed by the watch cache
  with the other servers' writes).
- ``rule``: which rules apply to a user in a namespace (``DefaultRuleResolver``), and the
  escalation message (``ConfirmNoEscalation``).
- ``authorizer``: ``RBACAuthorizer``, the ``Authorizer`` and ``RuleResolver`` of the
  ``RBAC`` mode.
- ``escalation``: the checks of the RBAC storages (``escalate`` and ``bind``), which the
  four resources' strategies run on every create and update.
- ``policybased``: the four resources' storages (``resources``): their strategies and
  validation, and the writes the index learns at once.
- ``bootstrappolicy`` (data) and ``reconciliation``: the default roles and bindings,
  written at start.
- ``modes``: ``--authorization-mode``'s union of authorizers and of rule resolvers.

The rule vocabulary itself (``PolicyRule``, ``rule_allows``, ``covers``) is
``kubegc.authz.rules``, shared with the aggregation controller and the tools.
May import: ``kubegc.api``, ``kubegc.authz``, ``kubegc.storage``, ``kubegc.registry.generic``.
"""

from kubegc.registry.groups.rbac.authorizer import RBACAuthorizer
from kubegc.registry.groups.rbac.escalation import RBACPolicy
from kubegc.registry.groups.rbac.index import PolicyIndex
from kubegc.registry.groups.rbac.policybased import resources
from kubegc.registry.groups.rbac.reconciliation import PolicyWriter, ensure_policy
from kubegc.registry.groups.rbac.rule import LISTER_NAMES, STORE_NAMES, DefaultRuleResolver

__all__ = [
    "LISTER_NAMES",
    "STORE_NAMES",
    "DefaultRuleResolver",
    "PolicyIndex",
    "PolicyWriter",
    "RBACAuthorizer",
    "RBACPolicy",
    "ensure_policy",
    "resources",
]
