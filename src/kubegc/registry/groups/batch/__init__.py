"""The batch group's storages (cf. pkg/registry/batch): Jobs (``PrepareForCreate``'s
generated selector and labels) and CronJobs, each with its status subresource."""

from __future__ import annotations

from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.api.zero_status import zero_status_fields
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext, stored
from kubegc.registry.generic.strategy import (
    GCPolicy,
    Strategy,
    keeping_zero_status,
    zero_status_create,
)
from kubegc.registry.groups.batch import defaults
from kubegc.registry.groups.batch import validation as v

_JOB_STATUS = zero_status_fields("batch", "jobs")
_CRONJOB_STATUS = zero_status_fields("batch", "cronjobs")


def _job_create(obj: Obj) -> None:
    obj["status"] = {}
    spec = obj.setdefault("spec", {})
    meta = obj["metadata"]
    if spec.get("manualSelector"):
        return
    uid, name = meta["uid"], meta["name"]
    generated = {
        "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
        "controller-uid": uid, "job-name": name,
    }
    template = spec.setdefault("template", {})
    tmeta = template.setdefault("metadata", {})
    tlabels = tmeta.setdefault("labels", {})
    tlabels.update(generated)
    spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}


def resources(ctx: StorageContext) -> list[Resource]:
    return [
        stored(ctx, builtin("batch", "jobs"), Strategy(
            default_gc_policy=GCPolicy.ORPHAN_DEPENDENTS, prepare_for_create=_job_create,
            validate=v.validate_job, validate_update=v.validate_job_update,
            defaulter=keeping_zero_status(defaults.default_job, _JOB_STATUS)), status=True,
                table=printers.JOB),
        stored(ctx, builtin("batch", "cronjobs"), Strategy(
            prepare_for_create=zero_status_create(_CRONJOB_STATUS),
            validate=v.validate_cron_job,
            defaulter=keeping_zero_status(defaults.default_cronjob, _CRONJOB_STATUS)),
            status=True, table=printers.CRON_JOB),
    ]
