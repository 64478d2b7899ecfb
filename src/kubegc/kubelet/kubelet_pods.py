"""The simulated container runtime of one pod and the pod status the kubelet reports
(cf. kubelet_pods.go ``generateAPIPodStatus``/``getPhase`` and status/generate.go).

A ``PodRecord`` is the kubelet's memory of one pod (by UID): its IP, its containers'
states, the termination plan once it is being deleted, and a version counter so that
a status is posted once per change. ``advance`` moves run-to-completion containers along
their timeline (exit after ``run-seconds``, restart with CrashLoopBackOff delays or end
in Succeeded/Failed); ``terminate`` applies a finished ``TerminationPlan``;
``generate_status`` renders the upstream-shaped ``status`` (conditions
PodReadyToStartContainers/Initialized/Ready/ContainersReady/PodScheduled,
``containerStatuses`` with ids, images and states, pod and host IPs, phase).

Everything here is pure: callers pass the times (``Clock.monotonic()`` for intervals,
wall ``datetime`` for timestamps) and write what it returns.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from kubegc.api.clock import format_time
from kubegc.api.types import Obj
from kubegc.kubelet.termination import PodSettings, TerminationPlan

RUNNING, WAITING, TERMINATED = "running", "waiting", "terminated"
PHASE_PENDING, PHASE_RUNNING = "Pending", "Running"
PHASE_SUCCEEDED, PHASE_FAILED = "Succeeded", "Failed"
TERMINAL_PHASES = (PHASE_SUCCEEDED, PHASE_FAILED)
#: conditions the kubelet owns (cf. ``kubetypes.PodConditionByKubelet``), in upstream order
KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                      "PodScheduled")
#: upstream's container restart backoff: 10 s doubling up to 5 minutes
BACKOFF_INITIAL, BACKOFF_MAX = 10.0, 300.0
#: restarts/exits applied in one sync when the clock jumped far ahead
MAX_TRANSITIONS_PER_SYNC = 16

Event = tuple[str, str, str]  # (type, reason, message)


def container_id(pod_uid: str, name: str, restart_count: int) -> str:
    digest = hashlib.sha256(f"{pod_uid}/{name}/{restart_count}".encode()).hexdigest()
    return f"containerd://{digest}"


def normalize_image(image: str) -> tuple[str, str]:
    """(image, imageID) as containerd reports them: ``nginx`` ->
    ``docker.io/library/nginx:latest``, ``docker.io/library/nginx@sha256:<digest>``."""
    name, at, digest = image.partition("@")
    first, slash, _ = name.partition("/")
    if not slash or ("." not in first and ":" not in first and first != "localhost"):
        name = f"docker.io/{name}" if slash else f"docker.io/library/{name}"
    repo = name
    tail = name.rpartition("/")[2]
    if ":" in tail:
        repo = name[: len(name) - len(tail)] + tail.partition(":")[0]
    elif not at:
        name = f"{name}:latest"
    if not at:
        digest = "sha256:" + hashlib.sha256(name.encode()).hexdigest()
    return (f"{repo}@{digest}" if at else name), f"{repo}@{digest}"


@dataclass(slots=True)
class ContainerRecord:
    name: str
    image: str
    restart_count: int = 0
    state: str = RUNNING
    started_at: str = ""  # wall time of the current (or last) start
    started_mono: float = 0.0
    finished_at: str = ""
    exit_code: int = 0
    reason: str = ""  # terminated: Completed/Error; waiting: CrashLoopBackOff
    message: str = ""
    last_state: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class PodRecord:
    """The kubelet's memory of one pod. Owner: the kubelet worker syncing the pod's key
    (the queue never hands one key to two workers)."""

    uid: str
    key: str
    node: str
    pod_ip: str
    host_ip: str
    start_time: str
    phase: str = PHASE_RUNNING
    ready: bool = True
    containers: dict[str, ContainerRecord] = field(default_factory=dict)
    init_containers: list[tuple[str, str]] = field(default_factory=list)  # (name, image)
    backoff_until: float | None = None
    termination: TerminationPlan | None = None
    reported_kills: set[str] = field(default_factory=set)
    version: int = 0
    posted: int = 0
    final_delete_sent: bool = False

    def changed(self) -> None:
        self.version += 1

    def running(self) -> list[str]:
        return [c.name for c in self.containers.values() if c.state == RUNNING]


def _wall(now_wall: datetime, now: float, at: float) -> str:
    return format_time(now_wall + timedelta(seconds=at - now))


def start_pod(pod: Obj, *, node: str, pod_ip: str, host_ip: str, now: float,
              now_wall: datetime) -> tuple[PodRecord, list[Event]]:
    """A freshly started pod: every container running. Returns the events to record."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    stamp = format_time(now_wall)
    rec = PodRecord(uid=str(meta.get("uid", "")), key=f"{meta.get('namespace')}/{meta.get('name')}",
                    node=node, pod_ip=pod_ip, host_ip=host_ip, start_time=stamp)
    events: list[Event] = []
    for c in spec.get("initContainers") or []:
        rec.init_containers.append((str(c.get("name")), str(c.get("image", ""))))
        events += _start_events(str(c.get("name")), str(c.get("image", "")))
    for c in spec.get("containers") or []:
        name, image = str(c.get("name")), str(c.get("image", ""))
        rec.containers[name] = ContainerRecord(name, image, started_at=stamp, started_mono=now)
        events += _start_events(name, image)
    rec.changed()
    return rec, events


