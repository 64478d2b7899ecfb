"""``metav1.Table`` responses for ``kubectl get`` (cf. pkg/printers/internalversion/printers.go).

Contract:
  * ``table_accepted(accept)`` is true when the first Accept clause the server can serve asks
    for ``as=Table;g=meta.k8s.io`` (``v=v1`` or ``v=v1beta1``; ``table_version`` says which).
  * ``to_table(group, resource, objects, now=...)`` renders the cells the real API server
    renders. Like the server it always fills the wide (``priority: 1``) columns; kubectl hides
    them unless ``-o wide``. Integer columns carry JSON integers. Row objects follow
    ``include_object``: ``"None"`` → null, ``"Metadata"`` (default) →
    ``PartialObjectMetadata`` with the full metadata, ``"Object"`` → the object as given.
  * Custom resources render their ``printer_columns`` (CRD ``additionalPrinterColumns``,
    JSONPath subset: fields, ``[n]``, ``[*]``, ``['key']``, ``[?(@.f=="v")]``); with none
    given they get Name and Age, as apiextensions serves them.
  * Ages and durations follow ``duration.HumanDuration`` (``human_duration``).
Column names, types, priorities and cells follow upstream. Descriptions are upstream's
where printers.go spells them out; where it quotes a field's ``SwaggerDoc()`` they are an
abbreviated first sentence of that documentation (kubectl never shows descriptions).
Resources without a printer here get Name and Age (upstream's generic convertor would
print Name and "Created At"; CustomResourceDefinitions do get that).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from kubegc.api.clock import parse_time
from kubegc.api.errors import StatusError
from kubegc.api.selectors import label_selector_from_dict

Obj = Mapping[str, Any]
Conditions = list[dict[str, str]]
RowFn = Callable[[Obj, datetime], tuple[list[Any], Conditions]]

# --- durations ------------------------------------------------------------------------


def human_duration(seconds: float) -> str:
    """``duration.HumanDuration``: ~2-3 significant figures ("26s", "5m10s", "3h12m", "2d")."""
    secs = int(seconds)
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    if secs < 120:
        return f"{secs}s"
    minutes = secs // 60
    if minutes < 10:
        return f"{minutes}m" if secs % 60 == 0 else f"{minutes}m{secs % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = secs // 3600
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        years, days = hours // 24 // 365, (hours // 24) % 365
        return f"{years}y" if days == 0 else f"{years}y{days}d"
    return f"{hours // 24 // 365}y"


def short_human_duration(seconds: float) -> str:
    """``duration.ShortHumanDuration``: one unit ("26s", "5m", "3h", "2d", "1y")."""
    secs = int(seconds)
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    for unit, size, limit in (("s", 1, 60), ("m", 60, 3600), ("h", 3600, 86400),
                              ("d", 86400, 86400 * 365)):
        if secs < limit:
            return f"{secs // size}{unit}"
    return f"{secs // (86400 * 365)}y"


def _since(timestamp: Any, now: datetime) -> str:
    """``translateTimestampSince``: ``<unknown>`` for a missing timestamp."""
    if not timestamp:
        return "<unknown>"
    try:
        return human_duration((now - parse_time(str(timestamp))).total_seconds())
    except ValueError:
        return "<invalid>"


# --- column definitions ---------------------------------------------------------------


def _col(name: str, desc: str, kind: str = "string", *, wide: bool = False,
         fmt: str = "") -> dict[str, Any]:
    return {"name": name, "type": kind, "format": fmt, "description": desc,
            "priority": 1 if wide else 0}


_NAME_DESC = (
    "Name must be unique within a namespace. Is required when creating resources, although"
    " some resources may allow a client to request the generation of an appropriate name"
    " automatically. Name is primarily intended for creation idempotence and configuration"
    " definition. Cannot be updated. More info:"
    " https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
_AGE_DESC = (
    "CreationTimestamp is a timestamp representing the server time when this object was"
    " created. It is not guaranteed to be set in happens-before order across separate"
    " operations. Clients may not set this value. It is represented in RFC3339 form and is in"
    " UTC.\n\nPopulated by the system. Read-only. Null for lists. More info:"
    " https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
NAME = _col("Name", _NAME_DESC, fmt="name")
AGE = _col("Age", _AGE_DESC)
_CONTAINERS = _col("Containers", "Names of each container in the template.", wide=True)
_IMAGES = _col("Images", "Images referenced by each container in the template.", wide=True)
_SELECTOR = "A label query over pods that should match the replica count."
_TEMPLATE_WIDE = [_CONTAINERS, _IMAGES,
                  _col("Selector", _SELECTOR, wide=True)]

COLUMNS: dict[tuple[str, str], list[dict[str, Any]]] = {
    ("", "pods"): [
        NAME,
        _col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
        _col("Status", "The aggregate status of the containers in this pod."),
        _col("Restarts", "The number of times the containers in this pod have been restarted"
             " and when the last container in this pod has restarted."),
        AGE,
        _col("IP", "podIP address allocated to the pod.", wide=True),
        _col("Node", "NodeName indicates in which node this pod is scheduled.", wide=True),
        _col("Nominated Node", "nominatedNodeName is set only when this pod preempts other"
             " pods on the node, but it cannot be scheduled right away as preemption victims"
             " receive their graceful termination periods.", wide=True),
        _col("Readiness Gates", "If specified, all readiness gates will be evaluated for pod"
             " readiness.", wide=True),
    ],
    ("apps", "deployments"): [
        NAME, _col("Ready", "Number of the pod with ready state"),
        _col("Up-to-date", "Total number of non-terminated pods targeted by this deployment"
             " that have the desired template spec."),
        _col("Available", "Total number of available pods (ready for at least"
             " minReadySeconds) targeted by this deployment."),
        AGE, *_TEMPLATE_WIDE,
    ],
    ("apps", "replicasets"): [
        NAME, _col("Desired", "Replicas is the number of desired replicas.", "integer"),
        _col("Current", "Replicas is the most recently observed number of replicas.",
             "integer"),
        _col("Ready", "The number of ready replicas for this replica set.", "integer"),
        AGE, *_TEMPLATE_WIDE,
    ],
    ("", "replicationcontrollers"): [
        NAME, _col("Desired", "Replicas is the number of desired replicas.", "integer"),
        _col("Current", "Replicas is the most recently observed number of replicas.",
             "integer"),
        _col("Ready", "The number of ready replicas for this replication controller.",
             "integer"),
        AGE, *_TEMPLATE_WIDE,
    ],
    ("apps", "statefulsets"): [
        NAME, _col("Ready", "Number of the pod with ready state"), AGE, _CONTAINERS, _IMAGES,
    ],
    ("apps", "daemonsets"): [
        NAME,
        _col("Desired", "The total number of nodes that should be running the daemon pod"
             " (including nodes correctly running the daemon pod).", "integer"),
        _col("Current", "The number of nodes that are running at least 1 daemon pod and are"
             " supposed to run the daemon pod.", "integer"),
        _col("Ready", "The number of nodes that should be running the daemon pod and have"
             " one or more of the daemon pod running and ready.", "integer"),
        _col("Up-to-date", "The total number of nodes that are running updated daemon pod",
             "integer"),
        _col("Available", "The number of nodes that should be running the daemon pod and"
             " have one or more of the daemon pod running and available (ready for at least"
             " spec.minReadySeconds)", "integer"),
        _col("Node Selector", "NodeSelector is a selector which must be true for the pod to"
             " fit on a node."),
        AGE, *_TEMPLATE_WIDE,
    ],
    ("batch", "jobs"): [
        NAME, _col("Status", "Status of the job."),
        _col("Completions", "The number of pods which reached phase Succeeded."),
        _col("Duration", "Time required to complete the job."), AGE, *_TEMPLATE_WIDE,
    ],
    ("batch", "cronjobs"): [
        NAME, _col("Schedule", "The schedule in Cron format, see"
                   " https://en.wikipedia.org/wiki/Cron."),
        _col("Timezone", "The time zone name for the given schedule, see"
             " https://en.wikipedia.org/wiki/List_of_tz_database_time_zones."),
        _col("Suspend", "This flag tells the controller to suspend subsequent executions, it"
             " does not apply to already started executions.", "boolean"),
        _col("Active", "A list of pointers to currently running jobs.", "integer"),
        _col("Last Schedule", "Information when was the last time the job was successfully"
             " scheduled."),
        AGE, *_TEMPLATE_WIDE,
    ],
    ("", "namespaces"): [NAME, _col("Status", "The status of the namespace"), AGE],
    ("", "nodes"): [
        NAME, _col("Status", "The status of the node"), _col("Roles", "The roles of the node"),
        AGE, _col("Version", "Kubelet Version reported by the node."),
        _col("Internal-IP", "List of addresses reachable to the node.", wide=True),
        _col("External-IP", "List of addresses reachable to the node.", wide=True),
        _col("OS-Image", "OS Image reported by the node from /etc/os-release (e.g. Debian"
             " GNU/Linux 7 (wheezy)).", wide=True),
        _col("Kernel-Version", "Kernel Version reported by the node from 'uname -r' (e.g."
             " 3.16.0-0.bpo.4-amd64).", wide=True),
        _col("Container-Runtime", "ContainerRuntime Version reported by the node through"
             " runtime remote API (e.g. containerd://1.4.2).", wide=True),
    ],
    ("", "events"): [
        _col("Last Seen", "The time at which the most recent occurrence of this event was"
             " recorded."),
        _col("Type", "Type of this event (Normal, Warning), new types could be added in the"
             " future"),
        _col("Reason", "This should be a short, machine understandable string that gives the"
             " reason for the transition into the object's current status."),
        _col("Object", "The object that this event is about."),
        _col("Subobject", "If referring to a piece of an object instead of an entire object,"
             " this string should contain a valid JSON/Go field access statement, such as"
             " desiredState.manifest.containers[2].", wide=True),
        _col("Source", "The component reporting this event. Should be a short machine"
             " understandable string.", wide=True),
        _col("Message", "A human-readable description of the status of this operation."),
        _col("First Seen", "The time at which the event was first recorded. (Time of server"
             " receipt is in TypeMeta.)", wide=True),
        _col("Count", "The number of times this event has occurred.", wide=True),
        _col("Name", _NAME_DESC, wide=True, fmt="name"),
    ],
    ("", "services"): [
        NAME, _col("Type", "type determines how the Service is exposed."),
        _col("Cluster-IP", "clusterIP is the IP address of the service and is usually"
             " assigned randomly."),
        _col("External-IP", "externalIPs is a list of IP addresses for which nodes in the"
             " cluster will also accept traffic for this service."),
        _col("Port(s)", "The list of ports that are exposed by this service."),
        AGE,
        _col("Selector", "Route service traffic to pods with label keys and values matching"
             " this selector.", wide=True),
    ],
    ("", "configmaps"): [NAME, _col("Data", "Data contains the configuration data."), AGE],
    ("", "secrets"): [
        NAME, _col("Type", "Used to facilitate programmatic handling of secret data."),
        _col("Data", "Data contains the secret data."), AGE,
    ],
    ("", "endpoints"): [
        NAME, _col("Endpoints", "The set of all endpoints is the union of all subsets."), AGE,
    ],
    ("", "serviceaccounts"): [
        NAME, _col("Secrets", "Secrets is a list of the secrets in the same namespace that"
                   " pods running using this ServiceAccount are allowed to use."), AGE,
    ],
    ("coordination.k8s.io", "leases"): [
        NAME, _col("Holder", "holderIdentity contains the identity of the holder of a current"
                   " lease."), AGE,
    ],
    ("", "persistentvolumes"): [
        NAME, _col("Capacity", "capacity is the description of the persistent volume's"
                   " resources and capacity."),
        _col("Access Modes", "accessModes contains all ways the volume can be mounted."),
        _col("Reclaim Policy", "persistentVolumeReclaimPolicy defines what happens to a"
             " persistent volume when released from its claim."),
        _col("Status", "phase indicates if a volume is available, bound to a claim, or"
             " released by a claim."),
        _col("Claim", "claimRef is part of a bi-directional binding between PersistentVolume"
             " and PersistentVolumeClaim."),
        _col("StorageClass", "StorageClass of the pv"),
        _col("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
        _col("Reason", "reason is a brief CamelCase string that describes any failure and is"
             " meant for machine parsing and tidy display in the CLI."),
        AGE,
        _col("VolumeMode", "volumeMode defines if a volume is intended to be used with a"
             " formatted filesystem or to remain in raw block state.", wide=True),
    ],
    ("", "persistentvolumeclaims"): [
        NAME, _col("Status", "phase represents the current phase of PersistentVolumeClaim."),
        _col("Volume", "volumeName is the binding reference to the PersistentVolume backing"
             " this claim."),
        _col("Capacity", "capacity represents the actual resources of the underlying volume."),
        _col("Access Modes", "accessModes contains the actual access modes the volume backing"
             " the PVC has."),
        _col("StorageClass", "StorageClass of the pvc"),
        _col("VolumeAttributesClass", "VolumeAttributesClass of the pvc"), AGE,
        _col("VolumeMode", "volumeMode defines what type of volume is required by the claim.",
             wide=True),
    ],
    ("apiextensions.k8s.io", "customresourcedefinitions"): [
        NAME, _col("Created At", _AGE_DESC, "date"),
    ],
}
COLUMNS[("events.k8s.io", "events")] = COLUMNS[("", "events")]
_DEFAULT_COLUMNS = [NAME, AGE]

# --- row printers ---------------------------------------------------------------------


def _get(obj: Any, *path: str | int) -> Any:
    cur = obj
    for key in path:
        if isinstance(key, int):
            cur = cur[key] if isinstance(cur, list) and -len(cur) <= key < len(cur) else None
        else:
            cur = cur.get(key) if isinstance(cur, Mapping) else None
        if cur is None:
            return None
    return cur


def _meta(obj: Obj) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _age(obj: Obj, now: datetime) -> str:
    return _since(_meta(obj).get("creationTimestamp"), now)


def _format_labels(labels: Mapping[str, str] | None) -> str:
    """``labels.FormatLabels``: sorted ``k=v`` pairs, ``<none>`` when empty."""
    return ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items())) or "<none>"


def _format_label_selector(selector: Mapping[str, Any] | None, *, empty: str = "<none>") -> str:
    """``metav1.FormatLabelSelector`` (``<error>`` when invalid)."""
    try:
        text = str(label_selector_from_dict(selector))
    except StatusError:
        return "<error>"
    return text or empty


def _containers(template_spec: Any) -> list[str]:
    containers = _get(template_spec, "containers") or []
    names = ",".join(str(c.get("name", "")) for c in containers)
    images = ",".join(str(c.get("image", "")) for c in containers)
    return [names, images]


def _has_condition(obj: Obj, kind: str) -> bool:
    for condition in _get(obj, "status", "conditions") or []:
        if condition.get("type") == kind:
            return bool(condition.get("status") == "True")
    return False


def _later(current: datetime | None, timestamp: Any) -> datetime | None:
    value = _parse(timestamp)
    if value is None:
        return current
    return value if current is None or value > current else current


def _parse(timestamp: Any) -> datetime | None:
    """A wire timestamp, or None when missing or unreadable."""
    if not timestamp:
        return None
    try:
        return parse_time(str(timestamp))
    except ValueError:
        return None


_POD_DONE = {
    "Succeeded": [{"type": "Completed", "status": "True", "reason": "Succeeded",
                   "message": "The pod has completed successfully."}],
    "Failed": [{"type": "Completed", "status": "True", "reason": "Failed",
                "message": "The pod failed."}],
}


class _PodState:
    """Accumulators of ``printPod``'s walk over the container statuses."""

    def __init__(self, pod: Obj) -> None:
        status = pod.get("status") or {}
        self.reason: str = status.get("reason") or status.get("phase") or ""
        for condition in status.get("conditions") or []:
            if condition.get("type") == "PodScheduled" and (
                    condition.get("reason") == "SchedulingGated"):
                self.reason = "SchedulingGated"
        self.restarts = 0
        self.ready = 0
        self.last_restart: datetime | None = None
        self.initializing = False

    def count_restarts(self, cs: Mapping[str, Any]) -> None:
        self.restarts += int(cs.get("restartCount") or 0)
        self.last_restart = _later(self.last_restart,
                                   _get(cs, "lastState", "terminated", "finishedAt"))


