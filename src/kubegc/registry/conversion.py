"""Conversion between served versions of one stored object.

* ``core/v1`` Event ↔ ``events.k8s.io/v1`` Event (one store, two shapes, as upstream).
* ``autoscaling/v1`` ↔ ``autoscaling/v2`` HorizontalPodAutoscaler, stored as v2
  (``registry.groups.autoscaling``).
* Custom resources: every served version has the same schema (conversion strategy
  ``None``), so only ``apiVersion`` changes.
* Every other built-in is served in exactly one version.
"""

from __future__ import annotations

from typing import Any

from kubegc.api.resources import ResourceInfo
from kubegc.api.types import Obj
from kubegc.registry.groups import autoscaling

_EVENTS_K8S_RENAMES = (
    # (events.k8s.io/v1 field, core/v1 field)
    ("regarding", "involvedObject"),
    ("related", "related"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("reportingInstance", "reportingInstance"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
)


def to_storage(info: ResourceInfo, obj: Obj) -> Obj:
    """The stored shape of ``obj`` served as ``info`` (mutates and returns ``obj``)."""
    if info.group == "events.k8s.io" and info.resource == "events":
        return _events_k8s_to_core(obj)
    if _is_hpa(info) and obj.get("apiVersion") == autoscaling.V1:
        return autoscaling.v1_to_v2(obj)
    obj["apiVersion"] = info.api_version(info.storage_version)
    return obj


def from_storage(info: ResourceInfo, version: str, obj: Obj) -> Obj:
    """``obj`` as served by ``info`` at ``version``; returns a new dict when it differs."""
    if info.group == "events.k8s.io" and info.resource == "events":
        return _core_to_events_k8s(obj)
    if _is_hpa(info) and version == "v1":
        return autoscaling.v2_to_v1(obj)
    api_version = info.api_version(version)
    if obj.get("apiVersion") == api_version:
        return obj
    out = dict(obj)
    out["apiVersion"] = api_version
    return out


def _is_hpa(info: ResourceInfo) -> bool:
    return info.group == "autoscaling" and info.resource == "horizontalpodautoscalers"


def _events_k8s_to_core(obj: Obj) -> Obj:
    out: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": obj.get("metadata") or {},
    }
    for new, old in _EVENTS_K8S_RENAMES:
        if new in obj:
            out[old] = obj[new]
    for same in ("reason", "type", "action", "eventTime", "series"):
        if same in obj:
            out[same] = obj[same]
    return out


def _core_to_events_k8s(obj: Obj) -> Obj:
    out: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": obj.get("metadata") or {},
    }
    for new, old in _EVENTS_K8S_RENAMES:
        if old in obj and obj[old] is not None:
            out[new] = obj[old]
    for same in ("reason", "type", "action", "eventTime", "series"):
        if same in obj:
            out[same] = obj[same]
    return out