def _start_events(name: str, image: str) -> list[Event]:
    return [("Normal", "Pulled", f'Container image "{image}" already present on machine'),
            ("Normal", "Created", f"Created container: {name}"),
            ("Normal", "Started", f"Started container {name}")]


def adopt_pod(pod: Obj, *, node: str, host_ip: str, now: float) -> PodRecord:
    """The record of a pod this kubelet ran before a restart, rebuilt from its status;
    nothing is posted for it until something changes. A pod that never started gets a
    record with no containers."""
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    rec = PodRecord(uid=str(meta.get("uid", "")), key=f"{meta.get('namespace')}/{meta.get('name')}",
                    node=node, pod_ip=str(status.get("podIP") or ""), host_ip=host_ip,
                    start_time=str(status.get("startTime") or ""),
                    phase=str(status.get("phase") or PHASE_PENDING))
    for cs in status.get("containerStatuses") or []:
        state = cs.get("state") or {}
        c = ContainerRecord(str(cs.get("name")), str(cs.get("image", "")),
                            restart_count=int(cs.get("restartCount") or 0),
                            last_state=dict(cs.get("lastState") or {}), started_mono=now)
        if "running" in state:
            c.started_at = str(state["running"].get("startedAt") or "")
        elif "terminated" in state:
            term = state["terminated"]
            c.state, c.exit_code = TERMINATED, int(term.get("exitCode") or 0)
            c.reason, c.started_at = str(term.get("reason") or ""), str(term.get("startedAt") or "")
            c.finished_at = str(term.get("finishedAt") or "")
        else:
            c.state, c.reason = WAITING, str((state.get("waiting") or {}).get("reason") or "")
        rec.containers[c.name] = c
    rec.init_containers = [(str(c.get("name")), str(c.get("image", "")))
                           for c in (pod.get("spec") or {}).get("initContainers") or []]
    return rec


def advance(rec: PodRecord, settings: PodSettings, *, restart_policy: str, now: float,
            now_wall: datetime) -> tuple[list[Event], float | None]:
    """Move a live pod's containers along their timeline up to ``now``. Returns the
    events to record and the monotonic time of the next transition (None: none)."""
    events: list[Event] = []
    if rec.ready != settings.ready:
        rec.ready = settings.ready
        rec.changed()
    for _ in range(MAX_TRANSITIONS_PER_SYNC):
        if rec.phase in TERMINAL_PHASES or not rec.containers:
            return events, None
        if rec.backoff_until is not None:
            if now < rec.backoff_until:
                return events, rec.backoff_until
            _restart(rec, at=rec.backoff_until, now=now, now_wall=now_wall, events=events)
        if settings.run_seconds is None:
            return events, None
        exit_at = min(c.started_mono for c in rec.containers.values()) + settings.run_seconds
        if now < exit_at:
            return events, exit_at
        _exit(rec, settings, restart_policy=restart_policy, at=exit_at, now=now,
              now_wall=now_wall, events=events)
    return events, now


