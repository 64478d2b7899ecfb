"""``kubegc.registry.validation``: the per-kind validation, worded as upstream's."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api.clock import ManualClock
from kubegc.registry import Registry
from kubegc.registry.groups.batch.cron import schedule_error
from kubegc.registry.validation.common import int_or_percent, validate_label_selector
from kubegc.storage.memory import MemoryKV

#: the built-in storages, for their strategies' validation
REGISTRY = Registry(MemoryKV(), clock=ManualClock())


@pytest.mark.parametrize(("schedule", "error"), [
    ("*/5 * * * *", None), ("0 0 1 jan mon", None), ("1-5/2 * * * MON-FRI", None),
    ("@daily", None), ("@every 1h30m", None), ("0 0 ? * *", None),
    ("TZ=UTC 0 0 * * *", None),
    ("not a schedule", "expected exactly 5 fields, found 3: [not a schedule]"),
    ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
    ("61 * * * *", "end of range (61) above maximum (59): 61"),
    ("0 0 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("@weekly2", "unrecognized descriptor: @weekly2"),
    ("", "empty spec string"),
])
def test_schedules_parse_as_robfig_cron(schedule: str, error: str | None) -> None:
    assert schedule_error(schedule) == error


def messages(group: str, resource: str, obj: dict[str, Any],
             old: dict[str, Any] | None = None) -> list[str]:
    strategy = REGISTRY.target(group, "v1", resource).strategy
    validate, validate_update = strategy.validate, strategy.validate_update
    causes = validate_update(obj, old) if old is not None and validate_update else validate(obj)
    return [f"{c.field}: {c.message}" for c in causes]


def test_valid_objects_have_no_causes() -> None:
    template = {"metadata": {"labels": {"a": "b"}}, "spec": {
        "containers": [{"name": "c", "image": "i"}], "restartPolicy": "Always"}}
    deployment = {"spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                           "template": template, "strategy": {
                               "type": "RollingUpdate",
                               "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}}}}
    assert messages("apps", "deployments", deployment) == []
    assert messages("apps", "deployments", deployment, deployment) == []


def test_rolling_update_needs_some_room() -> None:
    deployment = {"spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
        "metadata": {"labels": {"a": "b"}}, "spec": {"containers": [
            {"name": "c", "image": "i"}]}}, "strategy": {"type": "RollingUpdate",
                                                         "rollingUpdate": {
                                                             "maxSurge": 0,
                                                             "maxUnavailable": "120%"}}}}
    assert messages("apps", "deployments", deployment) == [
        "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, "
        'IntVal:0, StrVal:"120%"}: must not be greater than 100%']


def test_label_selector_requirements() -> None:
    causes = validate_label_selector({"matchExpressions": [
        {"key": "a", "operator": "In"}, {"key": "b", "operator": "Exists", "values": ["x"]},
        {"key": "c", "operator": "Near"}]}, "spec.selector")
    assert [f"{c.field}: {c.message}" for c in causes] == [
        "spec.selector.matchExpressions[0].values: Required value: must be specified when "
        "`operator` is 'In' or 'NotIn'",
        "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when "
        "`operator` is 'Exists' or 'DoesNotExist'",
        'spec.selector.matchExpressions[2].operator: Invalid value: "Near": not a valid '
        "selector operator"]


@pytest.mark.parametrize(("value", "ok"), [(0, True), (3, True), ("10%", True), (-1, False),
                                           ("10", False), ("x%", False), (None, True)])
def test_int_or_percent(value: Any, ok: bool) -> None:
    assert (int_or_percent(value, "p") == []) == ok


def test_cron_job_template_is_validated_as_a_job() -> None:
    cron = {"spec": {"schedule": "@hourly", "concurrencyPolicy": "Allow", "jobTemplate": {
        "spec": {"completions": -1, "template": {"spec": {
            "containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never"}}}}}}
    assert messages("batch", "cronjobs", cron) == [
        "spec.jobTemplate.spec.completions: Invalid value: -1: must be greater than or equal "
        "to 0"]


def test_pod_containers_names_are_unique_across_init_containers() -> None:
    pod = {"spec": {"initContainers": [{"name": "c", "image": "i"}],
                    "containers": [{"name": "c", "image": "i"}]}}
    assert messages("", "pods", pod) == ['spec.containers[0].name: Duplicate value: "c"']
