"""Per-resource ``kubectl get`` printers (cf. pkg/printers/internalversion/printers.go).

Contract:
  * ``HANDLERS[(group, resource)]`` pairs a built-in resource's column definitions with its
    row function (``RowFn``), as upstream's ``AddHandlers``; ``PRINTERS`` and ``COLUMNS`` are
    its two halves under the same keys. A row has one cell per column, and a printer always
    fills the wide (``priority: 1``) cells; kubectl hides them unless ``-o wide``.
  * Resources without a printer use ``print_default`` and ``DEFAULT_COLUMNS`` (Name, Age;
    upstream's generic convertor would print Name and "Created At", which only
    CustomResourceDefinitions get here).
  * Column names, types, priorities and cells follow upstream. Descriptions are upstream's
    where printers.go spells them out; where it quotes a field's ``SwaggerDoc()`` they are an
    abbreviated first sentence of that documentation (kubectl never shows descriptions).
  * Integer columns carry JSON integers; ages and durations follow ``duration.HumanDuration``
    (``human_duration``).

Modules: ``pods``, ``workloads`` (apps and batch), ``events``, ``core`` (the other core
objects, leases and CRDs), ``volumes`` (PVs and PVCs), ``networking``, ``storage``
(storage.k8s.io), ``policy`` (autoscalers, budgets, priorities, templates, revisions,
quotas), ``access`` (RBAC, CSRs, admission, flow control, APIServices); ``helpers`` holds
the shared cells and ``duration`` apimachinery's duration formatting.
May import: ``kubegc.api``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kubegc.server.printers import (
    access,
    core,
    events,
    kubegc,
    networking,
    pods,
    policy,
    storage,
    volumes,
    workloads,
)
from kubegc.server.printers.duration import human_duration, short_human_duration
from kubegc.server.printers.helpers import AGE, NAME, RowFn, name_and

ColumnDefinitions = list[dict[str, Any]]


class TableHandler(NamedTuple):
    """A resource's column definitions and the printer that fills them (cf. printers.go
    ``TableHandler(columnDefinitions, printFunc)``)."""

    columns: ColumnDefinitions
    print_row: RowFn


HANDLERS: dict[tuple[str, str], TableHandler] = {
    ("", "pods"): TableHandler(pods.POD_COLUMN_DEFINITIONS, pods.print_pod),
    ("apps", "deployments"):
        TableHandler(workloads.DEPLOYMENT_COLUMN_DEFINITIONS, workloads.print_deployment),
    ("apps", "replicasets"):
        TableHandler(workloads.REPLICA_SET_COLUMN_DEFINITIONS, workloads.print_replica_set),
    ("", "replicationcontrollers"): TableHandler(
        workloads.REPLICATION_CONTROLLER_COLUMN_DEFINITIONS,
        workloads.print_replication_controller),
    ("apps", "statefulsets"):
        TableHandler(workloads.STATEFUL_SET_COLUMN_DEFINITIONS, workloads.print_stateful_set),
    ("apps", "daemonsets"):
        TableHandler(workloads.DAEMON_SET_COLUMN_DEFINITIONS, workloads.print_daemon_set),
    ("batch", "jobs"): TableHandler(workloads.JOB_COLUMN_DEFINITIONS, workloads.print_job),
    ("batch", "cronjobs"):
        TableHandler(workloads.CRON_JOB_COLUMN_DEFINITIONS, workloads.print_cron_job),
    ("", "namespaces"): TableHandler(core.NAMESPACE_COLUMN_DEFINITIONS, core.print_namespace),
    ("", "nodes"): TableHandler(core.NODE_COLUMN_DEFINITIONS, core.print_node),
    ("", "events"): TableHandler(events.EVENT_COLUMN_DEFINITIONS, events.print_event),
    ("events.k8s.io", "events"): TableHandler(events.EVENT_COLUMN_DEFINITIONS, events.print_event),
    ("", "services"): TableHandler(core.SERVICE_COLUMN_DEFINITIONS, core.print_service),
    ("", "configmaps"): TableHandler(core.CONFIG_MAP_COLUMN_DEFINITIONS, core.print_config_map),
    ("", "secrets"): TableHandler(core.SECRET_COLUMN_DEFINITIONS, core.print_secret),
    ("", "endpoints"): TableHandler(core.ENDPOINTS_COLUMN_DEFINITIONS, core.print_endpoints),
    ("", "serviceaccounts"):
        TableHandler(core.SERVICE_ACCOUNT_COLUMN_DEFINITIONS, core.print_service_account),
    ("coordination.k8s.io", "leases"):
        TableHandler(core.LEASE_COLUMN_DEFINITIONS, core.print_lease),
    ("", "persistentvolumes"):
        TableHandler(volumes.PERSISTENT_VOLUME_COLUMN_DEFINITIONS, volumes.print_persistent_volume),
    ("", "persistentvolumeclaims"): TableHandler(
        volumes.PERSISTENT_VOLUME_CLAIM_COLUMN_DEFINITIONS, volumes.print_persistent_volume_claim),
    ("kubegc.io", "deletionrecords"): TableHandler(
        kubegc.DELETION_RECORD_COLUMN_DEFINITIONS, kubegc.print_deletion_record),
    ("apiextensions.k8s.io", "customresourcedefinitions"): TableHandler(
        core.CUSTOM_RESOURCE_DEFINITION_COLUMN_DEFINITIONS, core.print_custom_resource_definition),
    **{key: TableHandler(core.CUSTOM_RESOURCE_DEFINITION_COLUMN_DEFINITIONS,
                         core.print_custom_resource_definition)  # Name, Created At
       for key in (("", "limitranges"), ("rbac.authorization.k8s.io", "roles"),
                   ("rbac.authorization.k8s.io", "clusterroles"))},
    ("", "podtemplates"):
        TableHandler(policy.POD_TEMPLATE_COLUMN_DEFINITIONS, policy.print_pod_template),
    ("", "resourcequotas"):
        TableHandler(policy.RESOURCE_QUOTA_COLUMN_DEFINITIONS, policy.print_resource_quota),
    ("", "componentstatuses"): TableHandler(
        policy.COMPONENT_STATUS_COLUMN_DEFINITIONS, policy.print_component_status),
    ("apps", "controllerrevisions"): TableHandler(
        policy.CONTROLLER_REVISION_COLUMN_DEFINITIONS, policy.print_controller_revision),
    ("autoscaling", "horizontalpodautoscalers"):
        TableHandler(policy.HPA_COLUMN_DEFINITIONS, policy.print_hpa),
    ("policy", "poddisruptionbudgets"):
        TableHandler(policy.PDB_COLUMN_DEFINITIONS, policy.print_pdb),
    ("scheduling.k8s.io", "priorityclasses"):
        TableHandler(policy.PRIORITY_CLASS_COLUMN_DEFINITIONS, policy.print_priority_class),
    ("node.k8s.io", "runtimeclasses"):
        TableHandler(policy.RUNTIME_CLASS_COLUMN_DEFINITIONS, policy.print_runtime_class),
    ("networking.k8s.io", "ingresses"):
        TableHandler(networking.INGRESS_COLUMN_DEFINITIONS, networking.print_ingress),
    ("networking.k8s.io", "ingressclasses"): TableHandler(
        networking.INGRESS_CLASS_COLUMN_DEFINITIONS, networking.print_ingress_class),
    ("networking.k8s.io", "networkpolicies"): TableHandler(
        networking.NETWORK_POLICY_COLUMN_DEFINITIONS, networking.print_network_policy),
    ("discovery.k8s.io", "endpointslices"): TableHandler(
        networking.ENDPOINT_SLICE_COLUMN_DEFINITIONS, networking.print_endpoint_slice),
    ("storage.k8s.io", "storageclasses"): TableHandler(
        storage.STORAGE_CLASS_COLUMN_DEFINITIONS, storage.print_storage_class),
    ("storage.k8s.io", "csidrivers"):
        TableHandler(storage.CSI_DRIVER_COLUMN_DEFINITIONS, storage.print_csi_driver),
    ("storage.k8s.io", "csinodes"):
        TableHandler(storage.CSI_NODE_COLUMN_DEFINITIONS, storage.print_csi_node),
    ("storage.k8s.io", "csistoragecapacities"): TableHandler(
        storage.CSI_STORAGE_CAPACITY_COLUMN_DEFINITIONS, storage.print_csi_storage_capacity),
    ("storage.k8s.io", "volumeattachments"): TableHandler(
        storage.VOLUME_ATTACHMENT_COLUMN_DEFINITIONS, storage.print_volume_attachment),
    ("rbac.authorization.k8s.io", "rolebindings"):
        TableHandler(access.ROLE_BINDING_COLUMN_DEFINITIONS, access.print_role_binding),
    ("rbac.authorization.k8s.io", "clusterrolebindings"): TableHandler(
        access.CLUSTER_ROLE_BINDING_COLUMN_DEFINITIONS, access.print_role_binding),
    ("certificates.k8s.io", "certificatesigningrequests"): TableHandler(
        access.CSR_COLUMN_DEFINITIONS, access.print_certificate_signing_request),
    **{("admissionregistration.k8s.io", resource): TableHandler(
        access.WEBHOOK_COLUMN_DEFINITIONS, access.print_webhook_configuration)
       for resource in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations")},
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"): TableHandler(
        access.VALIDATING_ADMISSION_POLICY_COLUMN_DEFINITIONS,
        access.print_validating_admission_policy),
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): TableHandler(
        access.VALIDATING_ADMISSION_POLICY_BINDING_COLUMN_DEFINITIONS,
        access.print_validating_admission_policy_binding),
    ("flowcontrol.apiserver.k8s.io", "flowschemas"):
        TableHandler(access.FLOW_SCHEMA_COLUMN_DEFINITIONS, access.print_flow_schema),
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): TableHandler(
        access.PRIORITY_LEVEL_COLUMN_DEFINITIONS, access.print_priority_level),
    ("apiregistration.k8s.io", "apiservices"):
        TableHandler(access.API_SERVICE_COLUMN_DEFINITIONS, access.print_api_service),
}
PRINTERS: dict[tuple[str, str], RowFn] = {key: h.print_row for key, h in HANDLERS.items()}
COLUMNS: dict[tuple[str, str], ColumnDefinitions] = {key: h.columns for key, h in HANDLERS.items()}

DEFAULT_COLUMNS: ColumnDefinitions = [NAME, AGE]
print_default: RowFn = name_and()

__all__ = [
    "COLUMNS",
    "DEFAULT_COLUMNS",
    "HANDLERS",
    "PRINTERS",
    "ColumnDefinitions",
    "RowFn",
    "TableHandler",
    "human_duration",
    "print_default",
    "short_human_duration",
]
