"""HorizontalPodAutoscalers, stored as autoscaling/v2 and served as v2 and v1 (cf.
pkg/registry/autoscaling/horizontalpodautoscaler, pkg/apis/autoscaling/v1/conversion.go).

v1 carries only a CPU utilization target; what else a v2 object holds travels in v1 as the
round-trip annotations upstream uses (``autoscaling.alpha.kubernetes.io/metrics``,
``current-metrics``, ``conditions``, ``behavior``), so a client that reads and writes v1
keeps every v2 field. The metric lists in those annotations are in v1's own shapes
(``targetAverageUtilization``, ``metricName``...), the behavior in Go's field names, as
upstream marshals them.

Stored only: no horizontal pod autoscaler controller scales anything (status keeps
``desiredReplicas: 0``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kubegc.api.errors import StatusCause, field_error
from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext, stored
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.validation.paths import required, set_default, value_at

V1, V2 = "autoscaling/v1", "autoscaling/v2"
_PREFIX = "autoscaling.alpha.kubernetes.io/"
METRICS, CURRENT_METRICS = _PREFIX + "metrics", _PREFIX + "current-metrics"
CONDITIONS, BEHAVIOR = _PREFIX + "conditions", _PREFIX + "behavior"
_ROUND_TRIP = (METRICS, CURRENT_METRICS, CONDITIONS, BEHAVIOR)
DEFAULT_CPU_UTILIZATION = 80


# -- defaults and validation (of the v2, internal shape) --------------------------------------


def default_hpa(obj: Obj) -> None:
    """A v1 object is converted first (v1's defaults, then ``v1 → internal``); then
    ``SetDefaults_HorizontalPodAutoscaler`` of v2: minReplicas 1, a CPU target of 80% when
    no metric is given, and the behavior's unset rules filled."""
    if obj.get("apiVersion") == V1:
        set_default(obj, "spec.minReplicas", 1)
        converted = v1_to_v2(obj)
        obj.clear()
        obj.update(converted)
    set_default(obj, "spec.minReplicas", 1)
    spec = obj["spec"]
    if not spec.get("metrics"):
        spec["metrics"] = [_cpu_metric(DEFAULT_CPU_UTILIZATION)]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _rules(behavior.get("scaleUp"), window=0, policies=[
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15}])
        behavior["scaleDown"] = _rules(behavior.get("scaleDown"), window=300, policies=[
            {"type": "Percent", "value": 100, "periodSeconds": 15}])


def _rules(rules: Any, *, window: int, policies: list[dict[str, Any]]) -> dict[str, Any]:
    """``GenerateHPAScaleUpRules`` / ``GenerateHPAScaleDownRules``."""
    out = dict(rules) if isinstance(rules, dict) else {}
    out.setdefault("stabilizationWindowSeconds", window)
    out.setdefault("selectPolicy", "Max")
    if not out.get("policies"):
        out["policies"] = policies
    return out


def _cpu_metric(utilization: Any) -> dict[str, Any]:
    return {"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": utilization}}}


def prepare_hpa_create(obj: Obj) -> None:
    """``PrepareForCreate``: a create sets no status; the v2 zero status."""
    obj["status"] = {"desiredReplicas": 0, "currentMetrics": None}


def validate_hpa(obj: Obj) -> list[StatusCause]:
    """``validateHorizontalPodAutoscalerSpec``: replica bounds and the scale target."""
    causes: list[StatusCause] = []
    minimum, maximum = value_at(obj, "spec.minReplicas"), value_at(obj, "spec.maxReplicas")
    if isinstance(minimum, int) and minimum < 1:
        causes.append(field_error("FieldValueInvalid", "spec.minReplicas",
                                  "must be greater than or equal to 1", minimum))
    if not isinstance(maximum, int) or maximum < 1:
        causes.append(field_error("FieldValueInvalid", "spec.maxReplicas",
                                  "must be greater than 0", maximum or 0, go_type="int32"))
    elif isinstance(minimum, int) and maximum < minimum:
        causes.append(field_error("FieldValueInvalid", "spec.maxReplicas",
                                  "must be greater than or equal to `minReplicas`", maximum))
    return causes + required(obj, "spec.scaleTargetRef.kind", "spec.scaleTargetRef.name")


# -- v1 <-> v2 (the storage version) -----------------------------------------------------------


