"""The apps group's storages (cf. pkg/registry/apps): the workloads, with their status and
scale subresources, and ControllerRevisions. A workload's status starts at the zero status
its Go type encodes (``api.zero_status``) and keeps it on every write."""

from __future__ import annotations

from kubegc.api.resources import builtin
from kubegc.api.zero_status import zero_status_fields
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext, stored
from kubegc.registry.generic.strategy import (
    Defaulter,
    Strategy,
    UpdateValidator,
    Validator,
    keeping_zero_status,
    zero_status_create,
)
from kubegc.registry.groups.apps import defaults
from kubegc.registry.groups.apps import validation as v


def _workload(resource: str, validate: Validator, validate_update: UpdateValidator,
              defaulter: Defaulter) -> Strategy:
    fields = zero_status_fields("apps", resource)
    return Strategy(prepare_for_create=zero_status_create(fields), validate=validate,
                    validate_update=validate_update,
                    defaulter=keeping_zero_status(defaulter, fields))


def resources(ctx: StorageContext) -> list[Resource]:
    return [
        stored(ctx, builtin("apps", "deployments"), _workload(
            "deployments", v.validate_deployment, v.validate_deployment_update,
            defaults.default_deployment), status=True, scale=True, table=printers.DEPLOYMENT),
        stored(ctx, builtin("apps", "replicasets"), _workload(
            "replicasets", v.validate_replica_set, v.validate_replica_set_update,
            defaults.default_replicaset), status=True, scale=True, table=printers.REPLICA_SET),
        stored(ctx, builtin("apps", "statefulsets"), _workload(
            "statefulsets", v.validate_stateful_set, v.validate_stateful_set_update,
            defaults.default_statefulset), status=True, scale=True, table=printers.STATEFUL_SET),
        stored(ctx, builtin("apps", "daemonsets"), _workload(
            "daemonsets", v.validate_daemon_set, v.validate_daemon_set_update,
            defaults.default_daemonset), status=True, table=printers.DAEMON_SET),
        stored(ctx, builtin("apps", "controllerrevisions"), Strategy(
            tracks_generation=False, validate=v.validate_controller_revision,
            validate_update=v.validate_controller_revision_update),
                table=printers.CONTROLLER_REVISION),
    ]
