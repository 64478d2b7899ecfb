"""Taints and tolerations, the words the scheduler, the taint-eviction controller, the node
lifecycle controller and the planner share (cf. k8s.io/api/core/v1 ``Toleration.ToleratesTaint``,
pkg/apis/core/v1/helper ``GetMatchingTolerations``, pkg/controller/tainteviction
``getMinTolerationTime``, pkg/util/taints). Pure functions over JSON-shaped taints and
tolerations.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

Taint = dict[str, Any]
Toleration = dict[str, Any]

NO_EXECUTE = "NoExecute"
NO_SCHEDULE = "NoSchedule"
#: the node lifecycle controller's taints (``NotReadyTaintTemplate``, ``UnreachableTaintTemplate``)
TAINT_NODE_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_NODE_UNREACHABLE = "node.kubernetes.io/unreachable"
#: set by an administrator on a node known to be down (KEP-2268, non-graceful node shutdown)
TAINT_NODE_OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"


def tolerates_taint(toleration: Toleration, taint: Taint) -> bool:
    """``Toleration.ToleratesTaint`` (k8s.io/api/core/v1/toleration.go, 1.32): an empty
    effect or key matches any; operator ``Exists`` ignores the value, ``Equal`` (or empty)
    compares it."""
    if toleration.get("effect") and toleration.get("effect") != taint.get("effect"):
        return False
    if toleration.get("key") and toleration.get("key") != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def tolerations_of(pod: dict[str, Any]) -> list[Toleration]:
    return list((pod.get("spec") or {}).get("tolerations") or [])


def pod_tolerates(pod: dict[str, Any], taint: Taint) -> bool:
    """Whether some toleration of ``pod`` matches ``taint``."""
    return any(tolerates_taint(t, taint) for t in tolerations_of(pod))


def get_matching_tolerations(taints: Sequence[Taint], tolerations: Sequence[Toleration]
                             ) -> tuple[bool, list[Toleration]]:
    """``GetMatchingTolerations``: whether every taint is tolerated, and for each taint the
    first toleration that tolerates it."""
    used: list[Toleration] = []
    for taint in taints:
        match = next((t for t in tolerations if tolerates_taint(t, taint)), None)
        if match is None:
            return False, []
        used.append(match)
    return True, used


def min_toleration_seconds(tolerations: Sequence[Toleration]) -> float | None:
    """``getMinTolerationTime``: the smallest ``tolerationSeconds`` of ``tolerations`` (0 for
    none given, or one that is <= 0); None when every one tolerates forever."""
    if not tolerations:
        return 0.0
    seconds = [t["tolerationSeconds"] for t in tolerations
               if t.get("tolerationSeconds") is not None]
    if not seconds:
        return None
    return float(max(min(int(s) for s in seconds), 0))


def no_execute_taints(node: dict[str, Any]) -> list[Taint]:
    """``getNoExecuteTaints``: the node's taints of effect NoExecute."""
    return [t for t in (node.get("spec") or {}).get("taints") or []
            if t.get("effect") == NO_EXECUTE]


def taint_key_exists(taints: Iterable[Taint], key: str) -> bool:
    return any(t.get("key") == key for t in taints)


def taint_string(taint: Taint) -> str:
    """``Taint.ToString``: ``key=value:effect`` (``key:effect`` without a value), as
    ``kubectl taint`` spells it."""
    value = f"={taint['value']}" if taint.get("value") else ""
    return f"{taint.get('key', '')}{value}:{taint.get('effect', '')}"


def toleration_string(toleration: Toleration) -> str:
    """A toleration, readably: ``key=value:effect for Ns`` (``key:effect``, ``Exists``)."""
    key = toleration.get("key") or "*"
    operator = toleration.get("operator") or "Equal"
    value = f"={toleration.get('value') or ''}" if operator == "Equal" else " (Exists)"
    effect = toleration.get("effect") or "*"
    seconds = toleration.get("tolerationSeconds")
    forever = "" if seconds is None else f" for {int(seconds)}s"
    return f"{key}{value}:{effect}{forever}"