def v2_to_v1(obj: Obj) -> Obj:
    """``Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler``."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    meta = dict(obj.get("metadata") or {})
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items()
                   if k not in _ROUND_TRIP}
    out_spec = {k: spec[k] for k in ("scaleTargetRef", "minReplicas", "maxReplicas")
                if k in spec}
    others = []
    for metric in spec.get("metrics") or []:
        utilization = _cpu_utilization(metric, "target")
        if utilization is not None:
            out_spec.setdefault("targetCPUUtilizationPercentage", utilization)
        else:
            others.append(_metric_to_v1(metric))
    out_status: dict[str, Any] = {k: status[k] for k in ("observedGeneration", "lastScaleTime")
                                  if k in status}
    out_status["currentReplicas"] = status.get("currentReplicas", 0)
    out_status["desiredReplicas"] = status.get("desiredReplicas", 0)
    for metric in status.get("currentMetrics") or []:
        utilization = _cpu_utilization(metric, "current")
        if utilization is not None:
            out_status["currentCPUUtilizationPercentage"] = utilization
            break
    for key, value in ((METRICS, others),
                       (CURRENT_METRICS, [_metric_to_v1(m) for m in status.get(
                           "currentMetrics") or []]),
                       (BEHAVIOR, _go_fields(spec.get("behavior"))),
                       (CONDITIONS, status.get("conditions"))):
        if value:
            annotations[key] = json.dumps(value, separators=(",", ":"))
    _set_annotations(meta, annotations)
    return {"apiVersion": V1, "kind": obj.get("kind", "HorizontalPodAutoscaler"),
            "metadata": meta, "spec": out_spec, "status": out_status}


def v1_to_v2(obj: Obj) -> Obj:
    """``Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler``."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    meta = dict(obj.get("metadata") or {})
    annotations = dict(meta.get("annotations") or {})
    out_spec = {k: spec[k] for k in ("scaleTargetRef", "minReplicas", "maxReplicas")
                if k in spec}
    metrics = [_metric_to_v2(m) for m in _annotation_list(annotations, METRICS)]
    if spec.get("targetCPUUtilizationPercentage") is not None:
        metrics.append(_cpu_metric(spec["targetCPUUtilizationPercentage"]))
    # v1's implicit CPU target, made explicit (the controller used to apply it)
    out_spec["metrics"] = metrics or [_cpu_metric(DEFAULT_CPU_UTILIZATION)]
    behavior = _from_go_fields(_annotation_value(annotations, BEHAVIOR))
    if behavior:
        out_spec["behavior"] = behavior
    out_status: dict[str, Any] = {k: status[k] for k in (
        "observedGeneration", "lastScaleTime", "currentReplicas") if k in status}
    out_status["desiredReplicas"] = status.get("desiredReplicas", 0)
    current = [_metric_to_v2(m) for m in _annotation_list(annotations, CURRENT_METRICS)]
    if CURRENT_METRICS not in annotations and status.get(
            "currentCPUUtilizationPercentage") is not None:
        current = [{"type": "Resource", "resource": {"name": "cpu", "current": {
            "averageUtilization": status["currentCPUUtilizationPercentage"]}}}]
    out_status["currentMetrics"] = current or None
    conditions = _annotation_list(annotations, CONDITIONS)
    if conditions:
        out_status["conditions"] = conditions
    _set_annotations(meta, {k: v for k, v in annotations.items() if k not in _ROUND_TRIP})
    return {"apiVersion": V2, "kind": obj.get("kind", "HorizontalPodAutoscaler"),
            "metadata": meta, "spec": out_spec, "status": out_status}


def _set_annotations(meta: dict[str, Any], annotations: dict[str, Any]) -> None:
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)


def _cpu_utilization(metric: Any, side: str) -> Any:
    """The CPU utilization of a v2 Resource metric (``side``: target or current)."""
    if not isinstance(metric, dict) or metric.get("type") != "Resource":
        return None
    resource = metric.get("resource") or {}
    values = resource.get(side) or {}
    if resource.get("name") != "cpu" or (side == "target" and values.get("type") not in (
            None, "Utilization")):
        return None
    return values.get("averageUtilization")


def _annotation_value(annotations: dict[str, Any], key: str) -> Any:
    try:
        return json.loads(annotations[key]) if key in annotations else None
    except (TypeError, ValueError):
        return None  # upstream ignores an annotation that does not decode


def _annotation_list(annotations: dict[str, Any], key: str) -> list[Any]:
    value = _annotation_value(annotations, key)
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


