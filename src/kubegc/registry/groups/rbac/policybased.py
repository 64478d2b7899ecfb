"""Roles, ClusterRoles, RoleBindings and ClusterRoleBindings as stored objects (cf.
pkg/registry/rbac, pkg/apis/rbac/{v1/defaults.go,validation}).

The RBAC authorizer reads them (``kubegc.registry.groups.rbac``); their writes are checked for
escalation as upstream's policy-based storages check them (``check_write``: a user may
only grant what it holds, unless it may ``escalate`` or ``bind``). Names are path
segments (``system:aggregate-to-view`` is valid), as ``ValidateRBACName``.
"""

from __future__ import annotations

import functools
from typing import Any

from kubegc.api.content import is_dns1123_subdomain, is_path_segment_name
from kubegc.api.errors import StatusCause, field_error
from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StandardREST, StorageContext, stored
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.generic.target import Target
from kubegc.registry.groups.rbac.escalation import (
    RBACPolicy,
    WriteCheck,
    check_cluster_role,
    check_cluster_role_binding,
    check_role,
    check_role_binding,
)
from kubegc.registry.groups.rbac.index import PolicyIndex
from kubegc.registry.printers import TableHandler
from kubegc.registry.validation.paths import items, join, map_at, not_supported, required

GROUP = "rbac.authorization.k8s.io"
_SUBJECT_KINDS = ("ServiceAccount", "User", "Group")


def default_binding(obj: Obj) -> None:
    """``SetDefaults_RoleBinding`` / ``SetDefaults_Subject``: the role's API group, and
    the RBAC group for User and Group subjects."""
    role_ref = obj.get("roleRef")
    if isinstance(role_ref, dict) and not role_ref.get("apiGroup"):
        role_ref["apiGroup"] = GROUP
    for _, subject in items(obj, "subjects"):
        if isinstance(subject, dict) and not subject.get("apiGroup") and subject.get(
                "kind") in ("User", "Group"):
            subject["apiGroup"] = GROUP


def _validate_rule(rule: Any, path: str, *, namespaced: bool) -> list[StatusCause]:
    """``ValidatePolicyRule``."""
    if not isinstance(rule, dict):
        return []
    causes = required(rule, "verbs", detail="verbs must contain at least one value", at=path)
    urls = rule.get("nonResourceURLs")
    if urls:
        if namespaced:
            causes.append(field_error("FieldValueInvalid", f"{path}.nonResourceURLs",
                                      "namespaced rules cannot apply to non-resource URLs",
                                      urls))
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            causes.append(field_error(
                "FieldValueInvalid", f"{path}.nonResourceURLs",
                "rules cannot apply to both regular resources and non-resource URLs", urls))
        return causes
    return causes + required(
        rule, "apiGroups", detail="resource rules must supply at least one api group",
        at=path) + required(
        rule, "resources", detail="resource rules must supply at least one resource", at=path)


def validate_role(obj: Obj) -> list[StatusCause]:
    return [c for path, rule in items(obj, "rules")
            for c in _validate_rule(rule, path, namespaced=True)]


def validate_cluster_role(obj: Obj) -> list[StatusCause]:
    causes = [c for path, rule in items(obj, "rules")
              for c in _validate_rule(rule, path, namespaced=False)]
    aggregation = obj.get("aggregationRule")
    if aggregation is not None and not (aggregation or {}).get("clusterRoleSelectors"):
        causes.append(field_error(
            "FieldValueRequired", "aggregationRule.clusterRoleSelectors",
            "at least one clusterRoleSelector required if aggregationRule is non-nil"))
    return causes


def _validate_binding(obj: Obj, *, namespaced: bool) -> list[StatusCause]:
    """``ValidateRoleBinding`` / ``ValidateClusterRoleBinding``."""
    ref = map_at(obj, "roleRef")
    causes: list[StatusCause] = []
    if ref.get("apiGroup") != GROUP:
        causes.append(not_supported("roleRef.apiGroup", ref.get("apiGroup", ""), (GROUP,)))
    kinds = ("Role", "ClusterRole") if namespaced else ("ClusterRole",)
    if ref.get("kind") not in kinds:
        causes.append(not_supported("roleRef.kind", ref.get("kind", ""), kinds))
    name = str(ref.get("name") or "")
    if not name:
        causes.append(field_error("FieldValueRequired", "roleRef.name", ""))
    else:
        causes += [field_error("FieldValueInvalid", "roleRef.name", m, name)
                   for m in is_path_segment_name(name)]
    for path, subject in items(obj, "subjects"):
        causes += _validate_subject(subject, path, namespaced=namespaced)
    return causes


