"""Printers of the kinds that configure the API server itself: RBAC bindings,
CertificateSigningRequests, admission webhooks and policies, API Priority and Fairness
objects and APIServices (``printRoleBinding``, ``printCertificateSigningRequest``,
``printMutatingWebhook``, ``printValidatingAdmissionPolicy(Binding)``,
``printFlowSchema``, ``printPriorityLevelConfiguration``; APIServices as
kube-aggregator's table convertor). Roles and ClusterRoles have no printer upstream
(Name and Created At).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kubegc.registry.printers.duration import human_duration
from kubegc.registry.printers.helpers import (
    AGE,
    NAME,
    Conditions,
    Obj,
    age,
    column,
    format_label_selector,
    lookup,
    name_and,
)


def _binding_columns(kind: str) -> list[dict[str, Any]]:
    return [NAME, column("Role", "RoleRef can only reference the current namespace or a"
                         " ClusterRole."), AGE,
            column("Users", f"Users in the {kind}", wide=True),
            column("Groups", f"Groups in the {kind}", wide=True),
            column("ServiceAccounts", f"ServiceAccounts in the {kind}", wide=True)]


ROLE_BINDING_COLUMN_DEFINITIONS = _binding_columns("roleBinding")
CLUSTER_ROLE_BINDING_COLUMN_DEFINITIONS = _binding_columns("clusterRoleBinding")
CSR_COLUMN_DEFINITIONS = [
    NAME, AGE, column("SignerName", "signerName indicates the requested signer."),
    column("Requestor", "request contains an x509 certificate signing request."),
    column("RequestedDuration", "expirationSeconds is the requested duration of validity of"
           " the issued certificate."),
    column("Condition", "conditions applied to the request."),
]
WEBHOOK_COLUMN_DEFINITIONS = [
    NAME, column("Webhooks", "Webhooks indicates the number of webhooks registered in this"
                 " configuration", "integer"), AGE,
]
VALIDATING_ADMISSION_POLICY_COLUMN_DEFINITIONS = [
    NAME, column("Validations", "Validations indicates the number of validation rules defined"
                 " in this configuration", "integer"),
    column("ParamKind", "ParamKind specifies the kind of resources used to parameterize this"
           " policy"), AGE,
]
VALIDATING_ADMISSION_POLICY_BINDING_COLUMN_DEFINITIONS = [
    NAME, column("PolicyName", "PolicyName indicates the policy definition which the policy"
                 " binding binded to"),
    column("ParamRef", "ParamRef indicates the param resource which sets the configration"
           " param"), AGE,
]
FLOW_SCHEMA_COLUMN_DEFINITIONS = [
    NAME, column("PriorityLevel", "`name` is the name of the priority level configuration"
                 " being referenced"),
    column("MatchingPrecedence", "`matchingPrecedence` is used to choose among the FlowSchemas"
           " that match a given request."),
    column("DistinguisherMethod", "`distinguisherMethod` defines how to compute the flow"
           " distinguisher for requests that match this schema."), AGE,
    column("MissingPL", "references a broken or non-existent PriorityLevelConfiguration"),
]
PRIORITY_LEVEL_COLUMN_DEFINITIONS = [
    NAME, column("Type", "`type` indicates whether this priority level is subject to"
                 " limitation on request execution."),
    column("NominalConcurrencyShares", "`nominalConcurrencyShares` (NCS) contributes to the"
           " computation of the NominalConcurrencyLimit (NominalCL) of this level."),
    column("Queues", "`queues` is the number of queues for this priority level."),
    column("HandSize", "`handSize` is a small positive number that configures the shuffle"
           " sharding of requests into queues."),
    column("QueueLengthLimit", "`queueLengthLimit` is the maximum number of requests allowed"
           " to be waiting in a given queue of this priority level at a time."), AGE,
]
API_SERVICE_COLUMN_DEFINITIONS = [
    NAME, column("Service", "The reference to the service that hosts this API endpoint."),
    column("Available", "Whether this service is available."), AGE,
]


def _subjects(kind: str, *, service_accounts: bool = False) -> Any:
    """``rbac.SubjectsStrings``: the names of one kind of subject, ``ns/name`` for
    service accounts."""
    def cell(obj: Obj) -> str:
        names = [f"{s.get('namespace', '')}/{s.get('name', '')}" if service_accounts
                 else str(s.get("name", "")) for s in obj.get("subjects") or []
                 if isinstance(s, dict) and s.get("kind") == kind]
        return ", ".join(names)
    return cell


def _role_ref(obj: Obj) -> str:
    return f"{lookup(obj, 'roleRef', 'kind') or ''}/{lookup(obj, 'roleRef', 'name') or ''}"


def print_role_binding(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    return [lookup(obj, "metadata", "name") or "", _role_ref(obj), age(obj, now),
            _subjects("User")(obj), _subjects("Group")(obj),
            _subjects("ServiceAccount", service_accounts=True)(obj)], []


def _csr_condition(obj: Obj) -> str:
    """``extractCSRStatus``: Denied, Approved or Pending, then Failed, Issued."""
    kinds = {c.get("type") for c in lookup(obj, "status", "conditions") or []
             if isinstance(c, dict)}
    status = "Denied" if "Denied" in kinds else "Approved" if "Approved" in kinds else "Pending"
    if "Failed" in kinds:
        status += ",Failed"
    if lookup(obj, "status", "certificate"):
        status += ",Issued"
    return status


def print_certificate_signing_request(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    seconds = lookup(obj, "spec", "expirationSeconds")
    return [lookup(obj, "metadata", "name") or "", age(obj, now),
            lookup(obj, "spec", "signerName") or "<none>",
            lookup(obj, "spec", "username") or "",
            "<none>" if seconds is None else human_duration(float(seconds)),
            _csr_condition(obj)], []


print_webhook_configuration = name_and(lambda o: len(o.get("webhooks") or []))


def _param_kind(obj: Obj) -> str:
    kind = lookup(obj, "spec", "paramKind")
    if not isinstance(kind, dict):
        return "<unset>"
    return f"{kind.get('apiVersion', '')}/{kind.get('kind', '')}"


def _param_ref(obj: Obj) -> str:
    ref = lookup(obj, "spec", "paramRef")
    if not isinstance(ref, dict):
        return "<unset>"
    if ref.get("name"):
        return f"{ref.get('namespace') or '*'}/{ref['name']}"
    if ref.get("selector") is not None:
        return format_label_selector(ref["selector"], empty="")
    return "<unset>"


print_validating_admission_policy = name_and(
    lambda o: len(lookup(o, "spec", "validations") or []), _param_kind)
print_validating_admission_policy_binding = name_and(
    lambda o: lookup(o, "spec", "policyName") or "", _param_ref)


def print_flow_schema(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    dangling = next((c.get("status", "?") for c in lookup(obj, "status", "conditions") or []
                     if isinstance(c, dict) and c.get("type") == "Dangling"), "?")
    return [lookup(obj, "metadata", "name") or "",
            lookup(obj, "spec", "priorityLevelConfiguration", "name") or "",
            int(lookup(obj, "spec", "matchingPrecedence") or 0),
            lookup(obj, "spec", "distinguisherMethod", "type") or "<none>", age(obj, now),
            dangling], []


def print_priority_level(obj: Obj, now: datetime) -> tuple[list[Any], Conditions]:
    limited = lookup(obj, "spec", "limited")
    cells: list[Any] = ["<none>"] * 4
    if isinstance(limited, dict):
        cells[0] = limited.get("nominalConcurrencyShares", 0)
        queuing = lookup(limited, "limitResponse", "queuing")
        if isinstance(queuing, dict):
            cells[1:] = [queuing.get(k, 0) for k in ("queues", "handSize", "queueLengthLimit")]
    return [lookup(obj, "metadata", "name") or "", lookup(obj, "spec", "type") or "", *cells,
            age(obj, now)], []


def _api_service(obj: Obj) -> str:
    service = lookup(obj, "spec", "service")
    if not isinstance(service, dict):
        return "Local"
    return f"{service.get('namespace', '')}/{service.get('name', '')}"


def _available(obj: Obj) -> str:
    for condition in lookup(obj, "status", "conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "Available":
            if condition.get("status") == "True":
                return "True"
            return f"{condition.get('status', '')} ({condition.get('reason', '')})"
    return "Unknown"


print_api_service = name_and(_api_service, _available)
