"""Leader election on a Lease, as client-go's tools/leaderelection does it: the
``LeaderElector`` (``leaderelection``) and the record and lock it keeps in a
``coordination.k8s.io/v1`` Lease (``resourcelock``). See ``leaderelection`` for the
guarantees.

May import: ``kubegc.api``, ``kubegc.client`` (its ``interface`` and ``events``).
"""

from kubegc.client.leaderelection.leaderelection import (
    JITTER_FACTOR,
    LeaderCallbacks,
    LeaderElector,
    check_timing,
)
from kubegc.client.leaderelection.resourcelock import LEASES, LeaderElectionRecord, LeaseLock

__all__ = [
    "JITTER_FACTOR",
    "LEASES",
    "LeaderCallbacks",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseLock",
    "check_timing",
]
