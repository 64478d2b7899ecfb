"""The replication manager (cf. pkg/controller/replication): the ReplicaSet controller run
over ReplicationControllers.

May import: what ``kubegc.controllers.replicaset`` may, and that package (as upstream's
replication imports replicaset).
"""

from kubegc.controllers.replication.replication_controller import ReplicationManager

__all__ = ["ReplicationManager"]
