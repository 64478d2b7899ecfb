"""Lease validation (``pkg/apis/coordination/validation``: ``ValidateLeaseSpec``): the
leader election kubegc runs and reports reads these fields."""

from __future__ import annotations

from typing import Any

from kubegc.registry.validation.common import Causes, invalid, mapping, nonnegative


def validate_lease(obj: dict[str, Any]) -> Causes:
    spec = mapping(obj, "spec")
    causes: Causes = []
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        causes.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    return causes + nonnegative(spec.get("leaseTransitions"), "spec.leaseTransitions")