def _walk_init_containers(pod: Obj, state: _PodState, restartable: set[str]) -> _PodState:
    """The init-container half of ``printPod``: stops at the first init container that is
    not done and sets ``state.reason``; returns the restart counts of sidecar (restartable)
    init containers, which are all that count once the pod is initialized."""
    total_init = len(_get(pod, "spec", "initContainers") or [])
    sidecars = _PodState(pod)
    state.initializing = False
    for i, cs in enumerate(_get(pod, "status", "initContainerStatuses") or []):
        state.count_restarts(cs)
        is_sidecar = cs.get("name") in restartable
        if is_sidecar:
            sidecars.count_restarts(cs)
        terminated = _get(cs, "state", "terminated")
        waiting = _get(cs, "state", "waiting")
        if terminated is not None and int(terminated.get("exitCode") or 0) == 0:
            continue
        if is_sidecar and cs.get("started"):
            state.ready += 1 if cs.get("ready") else 0
            continue
        if terminated is not None:
            state.reason = "Init:" + _termination(terminated)
        elif waiting is not None and waiting.get("reason") and (
                waiting["reason"] != "PodInitializing"):
            state.reason = "Init:" + waiting["reason"]
        else:
            state.reason = f"Init:{i}/{total_init}"
        state.initializing = True
        break
    return sidecars


