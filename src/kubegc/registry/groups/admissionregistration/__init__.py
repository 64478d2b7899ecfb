"""Admission webhook configurations and ValidatingAdmissionPolicies (and bindings) as
stored objects (cf. pkg/registry/admissionregistration,
pkg/apis/admissionregistration/{v1/defaults.go,validation}).

The webhook configurations are called by the admission webhook plugins
(``registry/admission/webhook``); the policies are stored only (no CEL is evaluated).
"""

from __future__ import annotations

from typing import Any

from kubegc.api.errors import StatusCause, field_error
from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext, stored
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.validation.paths import (
    empty_status,
    items,
    join,
    map_at,
    not_supported,
    one_of,
    required,
    set_default,
    spec_of,
    value_at,
)

_SIDE_EFFECTS = ("None", "NoneOnDryRun")
_REVIEW_VERSIONS = ("v1", "v1beta1")
_VALIDATION_ACTIONS = ("Audit", "Deny", "Warn")


def _default_rules(rules: Any) -> None:
    """``SetDefaults_Rule``: scope ``*``."""
    for rule in rules if isinstance(rules, list) else []:
        if isinstance(rule, dict):
            rule.setdefault("scope", "*")


def _default_webhook(hook: dict[str, Any], *, mutating: bool) -> None:
    """``SetDefaults_ValidatingWebhook`` / ``SetDefaults_MutatingWebhook``."""
    hook.setdefault("failurePolicy", "Fail")
    hook.setdefault("matchPolicy", "Equivalent")
    hook.setdefault("namespaceSelector", {})
    hook.setdefault("objectSelector", {})
    hook.setdefault("timeoutSeconds", 10)
    if mutating:
        hook.setdefault("reinvocationPolicy", "Never")
    _default_rules(hook.get("rules"))
    if isinstance(value_at(hook, "clientConfig.service"), dict):
        set_default(hook, "clientConfig.service.port", 443)


def default_mutating_webhooks(obj: Obj) -> None:
    for _, hook in items(obj, "webhooks"):
        if isinstance(hook, dict):
            _default_webhook(hook, mutating=True)


def default_validating_webhooks(obj: Obj) -> None:
    for _, hook in items(obj, "webhooks"):
        if isinstance(hook, dict):
            _default_webhook(hook, mutating=False)


def validate_webhooks(obj: Obj) -> list[StatusCause]:
    """``validateWebhook`` of each webhook: a unique name of three or more domain
    segments, side effects and review versions, exactly one of url or service."""
    causes: list[StatusCause] = []
    names: set[Any] = set()
    for path, hook in items(obj, "webhooks"):
        if not isinstance(hook, dict):
            continue
        name = str(hook.get("name") or "")
        if name in names:
            causes.append(field_error("FieldValueDuplicate", join(path, "name"), "", name))
        names.add(name)
        if len(name.split(".")) < 3:
            causes.append(field_error("FieldValueInvalid", join(path, "name"),
                                      "should be a domain with at least three segments "
                                      "separated by dots", name))
        causes += _one_or_required(hook, "sideEffects", _SIDE_EFFECTS, path)
        if not hook.get("admissionReviewVersions"):
            causes.append(field_error(
                "FieldValueRequired", join(path, "admissionReviewVersions"),
                f"must specify one of {', '.join(_REVIEW_VERSIONS)}"))
        config = map_at(hook, "clientConfig")
        if bool(config.get("url")) == bool(config.get("service")):
            causes.append(field_error("FieldValueRequired", join(path, "clientConfig"),
                                      "exactly one of url or service is required"))
        causes += one_of(hook, "failurePolicy", ("Fail", "Ignore"), at=path)
        causes += one_of(hook, "matchPolicy", ("Equivalent", "Exact"), at=path)
    return causes


def _one_or_required(obj: Any, key: str, supported: tuple[str, ...],
                     at: str) -> list[StatusCause]:
    value = obj.get(key)
    if value is None:
        return [field_error("FieldValueRequired", join(at, key),
                            f"must specify one of {', '.join(supported)}")]
    return [] if value in supported else [not_supported(join(at, key), value, supported)]


def default_policy(obj: Obj) -> None:
    """``SetDefaults_ValidatingAdmissionPolicySpec`` and its match resources."""
    spec = spec_of(obj)
    spec.setdefault("failurePolicy", "Fail")
    constraints = spec.get("matchConstraints")
    if isinstance(constraints, dict):
        constraints.setdefault("matchPolicy", "Equivalent")
        constraints.setdefault("namespaceSelector", {})
        constraints.setdefault("objectSelector", {})
        _default_rules(constraints.get("resourceRules"))
        _default_rules(constraints.get("excludeResourceRules"))


def validate_policy(obj: Obj) -> list[StatusCause]:
    """``validateValidatingAdmissionPolicySpec`` (CEL expressions are not compiled)."""
    spec = map_at(obj, "spec")
    causes = required(obj, "spec.matchConstraints")
    if not spec.get("validations") and not spec.get("auditAnnotations"):
        causes.append(field_error("FieldValueRequired", "spec.validations",
                                  "validations or auditAnnotations must contain at least "
                                  "one item"))
    for path, validation in items(obj, "spec.validations"):
        causes += required(validation, "expression", at=path)
    return causes + one_of(obj, "spec.failurePolicy", ("Fail", "Ignore"))


def validate_binding(obj: Obj) -> list[StatusCause]:
    """``validateValidatingAdmissionPolicyBindingSpec``."""
    causes = required(obj, "spec.policyName")
    if not value_at(obj, "spec.validationActions"):
        causes.append(field_error("FieldValueRequired", "spec.validationActions",
                                  "at least one validation action is required"))
    for path, action in items(obj, "spec.validationActions"):
        if action not in _VALIDATION_ACTIONS:
            causes.append(not_supported(path, action, _VALIDATION_ACTIONS))
    return causes


def resources(ctx: StorageContext) -> list[Resource]:
    group = "admissionregistration.k8s.io"
    return [
        stored(ctx, builtin(group, "mutatingwebhookconfigurations"), Strategy(
            generation_fields=("webhooks",), validate=validate_webhooks,
            defaulter=default_mutating_webhooks), table=printers.WEBHOOK),
        stored(ctx, builtin(group, "validatingadmissionpolicies"), Strategy(
            prepare_for_create=empty_status, validate=validate_policy,
            defaulter=default_policy), status=True, table=printers.VALIDATING_ADMISSION_POLICY),
        stored(ctx, builtin(group, "validatingadmissionpolicybindings"), Strategy(
            validate=validate_binding), table=printers.VALIDATING_ADMISSION_POLICY_BINDING),
        stored(ctx, builtin(group, "validatingwebhookconfigurations"), Strategy(
            generation_fields=("webhooks",), validate=validate_webhooks,
            defaulter=default_validating_webhooks), table=printers.WEBHOOK),
    ]