def _exit(rec: PodRecord, settings: PodSettings, *, restart_policy: str, at: float, now: float,
          now_wall: datetime, events: list[Event]) -> None:
    code = settings.exit_code
    for c in rec.containers.values():
        c.state, c.exit_code, c.finished_at = TERMINATED, code, _wall(now_wall, now, at)
        c.reason = "Completed" if code == 0 else "Error"
    rec.changed()
    if restart_policy == "Always" or (restart_policy == "OnFailure" and code != 0):
        restarts = min(c.restart_count for c in rec.containers.values())
        delay = 0.0 if restarts == 0 else min(BACKOFF_INITIAL * 2 ** (restarts - 1), BACKOFF_MAX)
        rec.backoff_until = at + delay
        if delay > 0:
            _back_off(rec, delay, events)
        return
    rec.phase = PHASE_SUCCEEDED if code == 0 else PHASE_FAILED


def _back_off(rec: PodRecord, delay: float, events: list[Event]) -> None:
    pod_name = rec.key.partition("/")[2]
    namespace = rec.key.partition("/")[0]
    for c in rec.containers.values():
        c.last_state = {"terminated": _terminated(rec, c)}
        c.state, c.reason = WAITING, "CrashLoopBackOff"
        c.message = (f"back-off {int(delay)}s restarting failed container={c.name} "
                     f"pod={pod_name}_{namespace}({rec.uid})")
        events.append(("Warning", "BackOff", "Back-off restarting failed container "
                       f"{c.name} in pod {pod_name}_{namespace}({rec.uid})"))


def _restart(rec: PodRecord, *, at: float, now: float, now_wall: datetime,
             events: list[Event]) -> None:
    for c in rec.containers.values():
        if c.state == TERMINATED:
            c.last_state = {"terminated": _terminated(rec, c)}
        c.restart_count += 1
        c.state, c.reason, c.message = RUNNING, "", ""
        c.started_at, c.started_mono = _wall(now_wall, now, at), at
        events += _start_events(c.name, c.image)
    rec.backoff_until = None
    rec.changed()


def terminate(rec: PodRecord, plan: TerminationPlan, *, now: float, now_wall: datetime) -> None:
    """Apply a finished kill: containers terminated (0 after a clean TERM exit, 137 after
    KILL), the pod in its terminal phase (Succeeded only if every exit code is 0)."""
    for c in rec.containers.values():
        stop = plan.stop_of(c.name)
        if stop is not None:
            c.state, c.exit_code = TERMINATED, stop.exit_code
            c.finished_at = _wall(now_wall, now, stop.exit_at)
            c.reason = "Completed" if stop.exit_code == 0 else "Error"
        elif c.state == WAITING:  # in CrashLoopBackOff: its last exit is its end
            last = c.last_state.get("terminated") or {}
            c.state, c.exit_code = TERMINATED, int(last.get("exitCode") or 0)
            c.reason, c.finished_at = str(last.get("reason") or "Error"), str(
                last.get("finishedAt") or format_time(now_wall))
    codes = [c.exit_code for c in rec.containers.values()]
    rec.phase = PHASE_SUCCEEDED if all(code == 0 for code in codes) else PHASE_FAILED
    rec.backoff_until = None
    rec.changed()


def _terminated(rec: PodRecord, c: ContainerRecord) -> dict[str, Any]:
    return {"exitCode": c.exit_code, "reason": c.reason or "Completed", "startedAt": c.started_at,
            "finishedAt": c.finished_at,
            "containerID": container_id(rec.uid, c.name, c.restart_count)}


