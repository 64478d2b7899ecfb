"""Job and CronJob validation (``pkg/apis/batch/validation``): counts and deadlines, the
pod template (restart policy ``OnFailure`` or ``Never``), the selector it must match, what
a Job update may not change; a CronJob's schedule, time zone, policy and history limits."""

from __future__ import annotations

import functools
from typing import Any
from zoneinfo import available_timezones

from kubegc.api.labels import label_selector_from_dict
from kubegc.registry.groups.batch.cron import schedule_error
from kubegc.registry.groups.core.validation_pods import validate_pod_template
from kubegc.registry.validation.common import (
    Causes,
    immutable,
    invalid,
    mapping,
    nonnegative,
    not_supported,
    one_of,
    required,
    validate_label_selector,
)

JOB_RESTART_POLICIES = ("OnFailure", "Never")
COMPLETION_MODES = ("NonIndexed", "Indexed")
CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")


def validate_job_spec(spec: dict[str, Any], path: str, *, generated: bool) -> Causes:
    """``ValidateJobSpec``; ``generated``: a Job's own (its selector was set at creation), not a
    CronJob's template, whose Jobs get one later."""
    causes: Causes = []
    for key in ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit",
                "ttlSecondsAfterFinished"):
        causes += nonnegative(spec.get(key), f"{path}.{key}")
    mode = spec.get("completionMode")
    if mode is not None and mode not in COMPLETION_MODES:
        causes.append(not_supported(f"{path}.completionMode", mode, COMPLETION_MODES))
    if mode == "Indexed" and spec.get("completions") is None:
        causes.append(required(f"{path}.completions", "when completion mode is Indexed"))
    selector = spec.get("selector")
    template = spec.get("template")
    if generated:
        if not isinstance(selector, dict):
            causes.append(required(f"{path}.selector"))
        else:
            causes += validate_label_selector(selector, f"{path}.selector")
            labels = mapping(template, "metadata").get("labels") or {}
            if not causes and not label_selector_from_dict(selector).matches(labels):
                causes.append(invalid(f"{path}.template.metadata.labels", labels,
                                      "`selector` does not match template `labels`"))
    if not isinstance(template, dict):
        return [*causes, required(f"{path}.template")]
    causes += validate_pod_template(template, f"{path}.template")
    restart = mapping(template, "spec").get("restartPolicy")
    if restart not in JOB_RESTART_POLICIES:
        causes.append(not_supported(f"{path}.template.spec.restartPolicy", restart or "",
                                    JOB_RESTART_POLICIES))
    return causes


def validate_job(obj: dict[str, Any]) -> Causes:
    return validate_job_spec(mapping(obj, "spec"), "spec", generated=True)


def validate_job_update(new: dict[str, Any], old: dict[str, Any]) -> Causes:
    """``ValidateJobSpecUpdate``: completions, selector, completion mode and the pod
    template stay as created."""
    causes = validate_job(new)
    new_spec, old_spec = mapping(new, "spec"), mapping(old, "spec")
    causes += immutable(new_spec.get("completions"), old_spec.get("completions"),
                        "spec.completions", "int32")
    causes += immutable(new_spec.get("selector"), old_spec.get("selector"), "spec.selector",
                        "v1.LabelSelector")
    causes += immutable(new_spec.get("template"), old_spec.get("template"), "spec.template")
    causes += immutable(new_spec.get("completionMode"), old_spec.get("completionMode"),
                        "spec.completionMode", "string")
    return causes


#: ``DNS1035LabelMaxLength - 11``: the controller appends ``-<11 digits>`` to name a Job
CRON_JOB_NAME_MAX = 52


def validate_cron_job(obj: dict[str, Any]) -> Causes:
    """``ValidateCronJobCreate``: the name leaves room for the Jobs' suffix, the spec."""
    spec = mapping(obj, "spec")
    causes: Causes = []
    name = str(mapping(obj, "metadata").get("name") or "")
    if len(name) > CRON_JOB_NAME_MAX:
        causes.append(invalid("metadata.name", name,
                              f"must be no more than {CRON_JOB_NAME_MAX} characters"))
    schedule = spec.get("schedule") or ""
    if not schedule:
        causes.append(required("spec.schedule"))
    else:
        error = schedule_error(schedule)
        if error is not None:
            causes.append(invalid("spec.schedule", schedule, error))
        if "TZ" in schedule:
            causes.append(invalid("spec.schedule", schedule, "cannot use TZ or CRON_TZ in "
                                  "schedule, use timeZone field instead"))
    causes += one_of(spec.get("concurrencyPolicy"), "spec.concurrencyPolicy",
                     CONCURRENCY_POLICIES, allow_empty=False)
    for key in ("startingDeadlineSeconds", "successfulJobsHistoryLimit",
                "failedJobsHistoryLimit"):
        causes += nonnegative(spec.get(key), f"spec.{key}")
    causes += _time_zone(spec.get("timeZone"))
    job_template = spec.get("jobTemplate")
    if not isinstance(job_template, dict):
        return [*causes, required("spec.jobTemplate")]
    return causes + validate_job_spec(mapping(job_template, "spec"), "spec.jobTemplate.spec",
                                      generated=False)


def _time_zone(zone: Any) -> Causes:
    """``validateTimeZone``: a name of the IANA database (Go's ``time.LoadLocation``)."""
    if zone is None:
        return []
    if zone == "" or zone not in _zones():
        return [invalid("spec.timeZone", zone, f"unknown time zone {zone}")]
    return []


@functools.cache
def _zones() -> frozenset[str]:
    return frozenset(available_timezones()) | {"UTC", "Local"}
