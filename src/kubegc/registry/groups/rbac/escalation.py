"""RBAC's own checks on what is written to it, so that RBAC cannot be used to gain
permissions (cf. pkg/registry/rbac/escalation_check.go ``EscalationAllowed``,
``RoleEscalationAuthorized``, ``BindingAuthorized``; helpers.go ``IsOnlyMutatingGCFields``;
and the ``policybased`` storages of roles, clusterroles, rolebindings and
clusterrolebindings).

- A Role or ClusterRole may only hold rules its writer holds in that namespace (cluster-wide
  for a ClusterRole), unless the writer may ``escalate`` that resource; setting or changing
  a ClusterRole's ``aggregationRule`` needs every permission (``*`` on ``*.*`` and on every
  URL).
- A binding may only be made to a role whose rules its writer holds, unless the writer may
  ``bind`` that role (by name) in that namespace.
- ``system:masters`` is never checked, nor are in-process writes without a user (the
  apiserver's own: the bootstrap policy, the registry); an update that changes only what the
  garbage collector changes (ownerReferences, finalizers) is not checked either.

The checks run where upstream's do: after the object is decoded and defaulted, before it is
validated. A refusal is a 403 naming the object and what is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kubegc.api import errors
from kubegc.api.auth import (
    SYSTEM_PRIVILEGED_GROUP,
    Attributes,
    Authorizer,
    Decision,
    UserInfo,
    request_user,
)
from kubegc.api.errors import GroupResource
from kubegc.api.types import Obj
from kubegc.authz.rules import ALL_RULES, GROUP, PolicyRule, rules_of
from kubegc.registry.groups.rbac.rule import DefaultRuleResolver, ResolutionError, escalation_error


@dataclass
class RBACPolicy:
    """What the RBAC storages consult: a rule resolver over the stored policy (errors
    worded as the registry's) and the server's authorizer (``escalate``, ``bind``)."""

    resolver: DefaultRuleResolver
    authorizer: Callable[[], Authorizer]

    def allowed(self, attrs: Attributes) -> bool:
        return self.authorizer().authorize(attrs)[0] is Decision.ALLOW


#: a strategy's check of a write to an RBAC resource: (policy, namespace of the request,
#: name in the URL — "" for a create —, new object, old object or None for a create)
WriteCheck = Callable[[RBACPolicy, str, str, Obj, "Obj | None"], None]


def escalation_allowed(user: UserInfo | None) -> bool:
    """``EscalationAllowed``: the apiserver's own writes and ``system:masters``."""
    return user is None or user.in_group(SYSTEM_PRIVILEGED_GROUP)


def is_only_mutating_gc_fields(new: Obj, old: Obj | None) -> bool:
    """``IsOnlyMutatingGCFields``: ``new`` differs from ``old`` in nothing but the fields
    the garbage collector writes (ownerReferences, finalizers) and bookkeeping
    (managedFields, resourceVersion)."""
    if old is None:
        return False

    def without_gc_fields(obj: Obj) -> Obj:
        meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in (
            "ownerReferences", "finalizers", "managedFields", "resourceVersion", "selfLink")}
        return {**obj, "metadata": meta}

    return without_gc_fields(new) == without_gc_fields(old)


def _forbidden(resource: str, name: str, message: str) -> errors.StatusError:
    return errors.forbidden(GroupResource(GROUP, resource), name, message)


def _role_escalation_authorized(policy: RBACPolicy, user: UserInfo, resource: str,
                                namespace: str, name: str) -> bool:
    """``RoleEscalationAuthorized``: ``escalate`` on the resource of the request (by the
    URL's name: none for a create)."""
    return policy.allowed(Attributes(user=user, verb="escalate", namespace=namespace,
                                     api_group=GROUP, api_version="*", resource=resource,
                                     name=name))


def _binding_authorized(policy: RBACPolicy, user: UserInfo, role_ref: dict[str, object],
                        namespace: str) -> bool:
    """``BindingAuthorized``: ``bind`` on the role, by name, where the binding is."""
    kind = role_ref.get("kind")
    resource = {"ClusterRole": "clusterroles", "Role": "roles"}.get(str(kind))
    if resource is None:
        return False
    return policy.allowed(Attributes(user=user, verb="bind", namespace=namespace,
                                     api_group=str(role_ref.get("apiGroup") or ""),
                                     api_version="*", resource=resource,
                                     name=str(role_ref.get("name") or "")))


def _confirm_no_escalation(policy: RBACPolicy, user: UserInfo, resource: str,
                           namespace: str, obj: Obj, rules: tuple[PolicyRule, ...]) -> None:
    message = escalation_error(user, policy.resolver, namespace, rules)
    if message is not None:
        raise _forbidden(resource, _name(obj), message)


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _has_aggregation_rule(obj: Obj | None) -> bool:
    rule = (obj or {}).get("aggregationRule")
    return isinstance(rule, dict) and bool(rule.get("clusterRoleSelectors"))


def check_role(policy: RBACPolicy, namespace: str, name: str, new: Obj,
               old: Obj | None) -> None:
    """``role/policybased`` Create and Update."""
    _check_role(policy, "roles", namespace, name, new, old)


def check_cluster_role(policy: RBACPolicy, namespace: str, name: str, new: Obj,
                       old: Obj | None) -> None:
    """``clusterrole/policybased``: the role's rules, and every permission for an
    aggregation rule (set now or before)."""
    user = _check_role(policy, "clusterroles", "", name, new, old)
    if user is not None and (_has_aggregation_rule(new) or _has_aggregation_rule(old)) and (
            escalation_error(user, policy.resolver, "", ALL_RULES) is not None):
        raise _forbidden("clusterroles", _name(new),
                             "must have cluster-admin privileges to use the aggregationRule")


def _check_role(policy: RBACPolicy, resource: str, namespace: str, name: str, new: Obj,
                old: Obj | None) -> UserInfo | None:
    """The user still to check further, or None when the write is allowed as it is."""
    user = request_user()
    if user is None or escalation_allowed(user) or _role_escalation_authorized(
            policy, user, resource, namespace, name):
        return None
    if is_only_mutating_gc_fields(new, old):
        return None
    _confirm_no_escalation(policy, user, resource, namespace, new, rules_of(new))
    return user


def check_role_binding(policy: RBACPolicy, namespace: str, name: str, new: Obj,
                       old: Obj | None) -> None:
    """``rolebinding/policybased``."""
    _check_binding(policy, "rolebindings", namespace, new, old)


def check_cluster_role_binding(policy: RBACPolicy, namespace: str, name: str, new: Obj,
                               old: Obj | None) -> None:
    """``clusterrolebinding/policybased``."""
    _check_binding(policy, "clusterrolebindings", "", new, old)


def _check_binding(policy: RBACPolicy, resource: str, namespace: str, new: Obj,
                   old: Obj | None) -> None:
    user = request_user()
    if user is None or escalation_allowed(user) or is_only_mutating_gc_fields(new, old):
        return
    ref = new.get("roleRef")
    role_ref: dict[str, object] = ref if isinstance(ref, dict) else {}
    if _binding_authorized(policy, user, role_ref, namespace):
        return
    try:
        rules = policy.resolver.role_reference_rules(
            str(role_ref.get("kind") or ""), str(role_ref.get("name") or ""), namespace)
    except ResolutionError as e:
        raise e.status from None
    _confirm_no_escalation(policy, user, resource, namespace, new, rules)