def _container_status(rec: PodRecord, c: ContainerRecord) -> dict[str, Any]:
    image, image_id = normalize_image(c.image)
    cid = container_id(rec.uid, c.name, c.restart_count)
    if c.state == RUNNING:
        state: dict[str, Any] = {"running": {"startedAt": c.started_at}}
    elif c.state == TERMINATED:
        state = {"terminated": _terminated(rec, c)}
    else:
        state = {"waiting": {"reason": c.reason, "message": c.message}}
    return {"name": c.name, "state": state, "lastState": c.last_state,
            "ready": c.state == RUNNING and rec.ready, "restartCount": c.restart_count,
            "image": image, "imageID": image_id, "containerID": cid,
            "started": c.state == RUNNING}


def _init_container_status(rec: PodRecord, name: str, image_ref: str) -> dict[str, Any]:
    image, image_id = normalize_image(image_ref)
    cid = container_id(rec.uid, name, 0)
    return {"name": name, "state": {"terminated": {
        "exitCode": 0, "reason": "Completed", "startedAt": rec.start_time,
        "finishedAt": rec.start_time, "containerID": cid}},
        "lastState": {}, "ready": True, "restartCount": 0, "image": image,
        "imageID": image_id, "containerID": cid, "started": False}


def _condition(type_: str, status: bool, previous: dict[str, dict[str, Any]], stamp: str,
               reason: str = "", message: str = "") -> dict[str, Any]:
    value = "True" if status else "False"
    prior = previous.get(type_)
    transition = prior.get("lastTransitionTime") if prior and prior.get("status") == value else (
        stamp)
    out: dict[str, Any] = {"type": type_, "status": value,
                           "lastTransitionTime": transition}
    if reason:
        out["reason"] = reason
    if message:
        out["message"] = message
    return out


def _conditions(pod: Obj, rec: PodRecord, stamp: str) -> list[dict[str, Any]]:
    old = list((pod.get("status") or {}).get("conditions") or [])
    previous = {str(c.get("type")): c for c in old}
    out = [c for c in old if c.get("type") not in KUBELET_CONDITIONS]
    terminal = rec.phase in TERMINAL_PHASES
    unready = [c.name for c in rec.containers.values() if not (c.state == RUNNING and rec.ready)]
    if terminal:
        ready_reason = "PodCompleted" if rec.phase == PHASE_SUCCEEDED else "PodFailed"
        ready_args: tuple[bool, str, str] = (False, ready_reason, "")
    elif unready:
        ready_args = (False, "ContainersNotReady",
                      f"containers with unready status: [{' '.join(unready)}]")
    else:
        ready_args = (True, "", "")
    init_reason = "PodCompleted" if rec.phase == PHASE_SUCCEEDED and rec.init_containers else ""
    out.append(_condition("PodReadyToStartContainers", not terminal, previous, stamp))
    out.append(_condition("Initialized", True, previous, stamp, init_reason))
    out.append(_condition("Ready", ready_args[0], previous, stamp, *ready_args[1:]))
    out.append(_condition("ContainersReady", ready_args[0], previous, stamp, *ready_args[1:]))
    out.append(_condition("PodScheduled", True, previous, stamp))
    return out


def generate_status(pod: Obj, rec: PodRecord, *, now_wall: datetime) -> dict[str, Any]:
    """The full ``status`` the kubelet posts for ``pod`` (kubelet-owned conditions are
    regenerated; other conditions and the qosClass are kept)."""
    stamp = format_time(now_wall)
    old = pod.get("status") or {}
    status: dict[str, Any] = {
        "phase": rec.phase,
        "conditions": _conditions(pod, rec, stamp),
        "hostIP": rec.host_ip, "hostIPs": [{"ip": rec.host_ip}],
        "startTime": rec.start_time,
        "containerStatuses": [_container_status(rec, c) for c in rec.containers.values()],
    }
    if rec.pod_ip:
        status["podIP"], status["podIPs"] = rec.pod_ip, [{"ip": rec.pod_ip}]
    if rec.init_containers:
        status["initContainerStatuses"] = [
            _init_container_status(rec, name, image) for name, image in rec.init_containers]
    if old.get("qosClass"):
        status["qosClass"] = old["qosClass"]
    return status
