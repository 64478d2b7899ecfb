"""Printers of the workload controllers' objects: Deployments, ReplicaSets,
ReplicationControllers, StatefulSets, DaemonSets, Jobs and CronJobs (``printDeployment``,
``printReplicaSet``, ... in printers.go).

Their wide columns show the pod template's containers and images and the selector
(``metav1.FormatLabelSelector``; a ReplicationController's plain map selector is printed
with ``labels.FormatLabels``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubegc.registry.printers.duration import human_duration
from kubegc.registry.printers.helpers import (
    AGE,
    NAME,
    Conditions,
    Obj,
    RowFn,
    age,
    column,
    format_label_selector,
    format_labels,
    has_condition,
    layout_container_cells,
    lookup,
    object_meta,
    parse_timestamp,
    translate_timestamp_since,
)

_CONTAINERS = column("Containers", "Names of each container in the template.", wide=True)
_IMAGES = column("Images", "Images referenced by each container in the template.", wide=True)
_SELECTOR = "A label query over pods that should match the replica count."
_TEMPLATE_WIDE = [_CONTAINERS, _IMAGES,
                  column("Selector", _SELECTOR, wide=True)]


DEPLOYMENT_COLUMN_DEFINITIONS = [
    NAME, column("Ready", "Number of the pod with ready state"),
    column("Up-to-date", "Total number of non-terminated pods targeted by this deployment"
           " that have the desired template spec."),
    column("Available", "Total number of available pods (ready for at least"
           " minReadySeconds) targeted by this deployment."),
    AGE, *_TEMPLATE_WIDE,
]
REPLICA_SET_COLUMN_DEFINITIONS = [
    NAME, column("Desired", "Replicas is the number of desired replicas.", "integer"),
    column("Current", "Replicas is the most recently observed number of replicas.",
           "integer"),
    column("Ready", "The number of ready replicas for this replica set.", "integer"),
    AGE, *_TEMPLATE_WIDE,
]
REPLICATION_CONTROLLER_COLUMN_DEFINITIONS = [
    NAME, column("Desired", "Replicas is the number of desired replicas.", "integer"),
    column("Current", "Replicas is the most recently observed number of replicas.",
           "integer"),
    column("Ready", "The number of ready replicas for this replication controller.",
           "integer"),
    AGE, *_TEMPLATE_WIDE,
]
STATEFUL_SET_COLUMN_DEFINITIONS = [
    NAME, column("Ready", "Number of the pod with ready state"), AGE, _CONTAINERS, _IMAGES,
]
DAEMON_SET_COLUMN_DEFINITIONS = [
    NAME,
    column("Desired", "The total number of nodes that should be running the daemon pod"
           " (including nodes correctly running the daemon pod).", "integer"),
    column("Current", "The number of nodes that are running at least 1 daemon pod and are"
           " supposed to run the daemon pod.", "integer"),
    column("Ready", "The number of nodes that should be running the daemon pod and have"
           " one or more of the daemon pod running and ready.", "integer"),
    column("Up-to-date", "The total number of nodes that are running updated daemon pod",
           "integer"),
    column("Available", "The number of nodes that should be running the daemon pod and"
           " have one or more of the daemon pod running and available (ready for at least"
           " spec.minReadySeconds)", "integer"),
    column("Node Selector", "NodeSelector is a selector which must be true for the pod to"
           " fit on a node."),
    AGE, *_TEMPLATE_WIDE,
]
JOB_COLUMN_DEFINITIONS = [
    NAME, column("Status", "Status of the job."),
    column("Completions", "The number of pods which reached phase Succeeded."),
    column("Duration", "Time required to complete the job."), AGE, *_TEMPLATE_WIDE,
]
CRON_JOB_COLUMN_DEFINITIONS = [
    NAME, column("Schedule", "The schedule in Cron format, see"
                 " https://en.wikipedia.org/wiki/Cron."),
    column("Timezone", "The time zone name for the given schedule, see"
           " https://en.wikipedia.org/wiki/List_of_tz_database_time_zones."),
    column("Suspend", "This flag tells the controller to suspend subsequent executions, it"
           " does not apply to already started executions.", "boolean"),
    column("Active", "A list of pointers to currently running jobs.", "integer"),
    column("Last Schedule", "Information when was the last time the job was successfully"
           " scheduled."),
    AGE, *_TEMPLATE_WIDE,
]


def print_deployment(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    ready = f"{int(status.get('readyReplicas') or 0)}/{int(spec.get('replicas') or 0)}"
    selector = format_label_selector(spec.get("selector"), empty="")
    return [object_meta(obj).get("name", ""), ready, int(status.get("updatedReplicas") or 0),
            int(status.get("availableReplicas") or 0), age(obj, now),
            *layout_container_cells(lookup(spec, "template", "spec")), selector], []


def _replicas_row(*, map_selector: bool) -> RowFn:
    """ReplicaSets (LabelSelector) and ReplicationControllers (plain map selector)."""
    def row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        selector = spec.get("selector")
        shown = format_labels(selector) if map_selector else format_label_selector(selector)
        return [object_meta(obj).get("name", ""), int(spec.get("replicas") or 0),
                int(status.get("replicas") or 0), int(status.get("readyReplicas") or 0),
                age(obj, now), *layout_container_cells(lookup(spec, "template", "spec")), shown], []
    return row


print_replica_set = _replicas_row(map_selector=False)
print_replication_controller = _replicas_row(map_selector=True)


def print_stateful_set(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    ready = f"{int(status.get('readyReplicas') or 0)}/{int(spec.get('replicas') or 0)}"
    return [object_meta(obj).get("name", ""), ready, age(obj, now),
            *layout_container_cells(lookup(spec, "template", "spec"))], []


def print_daemon_set(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    counts = [int(status.get(f) or 0) for f in (
        "desiredNumberScheduled", "currentNumberScheduled", "numberReady",
        "updatedNumberScheduled", "numberAvailable")]
    return [object_meta(obj).get("name", ""), *counts,
            format_labels(lookup(spec, "template", "spec", "nodeSelector")), age(obj, now),
            *layout_container_cells(lookup(spec, "template", "spec")),
            format_label_selector(spec.get("selector"))], []


def _job_status(obj: Obj) -> str:
    for condition, shown in (("Complete", "Complete"), ("Failed", "Failed")):
        if has_condition(obj, condition):
            return shown
    if object_meta(obj).get("deletionTimestamp"):
        return "Terminating"
    for condition in ("Suspended", "FailureTarget"):
        if has_condition(obj, condition):
            return condition
    return "Running"


def print_job(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    succeeded = int(status.get("succeeded") or 0)
    parallelism = int(spec.get("parallelism") or 0)
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{int(spec['completions'])}"
    elif parallelism > 1:
        completions = f"{succeeded}/1 of {parallelism}"
    else:
        completions = f"{succeeded}/1"
    duration = ""
    start = parse_timestamp(status.get("startTime"))
    end = parse_timestamp(status.get("completionTime")) or now
    if start is not None:
        duration = human_duration((end - start).total_seconds())
    return [object_meta(obj).get("name", ""), _job_status(obj), completions, duration,
            age(obj, now), *layout_container_cells(lookup(spec, "template", "spec")),
            format_label_selector(spec.get("selector"))], []


def print_cron_job(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    last = (translate_timestamp_since(status["lastScheduleTime"], now)
            if status.get("lastScheduleTime") else "<none>")
    suspend = spec.get("suspend")
    job_spec = lookup(spec, "jobTemplate", "spec")
    return [object_meta(obj).get("name", ""), spec.get("schedule", ""),
            spec.get("timeZone") or "<none>",
            "<unset>" if suspend is None else ("True" if suspend else "False"),
            len(status.get("active") or []), last, age(obj, now),
            *layout_container_cells(lookup(job_spec, "template", "spec")),
            format_label_selector(lookup(job_spec, "selector"))], []
