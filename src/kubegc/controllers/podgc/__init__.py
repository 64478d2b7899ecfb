"""The pod garbage collector (cf. pkg/controller/podgc): terminated pods over the
threshold, pods of nodes that are gone, terminating pods of unscheduled nodes.

May import: ``kubegc.api``, ``kubegc.client`` and ``kubegc.component``.
"""

from kubegc.controllers.podgc.gc_controller import PodGCController

__all__ = ["PodGCController"]
