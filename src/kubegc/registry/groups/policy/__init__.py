"""PodDisruptionBudgets (cf. pkg/registry/policy/poddisruptionbudget,
pkg/apis/policy/validation). The disruption controller keeps their status; the eviction
subresource of pods (``groups.core.eviction``) reads and decrements it.
"""

from __future__ import annotations

import re
from typing import Any

from kubegc.api.errors import StatusCause, field_error
from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext, stored
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.validation.paths import one_of

_PERCENT = re.compile(r"^[0-9]+%$")


def prepare_pdb_create(obj: Obj) -> None:
    """``PrepareForCreate``: no status from a create; the zero status's JSON (its counts
    are not omitempty)."""
    obj["status"] = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
                     "expectedPods": 0}


def validate_pdb(obj: Obj) -> list[StatusCause]:
    """``ValidatePodDisruptionBudgetSpec``: minAvailable or maxUnavailable, each a
    non-negative integer or a percentage up to 100%."""
    spec = obj.get("spec") or {}
    causes: list[StatusCause] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        causes.append(field_error("FieldValueInvalid", "spec",
                                  "minAvailable and maxUnavailable cannot be both set", spec,
                                  go_type="policy.PodDisruptionBudgetSpec"))
    for key in ("minAvailable", "maxUnavailable"):
        if spec.get(key) is not None:
            causes += _int_or_percent(spec[key], f"spec.{key}")
    return causes + one_of(obj, "spec.unhealthyPodEvictionPolicy",
                           ("AlwaysAllow", "IfHealthyBudget"))


def _int_or_percent(value: Any, path: str) -> list[StatusCause]:
    """``ValidatePositiveIntOrPercent`` and ``IsNotMoreThan100Percent``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return [] if value >= 0 else [field_error(
            "FieldValueInvalid", path, "must be greater than or equal to 0", value,
            go_type="int64")]
    text = str(value)
    if not _PERCENT.match(text):
        return [field_error("FieldValueInvalid", path,
                            "a valid percent string must be a numeric string followed by an "
                            "ending '%' (e.g. '1%',  or '93%', regex used for validation is "
                            "'[0-9]+%')", text)]
    if int(text[:-1]) > 100:
        return [field_error("FieldValueInvalid", path, "must not be greater than 100%", text)]
    return []


PDBS = builtin("policy", "poddisruptionbudgets")
STRATEGY = Strategy(prepare_for_create=prepare_pdb_create, validate=validate_pdb)


def resources(ctx: StorageContext) -> list[Resource]:
    return [stored(ctx, PDBS, STRATEGY, status=True, table=printers.PDB)]
