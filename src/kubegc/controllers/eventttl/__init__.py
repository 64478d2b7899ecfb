"""Event expiry (kube-apiserver's ``--event-ttl``, which upstream implements as an etcd
lease on every Event; kubegc's storage has no leases, so a controller deletes them).

May import: ``kubegc.api``, ``kubegc.client`` and ``kubegc.component``.
"""

from kubegc.controllers.eventttl.eventttl_controller import EventTTLController

__all__ = ["EventTTLController"]