def _termination(terminated: Mapping[str, Any]) -> str:
    if terminated.get("reason"):
        return str(terminated["reason"])
    if terminated.get("signal"):
        return f"Signal:{terminated['signal']}"
    return f"ExitCode:{int(terminated.get('exitCode') or 0)}"


def _walk_containers(pod: Obj, state: _PodState) -> None:
    has_running = False
    for cs in reversed(_get(pod, "status", "containerStatuses") or []):
        state.count_restarts(cs)
        waiting = _get(cs, "state", "waiting")
        terminated = _get(cs, "state", "terminated")
        if waiting is not None and waiting.get("reason"):
            state.reason = waiting["reason"]
        elif terminated is not None:
            state.reason = _termination(terminated)
        elif cs.get("ready") and _get(cs, "state", "running") is not None:
            has_running = True
            state.ready += 1
    # A pod whose last container completed but another still runs is Running or NotReady.
    if state.reason == "Completed" and has_running:
        state.reason = "Running" if _has_condition(pod, "Ready") else "NotReady"


def _pod_row(pod: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    restartable = {c.get("name") for c in spec.get("initContainers") or []
                   if c.get("restartPolicy") == "Always"}
    total = len(spec.get("containers") or []) + sum(
        1 for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always")
    state = _PodState(pod)
    sidecars = _walk_init_containers(pod, state, restartable)
    if not state.initializing or _has_condition(pod, "Initialized"):
        state.restarts, state.last_restart = sidecars.restarts, sidecars.last_restart
        _walk_containers(pod, state)
    phase = status.get("phase") or ""
    if _meta(pod).get("deletionTimestamp"):
        if status.get("reason") == "NodeLost":
            state.reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            state.reason = "Terminating"
    restarts = str(state.restarts)
    if state.restarts and state.last_restart is not None:
        ago = human_duration((now - state.last_restart).total_seconds())
        restarts = f"{state.restarts} ({ago} ago)"
    pod_ips = status.get("podIPs") or []
    ip = (pod_ips[0].get("ip") if pod_ips else status.get("podIP")) or "<none>"
    cells = [_meta(pod).get("name", ""), f"{state.ready}/{total}", state.reason, restarts,
             _age(pod, now), ip, spec.get("nodeName") or "<none>",
             status.get("nominatedNodeName") or "<none>", _readiness_gates(pod)]
    return cells, _POD_DONE.get(phase, [])


def _readiness_gates(pod: Obj) -> str:
    gates = _get(pod, "spec", "readinessGates") or []
    if not gates:
        return "<none>"
    conditions = _get(pod, "status", "conditions") or []
    true = 0
    for gate in gates:
        match = next((c for c in conditions if c.get("type") == gate.get("conditionType")), None)
        true += 1 if match is not None and match.get("status") == "True" else 0
    return f"{true}/{len(gates)}"


def _deployment_row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    ready = f"{int(status.get('readyReplicas') or 0)}/{int(spec.get('replicas') or 0)}"
    selector = _format_label_selector(spec.get("selector"), empty="")
    return [_meta(obj).get("name", ""), ready, int(status.get("updatedReplicas") or 0),
            int(status.get("availableReplicas") or 0), _age(obj, now),
            *_containers(_get(spec, "template", "spec")), selector], []


def _replicas_row(*, map_selector: bool) -> RowFn:
    """ReplicaSets (LabelSelector) and ReplicationControllers (plain map selector)."""
    def row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        selector = spec.get("selector")
        shown = _format_labels(selector) if map_selector else _format_label_selector(selector)
        return [_meta(obj).get("name", ""), int(spec.get("replicas") or 0),
                int(status.get("replicas") or 0), int(status.get("readyReplicas") or 0),
                _age(obj, now), *_containers(_get(spec, "template", "spec")), shown], []
    return row


def _statefulset_row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    ready = f"{int(status.get('readyReplicas') or 0)}/{int(spec.get('replicas') or 0)}"
    return [_meta(obj).get("name", ""), ready, _age(obj, now),
            *_containers(_get(spec, "template", "spec"))], []


def _daemonset_row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    counts = [int(status.get(f) or 0) for f in (
        "desiredNumberScheduled", "currentNumberScheduled", "numberReady",
        "updatedNumberScheduled", "numberAvailable")]
    return [_meta(obj).get("name", ""), *counts,
            _format_labels(_get(spec, "template", "spec", "nodeSelector")), _age(obj, now),
            *_containers(_get(spec, "template", "spec")),
            _format_label_selector(spec.get("selector"))], []


def _job_status(obj: Obj) -> str:
    for condition, shown in (("Complete", "Complete"), ("Failed", "Failed")):
        if _has_condition(obj, condition):
            return shown
    if _meta(obj).get("deletionTimestamp"):
        return "Terminating"
    for condition in ("Suspended", "FailureTarget"):
        if _has_condition(obj, condition):
            return condition
    return "Running"


def _job_row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
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
    start, end = _parse(status.get("startTime")), _parse(status.get("completionTime")) or now
    if start is not None:
        duration = human_duration((end - start).total_seconds())
    return [_meta(obj).get("name", ""), _job_status(obj), completions, duration,
            _age(obj, now), *_containers(_get(spec, "template", "spec")),
            _format_label_selector(spec.get("selector"))], []


def _cronjob_row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    last = _since(status["lastScheduleTime"], now) if status.get("lastScheduleTime") else (
        "<none>")
    suspend = spec.get("suspend")
    job_spec = _get(spec, "jobTemplate", "spec")
    return [_meta(obj).get("name", ""), spec.get("schedule", ""),
            spec.get("timeZone") or "<none>",
            "<unset>" if suspend is None else ("True" if suspend else "False"),
            len(status.get("active") or []), last, _age(obj, now),
            *_containers(_get(job_spec, "template", "spec")),
            _format_label_selector(_get(job_spec, "selector"))], []


def _namespace_row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    return [_meta(obj).get("name", ""), _get(obj, "status", "phase") or "", _age(obj, now)], []


def _node_row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    status = obj.get("status") or {}
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    shown = ["Unknown" if ready is None else (
        "Ready" if ready.get("status") == "True" else "NotReady")]
    if _get(obj, "spec", "unschedulable"):
        shown.append("SchedulingDisabled")
    roles: set[str] = set()
    for key, value in (_meta(obj).get("labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/") and len(key) > 24:
            roles.add(key[24:])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    info = status.get("nodeInfo") or {}
    addresses = status.get("addresses") or []

    def address(kind: str) -> str:
        return next((a.get("address", "") for a in addresses if a.get("type") == kind),
                    "<none>")

    return [_meta(obj).get("name", ""), ",".join(shown), ",".join(sorted(roles)) or "<none>",
            _age(obj, now), info.get("kubeletVersion", ""), address("InternalIP"),
            address("ExternalIP"), info.get("osImage") or "<unknown>",
            info.get("kernelVersion") or "<unknown>",
            info.get("containerRuntimeVersion") or "<unknown>"], []


def _core_event(obj: Obj) -> Mapping[str, Any]:
    """An events.k8s.io/v1 Event in core/v1 field names (the printer is shared)."""
    if "involvedObject" in obj or ("regarding" not in obj and "note" not in obj):
        return obj
    return {"metadata": obj.get("metadata") or {}, "involvedObject": obj.get("regarding") or {},
            "type": obj.get("type"), "reason": obj.get("reason"), "message": obj.get("note"),
            "firstTimestamp": obj.get("deprecatedFirstTimestamp"),
            "lastTimestamp": obj.get("deprecatedLastTimestamp"),
            "count": obj.get("deprecatedCount"), "source": obj.get("deprecatedSource") or {},
            "eventTime": obj.get("eventTime"), "series": obj.get("series"),
            "reportingComponent": obj.get("reportingController"),
            "reportingInstance": obj.get("reportingInstance")}


def _event_row(raw: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    obj = _core_event(raw)
    first = _since(obj.get("firstTimestamp") or obj.get("eventTime"), now)
    last = _since(obj["lastTimestamp"], now) if obj.get("lastTimestamp") else first
    count = int(obj.get("count") or 0)
    series = obj.get("series")
    if series is not None:
        last = _since(series.get("lastObservedTime"), now)
        count = int(series.get("count") or 0)
    elif count == 0:
        count = 1  # singleton events of the new API carry no count
    involved = obj.get("involvedObject") or {}
    kind = str(involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = obj.get("source") or {}
    component = source.get("component") or obj.get("reportingComponent") or ""
    host = source.get("host") or obj.get("reportingInstance") or ""
    return [last, obj.get("type") or "", obj.get("reason") or "", target,
            involved.get("fieldPath") or "", f"{component}, {host}" if host else component,
            str(obj.get("message") or "").strip(), first, count,
            _meta(obj).get("name", "")], []


def _service_row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec = obj.get("spec") or {}
    svc_type = spec.get("type") or "ClusterIP"
    cluster_ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    ports = ",".join(
        f"{p.get('port', 0)}:{p['nodePort']}/{p.get('protocol') or 'TCP'}" if p.get("nodePort")
        else f"{p.get('port', 0)}/{p.get('protocol') or 'TCP'}" for p in spec.get("ports") or [])
    return [_meta(obj).get("name", ""), svc_type, cluster_ips[0] if cluster_ips else "<none>",
            _external_ip(obj, svc_type), ports or "<none>", _age(obj, now),
            _format_labels(spec.get("selector"))], []


def _external_ip(obj: Obj, svc_type: str) -> str:
    """``getServiceExternalIP`` with wide output (no clipping of load-balancer lists)."""
    external = list(_get(obj, "spec", "externalIPs") or [])
    if svc_type in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if svc_type == "ExternalName":
        return str(_get(obj, "spec", "externalName") or "")
    if svc_type == "LoadBalancer":
        ingress = _get(obj, "status", "loadBalancer", "ingress") or []
        lb = sorted({i.get("ip") or i.get("hostname") for i in ingress
                     if i.get("ip") or i.get("hostname")})
        return ",".join(lb + external) or "<pending>"
    return "<unknown>"


def _endpoints_cell(obj: Obj) -> str:
    """``formatEndpoints``: the first three ``ip:port`` pairs, then ``+ N more...``."""
    subsets = obj.get("subsets") or []
    if not subsets:
        return "<none>"
    shown: list[str] = []
    count = 0
    for subset in subsets:
        ips = [a.get("ip", "") for a in subset.get("addresses") or []]
        ports = subset.get("ports") or []
        pairs = [[ip] for ip in ips] if not ports else [
            [f"[{ip}]:{p.get('port', 0)}" if ":" in ip else f"{ip}:{p.get('port', 0)}"
             for ip in ips] for p in ports]
        for group in pairs:
            count += len(group)
            shown.extend(group[:max(0, 3 - len(shown))])
    text = ",".join(shown)
    return f"{text} + {count - 3} more..." if count > 3 else text


def _name_and(*cells: Callable[[Obj], Any]) -> RowFn:
    """A printer whose cells are Name, ``cells`` and Age."""
    def row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
        return [_meta(obj).get("name", ""), *(cell(obj) for cell in cells), _age(obj, now)], []
    return row


_ACCESS_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                 ("ReadWriteOncePod", "RWOP"))


def _access_modes(modes: list[str] | None) -> str:
    return ",".join(short for mode, short in _ACCESS_MODES if mode in (modes or []))


def _storage_class(obj: Obj) -> str:
    annotations = _meta(obj).get("annotations") or {}
    annotation = annotations.get("volume.beta.kubernetes.io/storage-class")
    if annotation is not None:
        return str(annotation)
    return str(_get(obj, "spec", "storageClassName") or "")


def _pv_row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    claim = spec.get("claimRef")
    claim_text = f"{claim.get('namespace', '')}/{claim.get('name', '')}" if claim else ""
    phase = "Terminating" if _meta(obj).get("deletionTimestamp") else status.get("phase") or ""
    return [_meta(obj).get("name", ""), _get(spec, "capacity", "storage") or "0",
            _access_modes(spec.get("accessModes")),
            spec.get("persistentVolumeReclaimPolicy") or "", phase, claim_text,
            _storage_class(obj), spec.get("volumeAttributesClassName") or "<unset>",
            status.get("reason") or "", _age(obj, now), spec.get("volumeMode") or "<unset>"], []


def _pvc_row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    phase = "Terminating" if _meta(obj).get("deletionTimestamp") else status.get("phase") or ""
    bound = bool(spec.get("volumeName"))
    capacity = (_get(status, "capacity", "storage") or "0") if bound else ""
    modes = _access_modes(status.get("accessModes")) if bound else ""
    return [_meta(obj).get("name", ""), phase, spec.get("volumeName") or "", capacity, modes,
            _storage_class(obj), spec.get("volumeAttributesClassName") or "<unset>",
            _age(obj, now), spec.get("volumeMode") or "<unset>"], []


def _created_at_row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    created = _parse(_meta(obj).get("creationTimestamp"))
    text = created.strftime("%Y-%m-%dT%H:%M:%SZ") if created else "0001-01-01T00:00:00Z"
    return [_meta(obj).get("name", ""), text], []


PRINTERS: dict[tuple[str, str], RowFn] = {
    ("", "pods"): _pod_row,
    ("apps", "deployments"): _deployment_row,
    ("apps", "replicasets"): _replicas_row(map_selector=False),
    ("", "replicationcontrollers"): _replicas_row(map_selector=True),
    ("apps", "statefulsets"): _statefulset_row,
    ("apps", "daemonsets"): _daemonset_row,
    ("batch", "jobs"): _job_row,
    ("batch", "cronjobs"): _cronjob_row,
    ("", "namespaces"): _namespace_row,
    ("", "nodes"): _node_row,
    ("", "events"): _event_row,
    ("events.k8s.io", "events"): _event_row,
    ("", "services"): _service_row,
    ("", "configmaps"): _name_and(lambda o: len(o.get("data") or {}) + len(
        o.get("binaryData") or {})),
    ("", "secrets"): _name_and(lambda o: o.get("type") or "", lambda o: len(o.get("data") or {})),
    ("", "endpoints"): _name_and(_endpoints_cell),
    ("", "serviceaccounts"): _name_and(lambda o: len(o.get("secrets") or [])),
    ("coordination.k8s.io", "leases"): _name_and(lambda o: _get(o, "spec", "holderIdentity") or ""),
    ("", "persistentvolumes"): _pv_row,
    ("", "persistentvolumeclaims"): _pvc_row,
    ("apiextensions.k8s.io", "customresourcedefinitions"): _created_at_row,
}

# --- custom resource columns (apiextensions tableconvertor) ---------------------------

_STEP = re.compile(
    r"""\.(?P<field>(?:[^.\[\\]|\\.)+)"""
    r"""|\[(?P<index>-?\d+)\]|\[(?P<star>\*)\]"""
    r"""|\[(?P<q>['"])(?P<key>.*?)(?P=q)\]"""
    r"""|\[\?\(@(?P<fpath>(?:\.[\w-]+)+)\s*(?P<op>==|!=)\s*(?P<lit>'[^']*'|"[^"]*"|[^)\s]+)\)\]"""
)


def _parse_jsonpath(expression: str) -> list[re.Match[str]]:
    text = expression.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    text = text.removeprefix("$")
    steps: list[re.Match[str]] = []
    pos = 0
    while pos < len(text):
        match = _STEP.match(text, pos)
        if match is None:
            raise ValueError(f"unsupported JSONPath at {text[pos:]!r}")
        steps.append(match)
        pos = match.end()
    return steps


def _literal(text: str) -> Any:
    if text[:1] in "'\"":
        return text[1:-1]
    try:
        return json.loads(text)
    except ValueError:
        return text


def _apply(step: re.Match[str], values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if step["field"] is not None or step["key"] is not None:
            key = step["key"] if step["key"] is not None else re.sub(r"\\(.)", r"\1",
                                                                      step["field"])
            if isinstance(value, Mapping) and key in value:
                out.append(value[key])
        elif step["index"] is not None and isinstance(value, list):
            index = int(step["index"])
            if -len(value) <= index < len(value):
                out.append(value[index])
        elif step["star"] is not None:
            out.extend(value.values() if isinstance(value, Mapping) else (
                value if isinstance(value, list) else []))
        elif step["op"] is not None and isinstance(value, list):
            want = _literal(step["lit"])
            for item in value:
                got = _get(item, *step["fpath"].split(".")[1:])
                if got is not None and (got == want) == (step["op"] == "=="):
                    out.append(item)
    return out


def evaluate_jsonpath(expression: str, obj: Any) -> list[Any]:
    """All results of a JSONPath (the subset CRD printer columns use) on ``obj``."""
    values = [obj]
    for step in _parse_jsonpath(expression):
        values = _apply(step, values)
    return values


def _go_text(value: Any) -> str:
    """How the JSONPath printer renders a value (Go's ``fmt.Sprint`` of decoded JSON)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    if isinstance(value, Mapping):
        return "map[" + " ".join(f"{k}:{_go_text(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(_go_text(v) for v in value) + "]"
    return str(value)


def _custom_cell(column: dict[str, Any], obj: Obj, now: datetime) -> Any:
    """``cellForJSONValue``: None when the path finds nothing or the type does not fit."""
    try:
        results = evaluate_jsonpath(str(column.get("jsonPath", "")), obj)
    except ValueError:
        return None
    if not results or results[0] is None:
        return None
    value, kind = results[0], column.get("type", "string")
    if kind == "string":
        return _go_text(value)
    if kind == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    if kind == "number" and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        return _since(value, now)
    return None


def _custom_columns(columns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    defs = [NAME]
    for c in columns:
        desc = c.get("description") or (
            f"Custom resource definition column (in JSONPath format): {c.get('jsonPath', '')}")
        defs.append({"name": c.get("name", ""), "type": c.get("type", "string"),
                     "format": c.get("format", ""), "description": desc,
                     "priority": int(c.get("priority") or 0)})
    return defs


_CR_AGE: dict[str, Any] = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp",
           "description": _AGE_DESC}

# --- the Table ------------------------------------------------------------------------


def _row_object(obj: Obj, include_object: str, version: str) -> Any:
    if include_object == "None":
        return None
    if include_object == "Object":
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": f"meta.k8s.io/{version}",
            "metadata": dict(_meta(obj))}


def to_table(
    group: str, resource: str, objects: list[dict[str, Any]], *, now: datetime,
    include_object: str = "Metadata", list_metadata: Mapping[str, Any] | None = None,
    printer_columns: list[dict[str, Any]] | None = None, with_column_definitions: bool = True,
    version: str = "v1",
) -> dict[str, Any]:
    """Render ``objects`` as a ``meta.k8s.io/<version>`` Table.

    ``printer_columns`` not None marks a custom resource (an empty list gets the default Age
    column). ``list_metadata`` supplies ``resourceVersion``/``continue``/
    ``remainingItemCount``; pass the object's resourceVersion for a single-object GET.
    """
    if include_object not in ("None", "Metadata", "Object"):
        raise StatusError(400, "BadRequest",
                          f'unrecognized includeObject value: "{include_object}"')
    now = now if now.tzinfo else now.replace(tzinfo=UTC)
    row_fn, columns = _printer_for(group, resource, printer_columns)
    rows = []
    for obj in objects:
        cells, conditions = row_fn(obj, now)
        row: dict[str, Any] = {"cells": cells}
        if conditions:
            row["conditions"] = conditions
        row["object"] = _row_object(obj, include_object, version)
        rows.append(row)
    metadata = {k: v for k, v in (list_metadata or {}).items()
                if k in ("resourceVersion", "continue", "remainingItemCount") and v not in (
                    "", None)}
    return {"kind": "Table", "apiVersion": f"meta.k8s.io/{version}", "metadata": metadata,
            "columnDefinitions": columns if with_column_definitions else [], "rows": rows}


def _printer_for(group: str, resource: str, printer_columns: list[dict[str, Any]] | None,
                 ) -> tuple[RowFn, list[dict[str, Any]]]:
    if printer_columns is not None:
        custom = printer_columns or [_CR_AGE]

        def custom_row(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
            return [_meta(obj).get("name", ""), *(_custom_cell(c, obj, now) for c in custom)], []

        return custom_row, _custom_columns(custom)
    if (group, resource) in PRINTERS:
        return PRINTERS[(group, resource)], COLUMNS[(group, resource)]
    return _name_and(), _DEFAULT_COLUMNS


# --- content negotiation --------------------------------------------------------------

_SERVABLE = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf",
             "application/*", "*/*")


def table_version(accept_header: str) -> str | None:
    """The Table version (``v1``/``v1beta1``) the Accept header asks for, or None when the
    first clause the server can serve is a plain object/list representation."""
    clauses: list[tuple[float, int, str, dict[str, str]]] = []
    for position, clause in enumerate(accept_header.split(",")):
        media, *raw_params = (part.strip() for part in clause.split(";"))
        pairs = (p.partition("=") for p in raw_params)
        params = {k.strip().lower(): v.strip() for k, _, v in pairs}
        try:
            q = float(params.pop("q", "1"))
        except ValueError:
            q = 1.0
        if media and q > 0:
            clauses.append((-q, position, media.lower(), params))
    for _, _, media, params in sorted(clauses):
        if media not in _SERVABLE:
            continue
        if "as" not in params:
            return None
        json_ok = media in ("application/json", "application/*", "*/*")
        if (json_ok and params["as"] == "Table" and params.get("g") == "meta.k8s.io"
                and params.get("v") in ("v1", "v1beta1")):
            return params["v"]
    return None


def table_accepted(accept_header: str) -> bool:
    """True when the response to this Accept header should be a ``metav1.Table``."""
    return table_version(accept_header) is not None
