"""The five conditions a Terminating namespace reports (cf.
pkg/controller/namespace/deletion/status_condition_utils.go, and upstream's
``TestNamespaceCondition``, test/integration/namespace/ns_conditions_test.go).

Each sync of a Terminating namespace collects failures in a ``NamespaceConditionUpdater``
and ``update`` writes all five condition types into ``status.conditions``: a failure as
``status: "True"`` with its reason and message, everything else as the "ok" variant
(``status: "False"``). Messages and reasons are upstream's, verbatim (see ``OK_REASONS``
and ``OK_MESSAGES`` for the ok variants, e.g. NamespaceDeletionContentFailure /
ContentDeleted / "All content successfully deleted, may be waiting on finalization").

Failure variants: ``DiscoveryFailed`` / ``GroupVersionParsingFailed`` (the error text),
``ContentDeletionFailed`` "Failed to delete all resource types, N remaining: ...",
``SomeResourcesRemain`` "Some resources are remaining: deployments.apps has 1 resource
instances", ``SomeFinalizersRemain`` "Some content in the namespace has finalizers
remaining: custom.io/finalizer in 1 resource instances" (lists sorted).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubegc.api.types import Obj

DISCOVERY_FAILURE = "NamespaceDeletionDiscoveryFailure"
GV_PARSING_FAILURE = "NamespaceDeletionGroupVersionParsingFailure"
CONTENT_FAILURE = "NamespaceDeletionContentFailure"
CONTENT_REMAINING = "NamespaceContentRemaining"
FINALIZERS_REMAINING = "NamespaceFinalizersRemaining"

#: the condition types the namespace controller maintains, in upstream's order
CONDITION_TYPES = (DISCOVERY_FAILURE, GV_PARSING_FAILURE, CONTENT_FAILURE, CONTENT_REMAINING,
                   FINALIZERS_REMAINING)
OK_MESSAGES = {
    DISCOVERY_FAILURE: "All resources successfully discovered",
    GV_PARSING_FAILURE: "All legacy kube types successfully parsed",
    CONTENT_FAILURE: "All content successfully deleted, may be waiting on finalization",
    CONTENT_REMAINING: "All content successfully removed",
    FINALIZERS_REMAINING: "All content successfully removed",
}
OK_REASONS = {
    DISCOVERY_FAILURE: "ResourcesDiscovered",
    GV_PARSING_FAILURE: "ParsedGroupVersions",
    CONTENT_FAILURE: "ContentDeleted",
    CONTENT_REMAINING: "ContentRemoved",
    FINALIZERS_REMAINING: "ContentRemoved",
}


def _failure(type_: str, reason: str, message: str, now: str) -> dict[str, Any]:
    return {"type": type_, "status": "True", "lastTransitionTime": now, "reason": reason,
            "message": message}


def successful_condition(type_: str, now: str) -> dict[str, Any]:
    return {"type": type_, "status": "False", "lastTransitionTime": now,
            "reason": OK_REASONS[type_], "message": OK_MESSAGES[type_]}


class NamespaceConditionUpdater:
    """Translates one sync's failures into namespace conditions (cf.
    ``namespaceConditionUpdater``). ``now`` stamps new transitions."""

    def __init__(self, now: str) -> None:
        self.now = now
        self.new_conditions: list[dict[str, Any]] = []
        self.delete_content_errors: list[str] = []

    def process_discover_resources_err(self, err: str) -> None:
        self.new_conditions.append(_failure(DISCOVERY_FAILURE, "DiscoveryFailed", err, self.now))

    def process_group_version_err(self, err: str) -> None:
        self.new_conditions.append(
            _failure(GV_PARSING_FAILURE, "GroupVersionParsingFailed", err, self.now))

    def process_delete_content_err(self, err: str) -> None:
        self.delete_content_errors.append(err)

    def process_content_totals(self, gvr_to_num_remaining: Mapping[tuple[str, str], int],
                               finalizers_to_num_remaining: Mapping[str, int]) -> None:
        """``gvr_to_num_remaining`` is keyed by (group, resource)."""
        resources = sorted(f"{resource}.{group} has {n} resource instances"
                           for (group, resource), n in gvr_to_num_remaining.items() if n)
        if resources:
            self.new_conditions.append(_failure(
                CONTENT_REMAINING, "SomeResourcesRemain",
                f"Some resources are remaining: {', '.join(resources)}", self.now))
        finalizers = sorted(f"{finalizer} in {n} resource instances"
                            for finalizer, n in finalizers_to_num_remaining.items() if n)
        if finalizers:
            self.new_conditions.append(_failure(
                FINALIZERS_REMAINING, "SomeFinalizersRemain",
                "Some content in the namespace has finalizers remaining: "
                f"{', '.join(finalizers)}", self.now))

    def update(self, namespace: Obj) -> bool:
        """Write the five conditions into ``namespace["status"]``; whether anything changed."""
        if self.delete_content_errors and not _get(self.new_conditions, CONTENT_FAILURE):
            messages = sorted(self.delete_content_errors)
            self.new_conditions.append(_failure(
                CONTENT_FAILURE, "ContentDeletionFailed",
                f"Failed to delete all resource types, {len(messages)} remaining: "
                f"{', '.join(messages)}", self.now))
        status = namespace.setdefault("status", {})
        return update_conditions(status, self.new_conditions, now=self.now)


def _get(conditions: list[dict[str, Any]], type_: str) -> dict[str, Any] | None:
    return next((c for c in conditions if c.get("type") == type_), None)


def update_conditions(status: dict[str, Any], new_conditions: list[dict[str, Any]], *,
                      now: str) -> bool:
    """Merge ``new_conditions`` (missing types: their ok variant) into ``status``, keeping
    unknown conditions and the existing order (cf. ``updateConditions``)."""
    conditions: list[dict[str, Any]] = list(status.get("conditions") or [])
    changed = False
    for type_ in CONDITION_TYPES:
        new = _get(new_conditions, type_) or successful_condition(type_, now)
        old = _get(conditions, type_)
        if old is None:
            conditions.append(new)
            changed = True
        elif any(old.get(k) != new.get(k) for k in ("status", "message", "reason")):
            if old.get("status") != new.get("status"):
                old["lastTransitionTime"] = now
            old.update(status=new["status"], reason=new["reason"], message=new["message"])
            changed = True
    status["conditions"] = conditions
    return changed