# v2 source and its v1 form: (v2 key of the source, {v1 field: v2 path within the source})
_SOURCES: dict[str, dict[str, str]] = {
    "resource": {"name": "name", "targetAverageUtilization": "target.averageUtilization",
                 "targetAverageValue": "target.averageValue",
                 "currentAverageUtilization": "current.averageUtilization",
                 "currentAverageValue": "current.averageValue"},
    "containerResource": {"name": "name", "container": "container",
                          "targetAverageUtilization": "target.averageUtilization",
                          "targetAverageValue": "target.averageValue",
                          "currentAverageUtilization": "current.averageUtilization",
                          "currentAverageValue": "current.averageValue"},
    "pods": {"metricName": "metric.name", "selector": "metric.selector",
             "targetAverageValue": "target.averageValue",
             "currentAverageValue": "current.averageValue"},
    "object": {"target": "describedObject", "metricName": "metric.name",
               "selector": "metric.selector", "targetValue": "target.value",
               "averageValue": "target.averageValue", "currentValue": "current.value"},
    "external": {"metricName": "metric.name", "metricSelector": "metric.selector",
                 "targetValue": "target.value", "targetAverageValue": "target.averageValue",
                 "currentValue": "current.value",
                 "currentAverageValue": "current.averageValue"},
}
_TARGET_TYPES = (("averageUtilization", "Utilization"), ("averageValue", "AverageValue"),
                 ("value", "Value"))


def _metric_to_v1(metric: Any) -> dict[str, Any]:
    return _convert_metric(metric, lambda fields, src: {
        v1: value_at(src, v2) for v1, v2 in fields.items() if value_at(src, v2) is not None})


def _metric_to_v2(metric: Any) -> dict[str, Any]:
    def convert(fields: dict[str, str], src: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for v1, v2 in fields.items():
            if src.get(v1) is not None:
                set_default(out, v2, src[v1])
        target = out.get("target")
        if isinstance(target, dict) and "type" not in target:
            target["type"] = next((t for k, t in _TARGET_TYPES if k in target), "Value")
        return out
    return _convert_metric(metric, convert)


def _convert_metric(metric: Any, convert: Callable[[dict[str, str], dict[str, Any]],
                                                   dict[str, Any]]) -> dict[str, Any]:
    if not isinstance(metric, dict):
        return {}
    out: dict[str, Any] = {"type": metric.get("type", "")}
    for key, fields in _SOURCES.items():
        if isinstance(metric.get(key), dict):
            out[key] = convert(fields, metric[key])
    return out


# The behavior annotation holds the internal Go type, marshalled without JSON tags.
_GO_NAMES = {"scaleUp": "ScaleUp", "scaleDown": "ScaleDown",
             "stabilizationWindowSeconds": "StabilizationWindowSeconds",
             "selectPolicy": "SelectPolicy", "policies": "Policies", "type": "Type",
             "value": "Value", "periodSeconds": "PeriodSeconds"}
_JSON_NAMES = {go: name for name, go in _GO_NAMES.items()}


def _go_fields(value: Any) -> Any:
    if isinstance(value, dict):
        return {_GO_NAMES.get(k, k): _go_fields(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_go_fields(v) for v in value]
    return value


def _from_go_fields(value: Any) -> Any:
    if isinstance(value, dict):
        return {_JSON_NAMES.get(k, k): _from_go_fields(v) for k, v in value.items()
                if v is not None}
    if isinstance(value, list):
        return [_from_go_fields(v) for v in value]
    return value


class HPAConversion:
    """autoscaling/v1 ↔ the stored autoscaling/v2 shape."""

    def to_storage(self, obj: Obj) -> Obj:
        if obj.get("apiVersion") == V1:
            return v1_to_v2(obj)
        obj["apiVersion"] = V2
        return obj

    def from_storage(self, obj: Obj, version: str) -> Obj:
        if version == "v1":
            return v2_to_v1(obj)
        if obj.get("apiVersion") == V2:
            return obj
        return {**obj, "apiVersion": V2}

    def served_as_stored(self, version: str) -> bool:
        return version == "v2"


def resources(ctx: StorageContext) -> list[Resource]:
    return [stored(ctx, builtin("autoscaling", "horizontalpodautoscalers"), Strategy(
        tracks_generation=False, prepare_for_create=prepare_hpa_create, validate=validate_hpa,
        defaulter=default_hpa, conversion=HPAConversion()), status=True, table=printers.HPA)]
