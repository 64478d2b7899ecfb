"""A node's health as the node lifecycle controller judges it (cf. ``tryUpdateNodeHealth``
and ``ComputeZoneState`` in pkg/controller/nodelifecycle/node_lifecycle_controller.go):
pure functions over JSON-shaped nodes, Leases and node conditions.

A node is probed when its Ready condition's ``lastHeartbeatTime`` changes or its Lease in
``kube-node-lease`` is renewed; the probe time is the controller's clock when it saw that.
A node not probed for the grace period (``--node-monitor-grace-period``, or
``--node-startup-grace-period`` for one that never posted a Ready condition) gets its four
kubelet conditions set to ``Unknown``.
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from kubegc.api.clock import format_time, parse_time_or_none
from kubegc.api.types import Obj

Condition = dict[str, Any]

#: the conditions the controller sets Unknown (``nodeConditionTypes``)
NODE_CONDITION_TYPES = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
UNKNOWN_REASON = "NodeStatusUnknown"
UNKNOWN_MESSAGE = "Kubelet stopped posting node status."
NEVER_UPDATED_REASON = "NodeStatusNeverUpdated"
NEVER_UPDATED_MESSAGE = "Kubelet never posted node status."
#: labels of a node's zone (``GetZoneKey``, k8s.io/component-helpers/node/topology)
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


@dataclass
class NodeHealth:
    """``nodeHealthData``: when the node was last heard from (the controller's clock)."""

    probe_timestamp: datetime
    heartbeat: str = ""  # the Ready condition's lastHeartbeatTime last seen
    lease_renew: str = ""  # the Lease's renewTime last seen


def get_node_condition(node: Obj, type_: str) -> Condition | None:
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == type_:
            return dict(condition)
    return None


def creation_time(node: Obj, now: datetime) -> datetime:
    return parse_time_or_none((node.get("metadata") or {}).get("creationTimestamp")) or now


def observe(node: Obj, lease: Obj | None, health: NodeHealth | None, now: datetime
            ) -> NodeHealth:
    """The node's health after this look: probed now if its Ready heartbeat changed (or it
    is new to the controller: probed at its creation) or its Lease was renewed."""
    ready = get_node_condition(node, "Ready")
    heartbeat = str((ready or {}).get("lastHeartbeatTime") or "")
    if health is None:
        health = NodeHealth(creation_time(node, now), heartbeat)
    elif ready is not None and heartbeat != health.heartbeat:
        health = NodeHealth(now, heartbeat, health.lease_renew)
    renew = str(((lease or {}).get("spec") or {}).get("renewTime") or "")
    if renew and renew > health.lease_renew:
        health.lease_renew = renew
        health.probe_timestamp = now
    return health


def grace_period(node: Obj, *, monitor: float, startup: float) -> float:
    """The startup grace period for a node that never posted Ready, else the monitor's."""
    return monitor if get_node_condition(node, "Ready") is not None else startup


def mark_unknown(node: Obj, now: datetime) -> Obj:
    """A copy of ``node`` whose four kubelet conditions are Unknown (those already Unknown
    kept, missing ones added as never updated)."""
    updated = copy.deepcopy(node)
    status = updated.setdefault("status", {})
    conditions = status.setdefault("conditions", [])
    stamp = format_time(now)
    for type_ in NODE_CONDITION_TYPES:
        current = next((c for c in conditions if c.get("type") == type_), None)
        if current is None:
            conditions.append({
                "type": type_, "status": "Unknown", "reason": NEVER_UPDATED_REASON,
                "message": NEVER_UPDATED_MESSAGE,
                "lastHeartbeatTime": (updated.get("metadata") or {}).get("creationTimestamp"),
                "lastTransitionTime": stamp})
        elif current.get("status") != "Unknown":
            current.update(status="Unknown", reason=UNKNOWN_REASON, message=UNKNOWN_MESSAGE,
                           lastTransitionTime=stamp)
    return updated


def is_overdue(health: NodeHealth, grace: float, now: datetime) -> bool:
    return now > health.probe_timestamp + timedelta(seconds=grace)


class ZoneState(enum.StrEnum):
    INITIAL = "Initial"
    NORMAL = "Normal"
    FULL_DISRUPTION = "FullDisruption"
    PARTIAL_DISRUPTION = "PartialDisruption"


def zone_key(node: Obj) -> str:
    """``GetZoneKey``: ``region:\\x00:zone`` from the node's topology labels, "" without."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    region = next((labels[k] for k in REGION_LABELS if labels.get(k)), "")
    zone = next((labels[k] for k in ZONE_LABELS if labels.get(k)), "")
    return f"{region}:\x00:{zone}" if region or zone else ""


def compute_zone_state(ready_conditions: Sequence[Condition | None],
                       unhealthy_zone_threshold: float) -> tuple[int, ZoneState]:
    """``ComputeZoneState``: no Ready node → full disruption; more than 2 not Ready and at
    least ``unhealthy_zone_threshold`` of the zone → partial; else normal."""
    ready = sum(1 for c in ready_conditions if c is not None and c.get("status") == "True")
    not_ready = len(ready_conditions) - ready
    if ready == 0 and not_ready > 0:
        return not_ready, ZoneState.FULL_DISRUPTION
    if not_ready > 2 and not_ready / (not_ready + ready) >= unhealthy_zone_threshold:
        return not_ready, ZoneState.PARTIAL_DISRUPTION
    return not_ready, ZoneState.NORMAL
