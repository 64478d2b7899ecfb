"""A container's probes and lifecycle hooks (``pkg/apis/core/validation``:
``validateLivenessProbe``, ``validateReadinessProbe``, ``validateStartupProbe``,
``validateProbe``, ``validateLifecycle``, ``validateHandler`` and the actions it checks:
``validateExecAction``, ``validateHTTPGetAction``, ``validateTCPSocketAction``,
``validateGRPCAction``, ``validateSleepAction``, ``ValidatePortNumOrName``), and the
init containers that may not have them (``validateInitContainers``).

Upstream validates after defaulting (``SetDefaults_Probe``: zero thresholds and periods
become 1, 1, 10 and 3; ``SetDefaults_HTTPGetAction``: path ``/`` and scheme ``HTTP``):
an absent or zero value here is the defaulted one, never an error.
"""

from __future__ import annotations

from typing import Any

from kubegc.api.content import is_http_header_name, is_valid_port_name, is_valid_port_num
from kubegc.registry.validation.common import (
    Causes,
    forbidden,
    invalid,
    nonnegative,
    not_supported,
    required,
)

#: ``commonHandler`` of a probe (``handlerFromProbe``) and of a hook
#: (``handlerFromLifecycle``), in the order ``validateHandler`` counts them
PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
HOOK_HANDLERS = ("exec", "httpGet", "tcpSocket", "sleep")
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
HTTP_SCHEMES = ("HTTP", "HTTPS")
NOT_FOR_INIT = "may not be set for init containers without restartPolicy=Always"


def validate_container_hooks(container: dict[str, Any], grace: Any, path: str, *,
                             init: bool = False) -> Causes:
    """``validateContainers``' lifecycle and probes; an init container may have them only
    with ``restartPolicy: Always`` (a sidecar), else each is ``Forbidden``."""
    keys = ("lifecycle", *PROBES)
    if init and container.get("restartPolicy") != "Always":
        return [forbidden(f"{path}.{key}", NOT_FOR_INIT) for key in keys
                if container.get(key) is not None]
    causes: Causes = []
    lifecycle = container.get("lifecycle")
    if isinstance(lifecycle, dict):
        for hook in ("postStart", "preStop"):
            if isinstance(lifecycle.get(hook), dict):
                causes += _handler(lifecycle[hook], HOOK_HANDLERS, grace,
                                   f"{path}.lifecycle.{hook}")
    for key in PROBES:
        if isinstance(container.get(key), dict):
            causes += _probe(container[key], key, grace, f"{path}.{key}")
    return causes


def _probe(probe: dict[str, Any], kind: str, grace: Any, path: str) -> Causes:
    """``validateProbe`` and what each kind of probe adds."""
    causes = _handler(probe, PROBE_HANDLERS, grace, path)
    for key in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold",
                "failureThreshold"):
        causes += nonnegative(probe.get(key), f"{path}.{key}")
    period = probe.get("terminationGracePeriodSeconds")
    if isinstance(period, int) and period <= 0:
        causes.append(invalid(f"{path}.terminationGracePeriodSeconds", period,
                              "must be greater than 0"))
    success = probe.get("successThreshold") or 1  # SetDefaults_Probe
    if kind != "readinessProbe" and success != 1:
        causes.append(invalid(f"{path}.successThreshold", success, "must be 1"))
    if kind == "readinessProbe" and period is not None:
        causes.append(invalid(f"{path}.terminationGracePeriodSeconds", period,
                              "must not be set for readinessProbes"))
    return causes


def _handler(handler: dict[str, Any], kinds: tuple[str, ...], grace: Any, path: str) -> Causes:
    """``validateHandler``: exactly one action, then that action's own rules."""
    given = [kind for kind in kinds if handler.get(kind) is not None]
    if not given:
        return [required(path, "must specify a handler type")]
    causes = [forbidden(f"{path}.{kind}", "may not specify more than 1 handler type")
              for kind in given[1:]]
    kind = given[0]
    action = handler[kind] if isinstance(handler[kind], dict) else {}
    return causes + _action(kind, action, grace, f"{path}.{kind}")


def _action(kind: str, action: dict[str, Any], grace: Any, path: str) -> Causes:
    if kind == "exec":  # validateExecAction
        return [] if action.get("command") else [required(f"{path}.command")]
    if kind == "httpGet":
        return _http_get(action, path)
    if kind == "sleep":
        return _sleep(action.get("seconds") or 0, grace, path)
    return validate_port_num_or_name(action.get("port") or 0, f"{path}.port")


def _http_get(action: dict[str, Any], path: str) -> Causes:
    """``validateHTTPGetAction`` (an empty path and scheme are defaulted, not refused)."""
    causes = validate_port_num_or_name(action.get("port") or 0, f"{path}.port")
    scheme = action.get("scheme") or "HTTP"
    if scheme not in HTTP_SCHEMES:
        causes.append(not_supported(f"{path}.scheme", scheme, HTTP_SCHEMES))
    headers = action.get("httpHeaders")
    for header in headers if isinstance(headers, list) else []:
        name = str(header.get("name") or "") if isinstance(header, dict) else ""
        causes += [invalid(f"{path}.httpHeaders", name, msg) for msg in is_http_header_name(name)]
    return causes


def validate_port_num_or_name(port: Any, path: str) -> Causes:
    """``ValidatePortNumOrName``: an int-or-string port, by its JSON type."""
    if isinstance(port, str):
        return [invalid(path, port, msg) for msg in is_valid_port_name(port)]
    number = port if isinstance(port, int) else 0
    return [invalid(path, number, msg) for msg in is_valid_port_num(number)]


def _sleep(seconds: Any, grace: Any, path: str) -> Causes:
    """``validateSleepAction`` with ``PodLifecycleSleepActionAllowZero`` (beta, on in 1.33):
    0 up to the pod's ``terminationGracePeriodSeconds``."""
    if not isinstance(grace, int) or not isinstance(seconds, int) or 0 <= seconds <= grace:
        return []
    return [invalid(path, seconds, "must be non-negative and less than "
                                   f"terminationGracePeriodSeconds ({grace})")]
