"""What a simulated pod's processes do, and when they stop (cf. the kubelet's
``killContainer``: Killing event, preStop hook, TERM, wait, KILL).

Per-pod annotations (a contract: documented in docs/kubelet.md) override the global
defaults (``kubegc.component.config.KubeletConfiguration``):

``kubegc.io/exit-delay-seconds``
    seconds the processes take to exit after TERM (default ``pod_exit_delay``, 0 = at once)
``kubegc.io/prestop-seconds``
    seconds a container's ``lifecycle.preStop`` hook runs (default ``pod_prestop_delay``);
    only containers that declare a preStop hook run one
``kubegc.io/ignore-term: "true"``
    the processes ignore TERM and die only at KILL (default ``pod_ignore_term``)
``kubegc.io/run-seconds``
    the containers exit on their own after N seconds; without it, pods whose
    ``restartPolicy`` is Never or OnFailure (a Job's) exit after ``job_pod_duration``
    seconds and ``Always`` pods run until deleted
``kubegc.io/exit-code``
    the exit code of that exit (default 0: Completed; non-zero: Error)
``kubegc.io/ready: "false"``
    the containers run but never become ready (the pod is listed in its Services'
    ``notReadyAddresses``)

Termination timeline of one container, all in seconds of the injected clock from the
moment ``t0`` the kubelet sees the pod's ``deletionTimestamp`` (grace ``G`` =
``deletionGracePeriodSeconds``):

* preStop (if declared and ``G > 0``) runs ``min(prestop, G)`` seconds;
* TERM is sent when it ends; the container then has ``max(G - preStop, 2)`` seconds
  (upstream's ``minimumGracePeriodInSeconds``) before KILL;
* it exits ``exit_delay`` seconds after TERM with code 0 unless that is not before KILL
  or it ignores TERM: then it is killed at the deadline with code 137.

A second DELETE with a shorter grace period moves every pending KILL to at most
``now + max(G', 2)``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubegc.api.types import Obj

log = logging.getLogger(__name__)

ANNOTATION_EXIT_DELAY = "kubegc.io/exit-delay-seconds"
ANNOTATION_PRESTOP = "kubegc.io/prestop-seconds"
ANNOTATION_IGNORE_TERM = "kubegc.io/ignore-term"
ANNOTATION_RUN_SECONDS = "kubegc.io/run-seconds"
ANNOTATION_EXIT_CODE = "kubegc.io/exit-code"
ANNOTATION_READY = "kubegc.io/ready"

#: upstream kubelet's minimumGracePeriodInSeconds: containers always get this long
#: between TERM and KILL
MINIMUM_GRACE_PERIOD = 2.0
EXIT_CODE_KILLED = 137  # 128 + SIGKILL
DEFAULT_GRACE_PERIOD = 30


@dataclass(frozen=True, slots=True)
class SimulationDefaults:
    """The global knobs (``kubegc serve`` flags / ``KubeletConfiguration``)."""

    exit_delay: float = 0.0
    prestop: float = 0.0
    ignore_term: bool = False
    job_pod_duration: float = 0.0


@dataclass(frozen=True, slots=True)
class PodSettings:
    """How one pod's simulated processes behave (annotations over defaults)."""

    exit_delay: float = 0.0
    prestop: float = 0.0
    ignore_term: bool = False
    run_seconds: float | None = None  # None: runs until deleted
    exit_code: int = 0
    ready: bool = True

    @classmethod
    def of(cls, pod: Obj, defaults: SimulationDefaults) -> PodSettings:
        meta = pod.get("metadata") or {}
        annotations: Mapping[str, Any] = meta.get("annotations") or {}
        name = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        restart_policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
        run_default = None if restart_policy == "Always" else defaults.job_pod_duration
        run_seconds = _seconds(annotations, ANNOTATION_RUN_SECONDS, run_default, name)
        return cls(
            exit_delay=_seconds(annotations, ANNOTATION_EXIT_DELAY, defaults.exit_delay, name)
            or 0.0,
            prestop=_seconds(annotations, ANNOTATION_PRESTOP, defaults.prestop, name) or 0.0,
            ignore_term=_flag(annotations, ANNOTATION_IGNORE_TERM, defaults.ignore_term),
            run_seconds=run_seconds,
            exit_code=_exit_code(annotations, name),
            ready=_flag(annotations, ANNOTATION_READY, True),
        )


