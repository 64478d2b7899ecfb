"""Defaulting of the batch kinds (cf. ``pkg/apis/batch/v1/defaults.go``; pod templates as the
core API defaults them). Functions mutate the object in place and never overwrite a field
the user set."""

from __future__ import annotations

from kubegc.api.types import Obj
from kubegc.registry.groups.core.defaults import default_template, spec_of


def default_job(obj: Obj) -> None:
    spec = spec_of(obj)
    spec.setdefault("parallelism", 1)
    if "completions" not in spec:
        spec["completions"] = 1
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    template = spec.get("template")
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        template["spec"].setdefault("restartPolicy", "Never")
    default_template(spec)


def default_cronjob(obj: Obj) -> None:
    spec = spec_of(obj)
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job_template = spec.get("jobTemplate")
    if isinstance(job_template, dict):
        job = {"spec": job_template.setdefault("spec", {})}
        default_job(job)
