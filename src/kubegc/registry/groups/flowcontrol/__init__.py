"""FlowSchemas and PriorityLevelConfigurations (cf. pkg/registry/flowcontrol,
pkg/apis/flowcontrol/{v1/defaults.go,validation}).

Stored only: kubegc has no API Priority and Fairness (every request is served as it
comes) and creates none of the mandatory or suggested objects kube-apiserver keeps.
"""

from __future__ import annotations

from kubegc.api.errors import StatusCause, field_error
from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext, stored
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.validation.paths import empty_status, one_of, required, spec_of, value_at

_DEFAULT_MATCHING_PRECEDENCE = 1000


def default_flow_schema(obj: Obj) -> None:
    """``SetDefaults_FlowSchemaSpec``: matching precedence 1000."""
    spec = spec_of(obj)
    if not spec.get("matchingPrecedence"):
        spec["matchingPrecedence"] = _DEFAULT_MATCHING_PRECEDENCE


def validate_flow_schema(obj: Obj) -> list[StatusCause]:
    """``ValidateFlowSchemaSpec``: a priority level, a precedence in [1, 10000], a known
    distinguisher method."""
    causes = required(obj, "spec.priorityLevelConfiguration.name")
    precedence = value_at(obj, "spec.matchingPrecedence")
    if isinstance(precedence, int) and not 0 < precedence <= 10000:
        causes.append(field_error("FieldValueInvalid", "spec.matchingPrecedence",
                                  "must be a positive value no more than 10000", precedence,
                                  go_type="int32"))
    return causes + one_of(obj, "spec.distinguisherMethod.type", ("ByNamespace", "ByUser"))


def default_priority_level(obj: Obj) -> None:
    """``SetDefaults_PriorityLevelConfiguration`` and its limited / exempt / queuing
    parts (v1: nominal shares 30 for a limited level, 0 for an exempt one)."""
    limited = value_at(obj, "spec.limited")
    if isinstance(limited, dict):
        limited.setdefault("nominalConcurrencyShares", 30)
        limited.setdefault("lendablePercent", 0)
        queuing = value_at(limited, "limitResponse.queuing")
        if isinstance(queuing, dict):
            for key, value in (("queues", 64), ("handSize", 8), ("queueLengthLimit", 50)):
                queuing.setdefault(key, value)
    exempt = value_at(obj, "spec.exempt")
    if isinstance(exempt, dict):
        exempt.setdefault("nominalConcurrencyShares", 0)
        exempt.setdefault("lendablePercent", 0)


def validate_priority_level(obj: Obj) -> list[StatusCause]:
    """``ValidatePriorityLevelConfigurationSpec``: type Exempt or Limited, with its part."""
    causes = one_of(obj, "spec.type", ("Exempt", "Limited"), optional=False)
    if value_at(obj, "spec.type") == "Limited":
        causes += required(obj, "spec.limited", detail="must not be empty when type is Limited")
    return causes


def resources(ctx: StorageContext) -> list[Resource]:
    group = "flowcontrol.apiserver.k8s.io"
    return [
        stored(ctx, builtin(group, "flowschemas"), Strategy(
            prepare_for_create=empty_status, validate=validate_flow_schema,
            defaulter=default_flow_schema), status=True, table=printers.FLOW_SCHEMA),
        stored(ctx, builtin(group, "prioritylevelconfigurations"), Strategy(
            prepare_for_create=empty_status, validate=validate_priority_level,
            defaulter=default_priority_level), status=True, table=printers.PRIORITY_LEVEL),
    ]