def _seconds(annotations: Mapping[str, Any], key: str, default: float | None,
             pod: str) -> float | None:
    raw = annotations.get(key)
    if raw is None:
        return default
    try:
        value = float(str(raw))
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        log.warning("pod %s: ignoring annotation %s=%r (want seconds >= 0)", pod, key, raw)
        return default
    return value


def _flag(annotations: Mapping[str, Any], key: str, default: bool) -> bool:
    raw = annotations.get(key)
    if raw is None:
        return default
    return str(raw).strip().lower() in ("true", "1", "yes")


def _exit_code(annotations: Mapping[str, Any], pod: str) -> int:
    raw = annotations.get(ANNOTATION_EXIT_CODE)
    if raw is None:
        return 0
    try:
        return int(str(raw)) & 0xFF
    except ValueError:
        log.warning("pod %s: ignoring annotation %s=%r (want an integer)", pod,
                    ANNOTATION_EXIT_CODE, raw)
        return 0


def grace_period_of(pod: Obj) -> float:
    """The grace period the kubelet kills with: ``deletionGracePeriodSeconds``, else the
    spec's ``terminationGracePeriodSeconds`` (cf. ``calculateEffectiveGracePeriod``)."""
    meta = pod.get("metadata") or {}
    value = meta.get("deletionGracePeriodSeconds")
    if value is None:
        value = (pod.get("spec") or {}).get("terminationGracePeriodSeconds", DEFAULT_GRACE_PERIOD)
    return float(max(int(value), 0))


def has_prestop_hook(container: Mapping[str, Any]) -> bool:
    return bool((container.get("lifecycle") or {}).get("preStop"))


@dataclass(slots=True)
class ContainerStop:
    """One container's way out. Times are ``Clock.monotonic()`` seconds."""

    name: str
    has_prestop: bool
    term_at: float  # preStop ends, TERM is sent
    kill_at: float
    exit_delay: float  # after TERM (inf: ignores TERM)

    @property
    def natural_exit_at(self) -> float:
        return self.term_at + self.exit_delay

    @property
    def exit_at(self) -> float:
        return min(self.natural_exit_at, self.kill_at)

    @property
    def killed(self) -> bool:
        return not self.natural_exit_at < self.kill_at

    @property
    def exit_code(self) -> int:
        return EXIT_CODE_KILLED if self.killed else 0


@dataclass(slots=True)
class TerminationPlan:
    """The kubelet's kill of one pod: a ``ContainerStop`` per running container."""

    started: float
    grace: float
    containers: list[ContainerStop] = field(default_factory=list)

    @classmethod
    def build(cls, pod: Obj, settings: PodSettings, *, now: float,
              running: list[str]) -> TerminationPlan:
        grace = grace_period_of(pod)
        specs = {str(c.get("name")): c for c in (pod.get("spec") or {}).get("containers") or []}
        plan = cls(started=now, grace=grace)
        for name in running:
            hook = has_prestop_hook(specs.get(name) or {}) and grace > 0
            prestop = min(settings.prestop, grace) if hook else 0.0
            term_at = now + prestop
            kill_at = term_at + max(grace - prestop, MINIMUM_GRACE_PERIOD)
            delay = math.inf if settings.ignore_term else settings.exit_delay
            plan.containers.append(ContainerStop(name, hook, term_at, kill_at, delay))
        return plan

    def shorten(self, grace: float, *, now: float) -> bool:
        """A new, shorter grace period: pull pending KILLs in. Returns whether it changed."""
        if grace >= self.grace:
            return False
        self.grace = grace
        deadline = now + max(grace, MINIMUM_GRACE_PERIOD)
        for stop in self.containers:
            if stop.exit_at > now and stop.kill_at > deadline:
                stop.kill_at = deadline
                stop.term_at = min(stop.term_at, deadline)  # a running preStop is cut short
        return True

    def done(self, now: float) -> bool:
        return all(stop.exit_at <= now for stop in self.containers)

    def finished_at(self) -> float:
        return max((stop.exit_at for stop in self.containers), default=self.started)

    def next_deadline(self, now: float) -> float | None:
        """The earliest future exit, for the kubelet's next wake-up."""
        pending = [stop.exit_at for stop in self.containers if stop.exit_at > now]
        return min(pending) if pending else None

    def stop_of(self, name: str) -> ContainerStop | None:
        for stop in self.containers:
            if stop.name == name:
                return stop
        return None
