"""A pod's affinity as ``pkg/apis/core/validation`` checks it (``validateAffinity``): node
affinity's selector terms (``ValidateNodeSelector``, ``ValidateNodeSelectorTerm``,
``ValidateNodeSelectorRequirement``: operator, values, a qualified key) and preferred
weights (``validatePreferredSchedulingTerms``); pod (anti-)affinity terms' label selectors
and topology keys (``validatePodAffinityTerm``) and weights
(``validateWeightedPodAffinityTerms``).
"""

from __future__ import annotations

from typing import Any

from kubegc.api.content import is_qualified_name
from kubegc.registry.validation.common import (
    Causes,
    forbidden,
    invalid,
    mapping,
    required,
    validate_label_selector,
)

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
WEIGHT_RANGE = "must be in the range 1-100"


def _maps(value: Any) -> list[tuple[int, dict[str, Any]]]:
    if not isinstance(value, list):
        return []
    return [(i, item) for i, item in enumerate(value) if isinstance(item, dict)]


def validate_affinity(affinity: Any, path: str) -> Causes:
    if not isinstance(affinity, dict):
        return []
    causes = _node_affinity(mapping(affinity, "nodeAffinity"), f"{path}.nodeAffinity")
    for kind in ("podAffinity", "podAntiAffinity"):
        causes += _pod_affinity(mapping(affinity, kind), f"{path}.{kind}")
    return causes


def _node_affinity(node: dict[str, Any], path: str) -> Causes:
    causes: Causes = []
    selector = node.get(REQUIRED)
    if isinstance(selector, dict):
        where = f"{path}.{REQUIRED}.nodeSelectorTerms"
        terms = _maps(selector.get("nodeSelectorTerms"))
        if not terms:
            causes.append(required(where, "must have at least one node selector term"))
        for i, term in terms:
            causes += _term(term, f"{where}[{i}]")
    for i, preferred in _maps(node.get(PREFERRED)):
        where = f"{path}.{PREFERRED}[{i}]"
        causes += _weight(preferred.get("weight"), f"{where}.weight")
        causes += _term(mapping(preferred, "preference"), f"{where}.preference")
    return causes


def _term(term: dict[str, Any], path: str) -> Causes:
    causes: Causes = []
    for j, requirement in _maps(term.get("matchExpressions")):
        causes += _requirement(requirement, f"{path}.matchExpressions[{j}]")
    return causes


def _requirement(requirement: dict[str, Any], path: str) -> Causes:
    """``ValidateNodeSelectorRequirement``."""
    operator, values = requirement.get("operator"), requirement.get("values") or []
    causes: Causes = []
    if operator in ("In", "NotIn"):
        if not values:
            causes.append(required(f"{path}.values",
                                   "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            causes.append(forbidden(f"{path}.values", "may not be specified when `operator` "
                                    "is 'Exists' or 'DoesNotExist'"))
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            causes.append(required(f"{path}.values", "must be specified single value when "
                                   "`operator` is 'Lt' or 'Gt'"))
    else:
        causes.append(invalid(f"{path}.operator", operator or "",
                              "not a valid selector operator"))
    key = str(requirement.get("key") or "")
    return causes + [invalid(f"{path}.key", key, msg) for msg in is_qualified_name(key)]


def _pod_affinity(affinity: dict[str, Any], path: str) -> Causes:
    causes: Causes = []
    for i, term in _maps(affinity.get(REQUIRED)):
        causes += _pod_term(term, f"{path}.{REQUIRED}[{i}]")
    for i, weighted in _maps(affinity.get(PREFERRED)):
        where = f"{path}.{PREFERRED}[{i}]"
        causes += _weight(weighted.get("weight"), f"{where}.weight")
        causes += _pod_term(mapping(weighted, "podAffinityTerm"), f"{where}.podAffinityTerm")
    return causes


def _pod_term(term: dict[str, Any], path: str) -> Causes:
    """``validatePodAffinityTerm``: its label selector, a topology key (both messages of an
    empty one, as upstream)."""
    causes = validate_label_selector(term.get("labelSelector"), f"{path}.labelSelector")
    key = str(term.get("topologyKey") or "")
    if not key:
        causes.append(required(f"{path}.topologyKey", "can not be empty"))
    return causes + [invalid(f"{path}.topologyKey", key, msg) for msg in is_qualified_name(key)]


def _weight(weight: Any, path: str) -> Causes:
    if isinstance(weight, int) and not 1 <= weight <= 100:
        return [invalid(path, weight, WEIGHT_RANGE)]
    return []
