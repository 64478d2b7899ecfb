"""Printers of the kinds that constrain or describe workloads: HorizontalPodAutoscalers,
PodDisruptionBudgets, PriorityClasses, RuntimeClasses, PodTemplates, ControllerRevisions,
ResourceQuotas and ComponentStatuses (``printHorizontalPodAutoscaler``,
``printPodDisruptionBudget``, ``printPriorityClass``, ``printRuntimeClass``,
``printPodTemplate``, ``printControllerRevision``, ``printResourceQuota``,
``printComponentStatus``). HPAs are printed from their stored (v2) form, as upstream
prints the internal one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubegc.api.resources import split_api_version
from kubegc.registry.printers.helpers import (
    AGE,
    NAME,
    Conditions,
    Obj,
    age,
    column,
    format_labels,
    layout_container_cells,
    lookup,
    name_and,
    object_meta,
)

HPA_COLUMN_DEFINITIONS = [
    NAME, column("Reference", "reference to scaled resource; horizontal pod autoscaler will"
                 " learn the current resource consumption and will set the desired number of"
                 " pods by using its Scale subresource."),
    column("Targets", "metrics contains the specifications for which to use to calculate the"
           " desired replica count."),
    column("MinPods", "minReplicas is the lower limit for the number of replicas to which the"
           " autoscaler can scale down."),
    column("MaxPods", "maxReplicas is the upper limit for the number of replicas to which the"
           " autoscaler can scale up."),
    column("Replicas", "currentReplicas is current number of replicas of pods managed by this"
           " autoscaler."), AGE,
]
PDB_COLUMN_DEFINITIONS = [
    NAME, column("Min Available", "The minimum number of pods that must be available."),
    column("Max Unavailable", "The maximum number of pods that may be unavailable."),
    column("Allowed Disruptions", "Calculated number of pods that may be disrupted at this"
           " time.", "integer"), AGE,
]
PRIORITY_CLASS_COLUMN_DEFINITIONS = [
    NAME, column("Value", "value represents the integer value of this priority class.",
                 "integer"),
    column("Global-Default", "globalDefault specifies whether this PriorityClass should be"
           " considered as the default priority for pods that do not have any priority class.",
           "boolean"), AGE,
    column("PreemptionPolicy", "preemptionPolicy is the Policy for preempting pods with lower"
           " priority."),
]
RUNTIME_CLASS_COLUMN_DEFINITIONS = [NAME, column("Handler", ""), AGE]
POD_TEMPLATE_COLUMN_DEFINITIONS = [
    NAME, column("Containers", "Names of each container in the template."),
    column("Images", "Images referenced by each container in the template."),
    column("Pod Labels", "The labels for the pod template."),
]
CONTROLLER_REVISION_COLUMN_DEFINITIONS = [
    NAME, column("Controller", "Controller of the object"),
    column("Revision", "Revision indicates the revision of the state represented by Data."),
    AGE,
]
RESOURCE_QUOTA_COLUMN_DEFINITIONS = [
    NAME, AGE, column("Request", "Request represents a minimum amount of cpu/memory that a"
                      " container may consume."),
    column("Limit", "Limits control the maximum amount of cpu/memory that a container may use"
           " independent of contention on the node."),
]
COMPONENT_STATUS_COLUMN_DEFINITIONS = [
    NAME, column("Status", "Status of the component conditions"),
    column("Message", "Message of the component conditions"),
    column("Error", "Error of the component conditions"),
]


def _metric(spec: Any, status: Any) -> str:
    """One metric of ``formatHPAMetrics``: ``current/target`` (current ``<unknown>``)."""
    kind = spec.get("type")
    key = {"External": "external", "Pods": "pods", "Object": "object",
           "Resource": "resource", "ContainerResource": "containerResource"}.get(kind)
    if key is None or not isinstance(spec.get(key), dict):
        return "<unknown type>"
    source, current = spec[key], (status or {}).get(key) or {}
    target, now = source.get("target") or {}, current.get("current") or {}
    if key in ("resource", "containerResource"):
        if target.get("averageValue") is not None:
            shown = now.get("averageValue", "<unknown>")
            return f"{source.get('name', '')}: {shown}/{target['averageValue']}"
        shown = f"{now['averageUtilization']}%" if now.get(
            "averageUtilization") is not None else "<unknown>"
        goal = f"{target['averageUtilization']}%" if target.get(
            "averageUtilization") is not None else "<auto>"
        return f"{source.get('name', '')}: {shown}/{goal}"
    if key == "pods":
        return f"{now.get('averageValue', '<unknown>')}/{target.get('averageValue', '')}"
    if target.get("averageValue") is not None:
        return f"{now.get('averageValue', '<unknown>')}/{target['averageValue']} (avg)"
    return f"{now.get('value', '<unknown>')}/{target.get('value', '')}"


def _targets(obj: Obj) -> str:
    specs = [s for s in lookup(obj, "spec", "metrics") or [] if isinstance(s, dict)]
    if not specs:
        return "<none>"
    statuses = lookup(obj, "status", "currentMetrics") or []
    shown = [_metric(s, statuses[i] if i < len(statuses) else None)
             for i, s in enumerate(specs)]
    text = ", ".join(shown[:2])
    return f"{text} + {len(shown) - 2} more..." if len(shown) > 2 else text


def print_hpa(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    ref = lookup(obj, "spec", "scaleTargetRef") or {}
    minimum = lookup(obj, "spec", "minReplicas")
    return [object_meta(obj).get("name", ""), f"{ref.get('kind', '')}/{ref.get('name', '')}",
            _targets(obj), "<unset>" if minimum is None else str(minimum),
            int(lookup(obj, "spec", "maxReplicas") or 0),
            int(lookup(obj, "status", "currentReplicas") or 0), age(obj, now)], []


def _int_or_string(value: Any) -> str:
    return "N/A" if value is None else str(value)


print_pdb = name_and(lambda o: _int_or_string(lookup(o, "spec", "minAvailable")),
                     lambda o: _int_or_string(lookup(o, "spec", "maxUnavailable")),
                     lambda o: int(lookup(o, "status", "disruptionsAllowed") or 0))


def print_priority_class(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    return [object_meta(obj).get("name", ""), int(obj.get("value") or 0),
            bool(obj.get("globalDefault")), age(obj, now), obj.get("preemptionPolicy") or ""], []


print_runtime_class = name_and(lambda o: o.get("handler") or "")


def print_pod_template(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    template = obj.get("template") or {}
    return [object_meta(obj).get("name", ""),
            *layout_container_cells(template.get("spec") if isinstance(template, dict) else {}),
            format_labels(lookup(template, "metadata", "labels"))], []


def _controller(obj: Obj) -> str:
    """``formatResourceName`` of the controller reference: ``kind.group/name``."""
    for ref in object_meta(obj).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            group, _ = split_api_version(str(ref.get("apiVersion", "")))
            kind = str(ref.get("kind", "")).lower() + (f".{group}" if group else "")
            return f"{kind}/{ref.get('name', '')}"
    return "<none>"


print_controller_revision = name_and(_controller, lambda o: int(o.get("revision") or 0))


def print_resource_quota(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    hard = lookup(obj, "status", "hard") or {}
    used = lookup(obj, "status", "used") or {}
    requests: list[str] = []
    limits: list[str] = []
    for name in sorted(hard):
        cell = f"{name}: {used.get(name, '0')}/{hard[name]}"
        (limits if name.split(".")[0] == "limits" and "." in name else requests).append(cell)
    return [object_meta(obj).get("name", ""), age(obj, now), ", ".join(requests),
            ", ".join(limits)], []


def print_component_status(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    status, message, error = "Unknown", "", ""
    for condition in obj.get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "Healthy":
            status = "Healthy" if condition.get("status") == "True" else "Unhealthy"
            message, error = condition.get("message", ""), condition.get("error", "")
            break
    return [object_meta(obj).get("name", ""), status, message, error], []
