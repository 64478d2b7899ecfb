"""HorizontalPodAutoscalers in autoscaling/v2 (stored) and v1: the conversions of
pkg/apis/autoscaling/v1/conversion.go, so a v1 client keeps every v2 field."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubegc.api.errors import StatusError
from kubegc.registry import Registry, Target

REF = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
MEMORY = {"type": "Resource", "resource": {"name": "memory", "target": {
    "type": "AverageValue", "averageValue": "500Mi"}}}
CPU_70 = {"type": "Resource", "resource": {"name": "cpu", "target": {
    "type": "Utilization", "averageUtilization": 70}}}


def hpa(registry: Registry, version: str) -> Target:
    return registry.target("autoscaling", version, "horizontalpodautoscalers", "default")


async def test_a_v2_object_reads_in_v1_with_its_other_metrics_in_an_annotation(
        registry: Registry) -> None:
    await registry.create(hpa(registry, "v2"), {
        "metadata": {"name": "web"}, "spec": {"scaleTargetRef": REF, "maxReplicas": 5,
                                              "metrics": [CPU_70, MEMORY]}})
    v1 = await registry.get(hpa(registry, "v1"), "web")
    assert v1["apiVersion"] == "autoscaling/v1"
    assert v1["spec"] == {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 5,
                          "targetCPUUtilizationPercentage": 70}
    assert v1["status"] == {"currentReplicas": 0, "desiredReplicas": 0}
    assert json.loads(v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"]) \
        == [{"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "500Mi"}}]
    v2 = await registry.get(hpa(registry, "v2"), "web")
    assert v2["status"] == {"desiredReplicas": 0, "currentMetrics": None}
    assert "annotations" not in v2["metadata"]


@pytest.mark.parametrize(("target", "metrics"), [
    pytest.param({"targetCPUUtilizationPercentage": 50}, [
        {"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 50}}}], id="cpu-target"),
    pytest.param({}, [{"type": "Resource", "resource": {"name": "cpu", "target": {
        "type": "Utilization", "averageUtilization": 80}}}], id="v1-implicit-80"),
])
async def test_a_v1_object_is_stored_as_v2(registry: Registry, target: dict[str, Any],
                                           metrics: list[Any]) -> None:
    created = await registry.create(hpa(registry, "v1"), {
        "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"}, "spec": {"scaleTargetRef": REF, "maxReplicas": 3,
                                              **target}})
    assert created["apiVersion"] == "autoscaling/v1"
    assert created["spec"]["targetCPUUtilizationPercentage"] == metrics[0]["resource"][
        "target"]["averageUtilization"]
    v2 = await registry.get(hpa(registry, "v2"), "web")
    assert v2["spec"] == {"scaleTargetRef": REF, "minReplicas": 1, "maxReplicas": 3,
                          "metrics": metrics}


async def test_a_v1_update_keeps_the_v2_fields(registry: Registry) -> None:
    behavior = {"scaleDown": {"stabilizationWindowSeconds": 60}}
    await registry.create(hpa(registry, "v2"), {
        "metadata": {"name": "web"}, "spec": {"scaleTargetRef": REF, "maxReplicas": 5,
                                              "metrics": [CPU_70, MEMORY],
                                              "behavior": behavior}})
    v1 = await registry.get(hpa(registry, "v1"), "web")
    assert json.loads(v1["metadata"]["annotations"][
        "autoscaling.alpha.kubernetes.io/behavior"])["ScaleDown"][
            "StabilizationWindowSeconds"] == 60
    v1["spec"]["maxReplicas"] = 9
    v1["spec"]["targetCPUUtilizationPercentage"] = 60
    await registry.update(hpa(registry, "v1"), "web", v1)
    v2 = await registry.get(hpa(registry, "v2"), "web")
    assert v2["spec"]["maxReplicas"] == 9
    assert v2["spec"]["metrics"] == [MEMORY, {"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]
    assert v2["spec"]["behavior"]["scaleDown"] == {
        "stabilizationWindowSeconds": 60, "selectPolicy": "Max",
        "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
    assert "annotations" not in v2["metadata"]


@pytest.mark.parametrize(("spec", "message"), [
    pytest.param({"scaleTargetRef": REF, "maxReplicas": 0},
                 "spec.maxReplicas: Invalid value: 0: must be greater than 0", id="max-zero"),
    pytest.param({"scaleTargetRef": REF, "minReplicas": 4, "maxReplicas": 3},
                 "spec.maxReplicas: Invalid value: 3: must be greater than or equal to "
                 "`minReplicas`", id="max-below-min"),
    pytest.param({"scaleTargetRef": {"kind": "Deployment"}, "maxReplicas": 3},
                 "spec.scaleTargetRef.name: Required value", id="target-name"),
])
async def test_invalid(registry: Registry, spec: dict[str, Any], message: str) -> None:
    with pytest.raises(StatusError) as caught:
        await registry.create(hpa(registry, "v2"), {"metadata": {"name": "web"}, "spec": spec})
    assert message in caught.value.message
