"""The node lifecycle controller (cf. pkg/controller/nodelifecycle): nodes whose kubelet
stopped posting status are marked Unknown and tainted ``node.kubernetes.io/unreachable``
(``not-ready`` for Ready=False) NoExecute, for the taint-eviction controller to act on.
``health`` judges one node and one zone; ``node_lifecycle_controller`` is the controller.

May import: ``kubegc.api``, ``kubegc.client`` and ``kubegc.component``.
"""

from kubegc.controllers.nodelifecycle.node_lifecycle_controller import NodeLifecycleController

__all__ = ["NodeLifecycleController"]
