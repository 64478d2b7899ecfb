"""The coordination.k8s.io group's storage: Leases, and their validation
(``pkg/apis/coordination/validation``: ``ValidateLeaseSpec``): the leader election kubegc
runs and reports reads these fields."""

from __future__ import annotations

from typing import Any

from kubegc.api.resources import builtin
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext, stored
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.validation.common import Causes, invalid, mapping, nonnegative


def validate_lease(obj: dict[str, Any]) -> Causes:
    spec = mapping(obj, "spec")
    causes: Causes = []
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        causes.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    return causes + nonnegative(spec.get("leaseTransitions"), "spec.leaseTransitions")


def resources(ctx: StorageContext) -> list[Resource]:
    """Leases (cf. pkg/registry/coordination/lease)."""
    return [stored(ctx, builtin("coordination.k8s.io", "leases"), Strategy(
        allow_create_on_update=True, tracks_generation=False, validate=validate_lease),
            table=printers.LEASE)]
