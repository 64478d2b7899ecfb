"""Per-resource ``kubectl get`` printers (cf. pkg/printers/internalversion/printers.go).

Contract:
  * A ``TableHandler`` pairs a resource's column definitions with its row function
    (``RowFn``), as upstream's ``AddHandlers``; the constants below are the built-in
    resources' (``POD``, ``DEPLOYMENT``...), and each resource's storage names its own
    (``registry.groups``: ``Resource.table``, upstream's ``TableConvertor``). A row has one
    cell per column, and a printer always fills the wide (``priority: 1``) cells; kubectl
    hides them unless ``-o wide``.
  * Resources without a printer use ``DEFAULT`` (Name, Age; upstream's generic convertor
    would print Name and "Created At", which only CustomResourceDefinitions and the
    resources named ``NAME_AND_CREATED_AT`` get here); a custom resource its CRD's columns
    (``custom``).
  * Column names, types, priorities and cells follow upstream. Descriptions are upstream's
    where printers.go spells them out; where it quotes a field's ``SwaggerDoc()`` they are an
    abbreviated first sentence of that documentation (kubectl never shows descriptions).
  * Integer columns carry JSON integers; ages and durations follow ``duration.HumanDuration``
    (``human_duration``).

Modules: ``pods``, ``workloads`` (apps and batch), ``events``, ``core`` (the other core
objects, leases and CRDs), ``volumes`` (PVs and PVCs), ``networking``, ``storage_k8s_io``
(storage.k8s.io), ``policy`` (autoscalers, budgets, priorities, templates, revisions,
quotas), ``access`` (RBAC, CSRs, admission, flow control, APIServices); ``helpers`` holds
the shared cells and ``duration`` apimachinery's duration formatting.
May import: ``kubegc.api``.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

from kubegc.registry.printers import (
    access,
    core,
    events,
    kubegc,
    networking,
    pods,
    policy,
    storage_k8s_io,
    volumes,
    workloads,
)
from kubegc.registry.printers.duration import human_duration, short_human_duration
from kubegc.registry.printers.helpers import AGE, NAME, RowFn, name_and

ColumnDefinitions = list[dict[str, Any]]


class TableHandler(NamedTuple):
    """A resource's column definitions and the printer that fills them (cf. printers.go
    ``TableHandler(columnDefinitions, printFunc)``)."""

    columns: ColumnDefinitions
    print_row: RowFn

    def for_version(self, version: str) -> TableHandler:
        """A built-in resource prints the same in every version (a ``TableConvertor``)."""
        return self


class TableConvertor(Protocol):
    """A resource's table at one served version (upstream's ``rest.TableConvertor``)."""

    def for_version(self, version: str) -> TableHandler: ...


# The built-in resources' handlers (each storage names its own: ``registry.groups``).
POD = TableHandler(pods.POD_COLUMN_DEFINITIONS, pods.print_pod)
DEPLOYMENT = TableHandler(workloads.DEPLOYMENT_COLUMN_DEFINITIONS, workloads.print_deployment)
REPLICA_SET = TableHandler(workloads.REPLICA_SET_COLUMN_DEFINITIONS, workloads.print_replica_set)
REPLICATION_CONTROLLER = TableHandler(
    workloads.REPLICATION_CONTROLLER_COLUMN_DEFINITIONS,
    workloads.print_replication_controller)
STATEFUL_SET = TableHandler(workloads.STATEFUL_SET_COLUMN_DEFINITIONS, workloads.print_stateful_set)
DAEMON_SET = TableHandler(workloads.DAEMON_SET_COLUMN_DEFINITIONS, workloads.print_daemon_set)
JOB = TableHandler(workloads.JOB_COLUMN_DEFINITIONS, workloads.print_job)
CRON_JOB = TableHandler(workloads.CRON_JOB_COLUMN_DEFINITIONS, workloads.print_cron_job)
NAMESPACE = TableHandler(core.NAMESPACE_COLUMN_DEFINITIONS, core.print_namespace)
NODE = TableHandler(core.NODE_COLUMN_DEFINITIONS, core.print_node)
EVENT = TableHandler(events.EVENT_COLUMN_DEFINITIONS, events.print_event)
SERVICE = TableHandler(core.SERVICE_COLUMN_DEFINITIONS, core.print_service)
CONFIG_MAP = TableHandler(core.CONFIG_MAP_COLUMN_DEFINITIONS, core.print_config_map)
SECRET = TableHandler(core.SECRET_COLUMN_DEFINITIONS, core.print_secret)
ENDPOINTS = TableHandler(core.ENDPOINTS_COLUMN_DEFINITIONS, core.print_endpoints)
SERVICE_ACCOUNT = TableHandler(core.SERVICE_ACCOUNT_COLUMN_DEFINITIONS, core.print_service_account)
LEASE = TableHandler(core.LEASE_COLUMN_DEFINITIONS, core.print_lease)
PERSISTENT_VOLUME = TableHandler(
    volumes.PERSISTENT_VOLUME_COLUMN_DEFINITIONS,
    volumes.print_persistent_volume)
PERSISTENT_VOLUME_CLAIM = TableHandler(
    volumes.PERSISTENT_VOLUME_CLAIM_COLUMN_DEFINITIONS,
    volumes.print_persistent_volume_claim)
DELETION_RECORD = TableHandler(
    kubegc.DELETION_RECORD_COLUMN_DEFINITIONS,
    kubegc.print_deletion_record)
CUSTOM_RESOURCE_DEFINITION = TableHandler(
    core.CUSTOM_RESOURCE_DEFINITION_COLUMN_DEFINITIONS,
    core.print_custom_resource_definition)
POD_TEMPLATE = TableHandler(policy.POD_TEMPLATE_COLUMN_DEFINITIONS, policy.print_pod_template)
RESOURCE_QUOTA = TableHandler(policy.RESOURCE_QUOTA_COLUMN_DEFINITIONS, policy.print_resource_quota)
COMPONENT_STATUS = TableHandler(
    policy.COMPONENT_STATUS_COLUMN_DEFINITIONS,
    policy.print_component_status)
CONTROLLER_REVISION = TableHandler(
    policy.CONTROLLER_REVISION_COLUMN_DEFINITIONS,
    policy.print_controller_revision)
HPA = TableHandler(policy.HPA_COLUMN_DEFINITIONS, policy.print_hpa)
PDB = TableHandler(policy.PDB_COLUMN_DEFINITIONS, policy.print_pdb)
PRIORITY_CLASS = TableHandler(policy.PRIORITY_CLASS_COLUMN_DEFINITIONS, policy.print_priority_class)
RUNTIME_CLASS = TableHandler(policy.RUNTIME_CLASS_COLUMN_DEFINITIONS, policy.print_runtime_class)
INGRESS = TableHandler(networking.INGRESS_COLUMN_DEFINITIONS, networking.print_ingress)
INGRESS_CLASS = TableHandler(
    networking.INGRESS_CLASS_COLUMN_DEFINITIONS,
    networking.print_ingress_class)
NETWORK_POLICY = TableHandler(
    networking.NETWORK_POLICY_COLUMN_DEFINITIONS,
    networking.print_network_policy)
SERVICE_CIDR = TableHandler(networking.SERVICE_CIDR_COLUMN_DEFINITIONS,
                            networking.print_service_cidr)
IP_ADDRESS = TableHandler(networking.IP_ADDRESS_COLUMN_DEFINITIONS, networking.print_ip_address)
ENDPOINT_SLICE = TableHandler(
    networking.ENDPOINT_SLICE_COLUMN_DEFINITIONS,
    networking.print_endpoint_slice)
STORAGE_CLASS = TableHandler(storage_k8s_io.STORAGE_CLASS_COLUMN_DEFINITIONS,
                             storage_k8s_io.print_storage_class)
CSI_DRIVER = TableHandler(storage_k8s_io.CSI_DRIVER_COLUMN_DEFINITIONS,
                          storage_k8s_io.print_csi_driver)
CSI_NODE = TableHandler(storage_k8s_io.CSI_NODE_COLUMN_DEFINITIONS, storage_k8s_io.print_csi_node)
CSI_STORAGE_CAPACITY = TableHandler(
    storage_k8s_io.CSI_STORAGE_CAPACITY_COLUMN_DEFINITIONS,
    storage_k8s_io.print_csi_storage_capacity)
VOLUME_ATTACHMENT = TableHandler(
    storage_k8s_io.VOLUME_ATTACHMENT_COLUMN_DEFINITIONS,
    storage_k8s_io.print_volume_attachment)
ROLE_BINDING = TableHandler(access.ROLE_BINDING_COLUMN_DEFINITIONS, access.print_role_binding)
CLUSTER_ROLE_BINDING = TableHandler(
    access.CLUSTER_ROLE_BINDING_COLUMN_DEFINITIONS,
    access.print_role_binding)
CSR = TableHandler(access.CSR_COLUMN_DEFINITIONS, access.print_certificate_signing_request)
VALIDATING_ADMISSION_POLICY = TableHandler(
    access.VALIDATING_ADMISSION_POLICY_COLUMN_DEFINITIONS,
    access.print_validating_admission_policy)
VALIDATING_ADMISSION_POLICY_BINDING = TableHandler(
    access.VALIDATING_ADMISSION_POLICY_BINDING_COLUMN_DEFINITIONS,
    access.print_validating_admission_policy_binding)
FLOW_SCHEMA = TableHandler(access.FLOW_SCHEMA_COLUMN_DEFINITIONS, access.print_flow_schema)
PRIORITY_LEVEL = TableHandler(
    access.PRIORITY_LEVEL_COLUMN_DEFINITIONS,
    access.print_priority_level)
API_SERVICE = TableHandler(access.API_SERVICE_COLUMN_DEFINITIONS, access.print_api_service)
#: Name and Created At: CRDs, and what upstream prints with its generic convertor (LimitRanges,
#: Roles, ClusterRoles)
NAME_AND_CREATED_AT = CUSTOM_RESOURCE_DEFINITION
WEBHOOK = TableHandler(access.WEBHOOK_COLUMN_DEFINITIONS, access.print_webhook_configuration)

DEFAULT_COLUMNS: ColumnDefinitions = [NAME, AGE]
print_default: RowFn = name_and()
#: resources without a printer of their own: Name and Age
DEFAULT = TableHandler(DEFAULT_COLUMNS, print_default)

__all__ = [
    "DEFAULT",
    "DEFAULT_COLUMNS",
    "ColumnDefinitions",
    "RowFn",
    "TableConvertor",
    "TableHandler",
    "human_duration",
    "print_default",
    "short_human_duration",
]
