"""The StatefulSet controller (cf. pkg/controller/statefulset): ordinal pods and their
claims.

May import: ``kubegc.api``, ``kubegc.client``, ``kubegc.component`` and the shared
``kubegc.controllers`` modules (controller_utils, controller_ref_manager).
"""

from kubegc.controllers.statefulset.stateful_set import StatefulSetController

__all__ = ["StatefulSetController"]
