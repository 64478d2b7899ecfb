"""Per-resource ``kubectl get`` printers (cf. pkg/printers/internalversion/printers.go).

Contract:
  * ``PRINTERS[(group, resource)]`` is the row function (``RowFn``) of a built-in resource and
    ``COLUMNS[(group, resource)]`` its column definitions; the two registries have the same
    keys, and a row has one cell per column. As upstream's ``AddHandlers``, a printer always
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
objects, leases and CRDs), ``volumes`` (PVs and PVCs); ``helpers`` holds the shared cells
and ``duration`` apimachinery's duration formatting.
May import: ``kubegc.api``.
"""

from __future__ import annotations

from typing import Any

from kubegc.server.printers import core, events, pods, volumes, workloads
from kubegc.server.printers.duration import human_duration, short_human_duration
from kubegc.server.printers.helpers import AGE, NAME, RowFn, name_and

ColumnDefinitions = list[dict[str, Any]]

PRINTERS: dict[tuple[str, str], RowFn] = {
    ("", "pods"): pods.print_pod,
    ("apps", "deployments"): workloads.print_deployment,
    ("apps", "replicasets"): workloads.print_replica_set,
    ("", "replicationcontrollers"): workloads.print_replication_controller,
    ("apps", "statefulsets"): workloads.print_stateful_set,
    ("apps", "daemonsets"): workloads.print_daemon_set,
    ("batch", "jobs"): workloads.print_job,
    ("batch", "cronjobs"): workloads.print_cron_job,
    ("", "namespaces"): core.print_namespace,
    ("", "nodes"): core.print_node,
    ("", "events"): events.print_event,
    ("events.k8s.io", "events"): events.print_event,
    ("", "services"): core.print_service,
    ("", "configmaps"): core.print_config_map,
    ("", "secrets"): core.print_secret,
    ("", "endpoints"): core.print_endpoints,
    ("", "serviceaccounts"): core.print_service_account,
    ("coordination.k8s.io", "leases"): core.print_lease,
    ("", "persistentvolumes"): volumes.print_persistent_volume,
    ("", "persistentvolumeclaims"): volumes.print_persistent_volume_claim,
    ("apiextensions.k8s.io", "customresourcedefinitions"): core.print_custom_resource_definition,
}

COLUMNS: dict[tuple[str, str], ColumnDefinitions] = {
    ("", "pods"): pods.POD_COLUMN_DEFINITIONS,
    ("apps", "deployments"): workloads.DEPLOYMENT_COLUMN_DEFINITIONS,
    ("apps", "replicasets"): workloads.REPLICA_SET_COLUMN_DEFINITIONS,
    ("", "replicationcontrollers"): workloads.REPLICATION_CONTROLLER_COLUMN_DEFINITIONS,
    ("apps", "statefulsets"): workloads.STATEFUL_SET_COLUMN_DEFINITIONS,
    ("apps", "daemonsets"): workloads.DAEMON_SET_COLUMN_DEFINITIONS,
    ("batch", "jobs"): workloads.JOB_COLUMN_DEFINITIONS,
    ("batch", "cronjobs"): workloads.CRON_JOB_COLUMN_DEFINITIONS,
    ("", "namespaces"): core.NAMESPACE_COLUMN_DEFINITIONS,
    ("", "nodes"): core.NODE_COLUMN_DEFINITIONS,
    ("", "events"): events.EVENT_COLUMN_DEFINITIONS,
    ("events.k8s.io", "events"): events.EVENT_COLUMN_DEFINITIONS,
    ("", "services"): core.SERVICE_COLUMN_DEFINITIONS,
    ("", "configmaps"): core.CONFIG_MAP_COLUMN_DEFINITIONS,
    ("", "secrets"): core.SECRET_COLUMN_DEFINITIONS,
    ("", "endpoints"): core.ENDPOINTS_COLUMN_DEFINITIONS,
    ("", "serviceaccounts"): core.SERVICE_ACCOUNT_COLUMN_DEFINITIONS,
    ("coordination.k8s.io", "leases"): core.LEASE_COLUMN_DEFINITIONS,
    ("", "persistentvolumes"): volumes.PERSISTENT_VOLUME_COLUMN_DEFINITIONS,
    ("", "persistentvolumeclaims"): volumes.PERSISTENT_VOLUME_CLAIM_COLUMN_DEFINITIONS,
    ("apiextensions.k8s.io", "customresourcedefinitions"):
        core.CUSTOM_RESOURCE_DEFINITION_COLUMN_DEFINITIONS,
}

DEFAULT_COLUMNS: ColumnDefinitions = [NAME, AGE]
print_default: RowFn = name_and()

__all__ = [
    "COLUMNS",
    "DEFAULT_COLUMNS",
    "PRINTERS",
    "ColumnDefinitions",
    "RowFn",
    "human_duration",
    "print_default",
    "short_human_duration",
]
