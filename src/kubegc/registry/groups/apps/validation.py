"""Workload validation (``pkg/apis/apps/validation``): Deployments, ReplicaSets,
StatefulSets, DaemonSets — replica counts, selectors and their templates, strategies,
revision history — and what an update may not change; ControllerRevisions."""

from __future__ import annotations

from typing import Any

from kubegc.api.errors import StatusCause, field_error
from kubegc.api.labels import label_selector_from_dict
from kubegc.api.types import Obj
from kubegc.registry.groups.core.validation import template_restart_always
from kubegc.registry.groups.core.validation_pods import validate_pod_template
from kubegc.registry.validation import paths
from kubegc.registry.validation.common import (
    Causes,
    forbidden,
    immutable,
    int_or_percent,
    int_or_percent_value,
    invalid,
    mapping,
    nonnegative,
    not_more_than_100_percent,
    not_supported,
    required,
    selector_is_empty,
    validate_label_selector,
)

SELECTOR_TYPE = "v1.LabelSelector"


def _selector_and_template(spec: dict[str, Any], kind: str, what: str) -> Causes:
    """The selector (required, not empty, valid), the template it must select, the template
    itself (``ValidatePodTemplateSpecForReplicaSet`` and its twins)."""
    selector = spec.get("selector")
    causes: Causes = []
    if not isinstance(selector, dict):
        causes.append(required("spec.selector"))
    else:
        causes += validate_label_selector(selector, "spec.selector")
        if selector_is_empty(selector):
            causes.append(invalid("spec.selector", selector,
                                  f"empty selector is invalid for {what}", SELECTOR_TYPE))
    template = spec.get("template")
    if not isinstance(template, dict):
        return [*causes, required("spec.template")]
    labels = mapping(template, "metadata").get("labels") or {}
    if (isinstance(selector, dict) and not selector_is_empty(selector) and not causes
            and not label_selector_from_dict(selector).matches(labels)):
        causes.append(invalid("spec.template.metadata.labels", labels,
                              "`selector` does not match template `labels`"))
    causes += validate_pod_template(template, "spec.template")
    return causes + template_restart_always(template, "spec.template", kind)


def _counts(spec: dict[str, Any]) -> Causes:
    causes = nonnegative(spec.get("replicas"), "spec.replicas")
    causes += nonnegative(spec.get("minReadySeconds"), "spec.minReadySeconds")
    return causes + nonnegative(spec.get("revisionHistoryLimit"), "spec.revisionHistoryLimit")


def validate_deployment(obj: dict[str, Any]) -> Causes:
    spec = mapping(obj, "spec")
    causes = _counts(spec) + _selector_and_template(spec, "ReplicaSet", "deployment")
    causes += _deployment_strategy(mapping(spec, "strategy"))
    deadline = spec.get("progressDeadlineSeconds")
    if isinstance(deadline, int):
        causes += nonnegative(deadline, "spec.progressDeadlineSeconds")
        if deadline <= (spec.get("minReadySeconds") or 0):
            causes.append(invalid("spec.progressDeadlineSeconds", deadline,
                                  "must be greater than minReadySeconds"))
    return causes


def _deployment_strategy(strategy: dict[str, Any]) -> Causes:
    kind = strategy.get("type") or ""
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            return [forbidden("spec.strategy.rollingUpdate",
                              "may not be specified when strategy `type` is 'Recreate'")]
        return []
    if kind != "RollingUpdate":
        return [not_supported("spec.strategy", kind, ("Recreate", "RollingUpdate"))]
    if not isinstance(rolling, dict):
        return [required("spec.strategy.rollingUpdate",
                         "this should be defaulted and never be nil")]
    path = "spec.strategy.rollingUpdate"
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    causes = int_or_percent(unavailable, f"{path}.maxUnavailable")
    causes += int_or_percent(surge, f"{path}.maxSurge")
    if int_or_percent_value(unavailable) == 0 and int_or_percent_value(surge) == 0:
        causes.append(invalid(f"{path}.maxUnavailable", unavailable,
                              "may not be 0 when `maxSurge` is 0"))
    return causes + not_more_than_100_percent(unavailable, f"{path}.maxUnavailable")


def validate_replica_set(obj: dict[str, Any]) -> Causes:
    spec = mapping(obj, "spec")
    return _counts(spec) + _selector_and_template(spec, "ReplicaSet", "deployment")


def validate_daemon_set(obj: dict[str, Any]) -> Causes:
    spec = mapping(obj, "spec")
    causes = _counts(spec) + _selector_and_template(spec, "DaemonSet", "daemonset")
    strategy = mapping(spec, "updateStrategy")
    kind = strategy.get("type") or ""
    if kind not in ("OnDelete", "RollingUpdate"):
        causes.append(not_supported("spec.updateStrategy.type", kind,
                                    ("OnDelete", "RollingUpdate")))
    return causes


def validate_stateful_set(obj: dict[str, Any]) -> Causes:
    spec = mapping(obj, "spec")
    causes = _counts(spec) + _selector_and_template(spec, "StatefulSet", "statefulset")
    policy = spec.get("podManagementPolicy") or ""
    if policy not in ("OrderedReady", "Parallel"):
        causes.append(invalid("spec.podManagementPolicy", policy,
                              "must be 'OrderedReady' or 'Parallel'"))
    kind = mapping(spec, "updateStrategy").get("type") or ""
    if kind not in ("RollingUpdate", "OnDelete"):
        causes.append(invalid("spec.updateStrategy", kind,
                              "must be 'RollingUpdate' or 'OnDelete'"))
    return causes


def _selector_update(new: dict[str, Any], old: dict[str, Any]) -> Causes:
    return immutable(mapping(new, "spec").get("selector"), mapping(old, "spec").get("selector"),
                     "spec.selector", SELECTOR_TYPE)


def validate_deployment_update(new: dict[str, Any], old: dict[str, Any]) -> Causes:
    return validate_deployment(new) + _selector_update(new, old)


def validate_replica_set_update(new: dict[str, Any], old: dict[str, Any]) -> Causes:
    return validate_replica_set(new) + _selector_update(new, old)


def validate_daemon_set_update(new: dict[str, Any], old: dict[str, Any]) -> Causes:
    return validate_daemon_set(new) + _selector_update(new, old)


#: the StatefulSet spec fields an update may change (``ValidateStatefulSetUpdate``)
_STATEFUL_SET_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy",
                         "persistentVolumeClaimRetentionPolicy", "minReadySeconds")


def validate_stateful_set_update(new: dict[str, Any], old: dict[str, Any]) -> Causes:
    causes = validate_stateful_set(new)
    new_spec = {k: v for k, v in mapping(new, "spec").items() if k not in _STATEFUL_SET_MUTABLE}
    old_spec = {k: v for k, v in mapping(old, "spec").items() if k not in _STATEFUL_SET_MUTABLE}
    if new_spec != old_spec:
        causes.append(forbidden("spec", "updates to statefulset spec for fields other than "
                                "'replicas', 'ordinals', 'template', 'updateStrategy', "
                                "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' "
                                "are forbidden"))
    return causes


def validate_controller_revision(obj: Obj) -> list[StatusCause]:
    """``ValidateControllerRevision``: data is mandatory, the revision not negative."""
    causes = [] if obj.get("data") is not None else [
        field_error("FieldValueRequired", "data", "data is mandatory")]
    return causes + paths.non_negative(obj, "revision")


def validate_controller_revision_update(new: Obj, old: Obj) -> list[StatusCause]:
    return validate_controller_revision(new) + paths.immutable(new, old, "data",
                                                        go_type="runtime.RawExtension")
