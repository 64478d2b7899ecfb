"""The replication manager (cf. pkg/controller/replication/replication_controller.go):
upstream runs the ReplicaSet controller's code over v1 ReplicationControllers, converting
each to a ReplicaSet and back; kubegc runs it over the RC objects directly, reading the
map selector of ``spec.selector`` (``REPLICATION_CONTROLLER``)."""

from __future__ import annotations

from kubegc.controllers.replicaset import (
    REPLICATION_CONTROLLER,
    ReplicaSetController,
    ReplicaSetKind,
)


class ReplicationManager(ReplicaSetController):
    """The replication controller: the ReplicaSet controller over v1 RCs."""

    kind: ReplicaSetKind = REPLICATION_CONTROLLER
    name = REPLICATION_CONTROLLER.controller_name
    component = REPLICATION_CONTROLLER.component