def _validate_subject(subject: Any, path: str, *, namespaced: bool) -> list[StatusCause]:
    """``ValidateRoleBindingSubject``."""
    if not isinstance(subject, dict):
        return []
    causes = required(subject, "name", at=path)
    kind, name = subject.get("kind"), str(subject.get("name") or "")
    if kind == "ServiceAccount":
        if name:
            causes += [field_error("FieldValueInvalid", join(path, "name"), m, name)
                       for m in is_dns1123_subdomain(name)]
        if subject.get("apiGroup"):
            causes.append(not_supported(join(path, "apiGroup"), subject["apiGroup"], ("",)))
        if not namespaced and not subject.get("namespace"):
            causes.append(field_error("FieldValueRequired", join(path, "namespace"), ""))
    elif kind in ("User", "Group"):
        if subject.get("apiGroup") != GROUP:
            causes.append(not_supported(join(path, "apiGroup"), subject.get("apiGroup", ""),
                                        (GROUP,)))
    else:
        causes.append(not_supported(join(path, "kind"), kind or "", _SUBJECT_KINDS))
    return causes


def validate_role_binding(obj: Obj) -> list[StatusCause]:
    return _validate_binding(obj, namespaced=True)


def validate_cluster_role_binding(obj: Obj) -> list[StatusCause]:
    return _validate_binding(obj, namespaced=False)


def _role_ref_unchanged(new: Obj, old: Obj) -> list[StatusCause]:
    """``ValidateRoleBindingUpdate``: the role a binding grants never changes."""
    if new.get("roleRef") == old.get("roleRef"):
        return []
    return [field_error("FieldValueInvalid", "roleRef", "cannot change roleRef",
                        new.get("roleRef"), go_type="rbac.RoleRef")]


def validate_role_binding_update(new: Obj, old: Obj) -> list[StatusCause]:
    return validate_role_binding(new) + _role_ref_unchanged(new, old)


def validate_cluster_role_binding_update(new: Obj, old: Obj) -> list[StatusCause]:
    return validate_cluster_role_binding(new) + _role_ref_unchanged(new, old)


class RBACREST(StandardREST):
    """A policy-based RBAC storage (cf. pkg/registry/rbac/*/policybased): the generic
    storage, whose writes the authorizer's index learns before they are answered."""

    def __init__(self, ctx: StorageContext, index: PolicyIndex) -> None:
        super().__init__(ctx)
        self.index = index

    def after_write(self, t: Target, obj: Obj, *, removed: bool) -> None:
        self.index.apply_object(t.key(obj["metadata"]["name"]), obj, removed=removed)


def resources(ctx: StorageContext, *, index: PolicyIndex, policy: RBACPolicy,
              ) -> list[Resource]:
    """The four RBAC resources; ``index``: the authorizer's view of them, ``policy``: what
    their escalation checks consult."""

    def rbac(resource: str, check: WriteCheck, table: TableHandler,
             **strategy: Any) -> Resource:
        return stored(ctx, builtin(GROUP, resource), Strategy(
            tracks_generation=False, name_validator=is_path_segment_name,
            check_write=functools.partial(check, policy), **strategy),
            storage=RBACREST(ctx, index), table=table)

    return [
        rbac("clusterrolebindings", check_cluster_role_binding, printers.CLUSTER_ROLE_BINDING,
             validate=validate_cluster_role_binding,
             validate_update=validate_cluster_role_binding_update, defaulter=default_binding),
        rbac("clusterroles", check_cluster_role, printers.NAME_AND_CREATED_AT,
            validate=validate_cluster_role),
        rbac("rolebindings", check_role_binding, printers.ROLE_BINDING,
            validate=validate_role_binding,
             validate_update=validate_role_binding_update, defaulter=default_binding),
        rbac("roles", check_role, printers.NAME_AND_CREATED_AT, validate=validate_role),
    ]
