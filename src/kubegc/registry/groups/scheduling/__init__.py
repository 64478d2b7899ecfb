"""The scheduling.k8s.io group's storage: PriorityClasses (cf.
pkg/registry/scheduling/priorityclass). Stored only: the scheduler does not read
priorities (no preemption)."""

from __future__ import annotations

from kubegc.api.errors import StatusCause, field_error
from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext, stored
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.validation.paths import (
    forbidden_change,
    immutable,
    one_of,
)

#: ``scheduling.HighestUserDefinablePriority``
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
_SYSTEM_PREFIX = "system-"


def default_priority_class(obj: Obj) -> None:
    """``SetDefaults_PriorityClass``: preemption policy PreemptLowerPriority."""
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


def validate_priority_class(obj: Obj) -> list[StatusCause]:
    """``ValidatePriorityClass``: names with the system prefix are reserved (kubegc
    creates no system priority classes), user values are at most 1e9."""
    name = str((obj.get("metadata") or {}).get("name") or "")
    value = obj.get("value")
    causes = one_of(obj, "preemptionPolicy", ("Never", "PreemptLowerPriority"))
    if name.startswith(_SYSTEM_PREFIX):
        causes.append(field_error(
            "FieldValueForbidden", "metadata.name",
            f"priority class names with '{_SYSTEM_PREFIX}' prefix are reserved for system use "
            f"only. error: {name} is not a known system priority class"))
    elif isinstance(value, int) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        causes.append(field_error(
            "FieldValueForbidden", "value",
            f"maximum allowed value of a user defined priority is "
            f"{HIGHEST_USER_DEFINABLE_PRIORITY}"))
    return causes


def validate_priority_class_update(new: Obj, old: Obj) -> list[StatusCause]:
    """``ValidatePriorityClassUpdate``: value and preemption policy never change."""
    return (validate_priority_class(new)
            + forbidden_change(new, old, "value", "may not be changed in an update.")
            + immutable(new, old, "preemptionPolicy"))


def resources(ctx: StorageContext) -> list[Resource]:
    """PriorityClasses (cf. pkg/registry/scheduling/priorityclass)."""
    return [stored(ctx, builtin("scheduling.k8s.io", "priorityclasses"), Strategy(
        tracks_generation=False, validate=validate_priority_class,
        validate_update=validate_priority_class_update, defaulter=default_priority_class),
            table=printers.PRIORITY_CLASS)]
