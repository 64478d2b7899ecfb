"""The ReplicaSet controller (cf. pkg/controller/replicaset), written once for both
flavours it serves: ReplicaSets and, through ``kubegc.controllers.replication``,
ReplicationControllers (``ReplicaSetKind``).

May import: ``kubegc.api``, ``kubegc.client``, ``kubegc.component`` and the shared
``kubegc.controllers`` modules (controller_utils, expectations,
controller_ref_manager).
"""

from kubegc.controllers.replicaset.replica_set import (
    REPLICA_SET,
    REPLICATION_CONTROLLER,
    ReplicaSetController,
    ReplicaSetKind,
)

__all__ = ["REPLICATION_CONTROLLER", "REPLICA_SET", "ReplicaSetController", "ReplicaSetKind"]
