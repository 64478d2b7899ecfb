"""The disruption controller (cf. pkg/controller/disruption): the status of every
PodDisruptionBudget — how many of its pods are healthy, how many it needs, how many
disruptions (evictions) it allows — which the eviction subresource reads.

May import: ``kubegc.api``, ``kubegc.client`` and ``kubegc.component``.
"""

from kubegc.controllers.disruption.disruption import DisruptionController

__all__ = ["DisruptionController"]
