"""The Pod printer (``printPod``): Ready, Status, Restarts, Age and the wide IP/Node cells.

Status is the reason ``kubectl get pods`` shows: the first init container that is not done
(``Init:N/M``, ``Init:<reason>``), else the last container's waiting or terminated reason,
``Terminating`` for a deleted pod that has not finished, ``Unknown`` for a lost node. Sidecar
(restartable) init containers count towards Ready and Restarts. Succeeded and Failed pods
carry a ``Completed`` row condition, which kubectl uses to hide them.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from kubegc.registry.printers.duration import human_duration
from kubegc.registry.printers.helpers import (
    AGE,
    NAME,
    Conditions,
    Obj,
    age,
    column,
    has_condition,
    lookup,
    object_meta,
    parse_timestamp,
)

POD_COLUMN_DEFINITIONS = [
    NAME,
    column("Ready", "The aggregate readiness state of this pod for accepting traffic."),
    column("Status", "The aggregate status of the containers in this pod."),
    column("Restarts", "The number of times the containers in this pod have been restarted"
           " and when the last container in this pod has restarted."),
    AGE,
    column("IP", "podIP address allocated to the pod.", wide=True),
    column("Node", "NodeName indicates in which node this pod is scheduled.", wide=True),
    column("Nominated Node", "nominatedNodeName is set only when this pod preempts other"
           " pods on the node, but it cannot be scheduled right away as preemption victims"
           " receive their graceful termination periods.", wide=True),
    column("Readiness Gates", "If specified, all readiness gates will be evaluated for pod"
           " readiness.", wide=True),
]


def _later(current: datetime | None, timestamp: Any) -> datetime | None:
    value = parse_timestamp(timestamp)
    if value is None:
        return current
    return value if current is None or value > current else current


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
                                   lookup(cs, "lastState", "terminated", "finishedAt"))


def _walk_init_containers(pod: Obj, state: _PodState, restartable: set[str]) -> _PodState:
    """The init-container half of ``printPod``: stops at the first init container that is
    not done and sets ``state.reason``; returns the restart counts of sidecar (restartable)
    init containers, which are all that count once the pod is initialized."""
    total_init = len(lookup(pod, "spec", "initContainers") or [])
    sidecars = _PodState(pod)
    state.initializing = False
    for i, cs in enumerate(lookup(pod, "status", "initContainerStatuses") or []):
        state.count_restarts(cs)
        is_sidecar = cs.get("name") in restartable
        if is_sidecar:
            sidecars.count_restarts(cs)
        terminated = lookup(cs, "state", "terminated")
        waiting = lookup(cs, "state", "waiting")
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
    for cs in reversed(lookup(pod, "status", "containerStatuses") or []):
        state.count_restarts(cs)
        waiting = lookup(cs, "state", "waiting")
        terminated = lookup(cs, "state", "terminated")
        if waiting is not None and waiting.get("reason"):
            state.reason = waiting["reason"]
        elif terminated is not None:
            state.reason = _termination(terminated)
        elif cs.get("ready") and lookup(cs, "state", "running") is not None:
            has_running = True
            state.ready += 1
    # A pod whose last container completed but another still runs is Running or NotReady.
    if state.reason == "Completed" and has_running:
        state.reason = "Running" if has_condition(pod, "Ready") else "NotReady"


def print_pod(pod: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    restartable = {c.get("name") for c in spec.get("initContainers") or []
                   if c.get("restartPolicy") == "Always"}
    total = len(spec.get("containers") or []) + sum(
        1 for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always")
    state = _PodState(pod)
    sidecars = _walk_init_containers(pod, state, restartable)
    if not state.initializing or has_condition(pod, "Initialized"):
        state.restarts, state.last_restart = sidecars.restarts, sidecars.last_restart
        _walk_containers(pod, state)
    phase = status.get("phase") or ""
    if object_meta(pod).get("deletionTimestamp"):
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
    cells = [object_meta(pod).get("name", ""), f"{state.ready}/{total}", state.reason, restarts,
             age(pod, now), ip, spec.get("nodeName") or "<none>",
             status.get("nominatedNodeName") or "<none>", _readiness_gates(pod)]
    return cells, _POD_DONE.get(phase, [])


def _readiness_gates(pod: Obj) -> str:
    gates = lookup(pod, "spec", "readinessGates") or []
    if not gates:
        return "<none>"
    conditions = lookup(pod, "status", "conditions") or []
    true = 0
    for gate in gates:
        match = next((c for c in conditions if c.get("type") == gate.get("conditionType")), None)
        true += 1 if match is not None and match.get("status") == "True" else 0
    return f"{true}/{len(gates)}"
