"""The taint-eviction controller (cf. pkg/controller/tainteviction): pods of nodes with
``NoExecute`` taints they do not tolerate are deleted at once, those that tolerate them
after the smallest ``tolerationSeconds``. ``decision`` (which pods go, and when) is shared
with ``kubegc plan``; ``timed_workers`` holds the scheduled evictions;
``taint_eviction`` is the controller.

May import: ``kubegc.api``, ``kubegc.client`` and ``kubegc.component``.
"""

from kubegc.controllers.tainteviction.decision import TaintEviction, process_pod_on_node
from kubegc.controllers.tainteviction.taint_eviction import TaintEvictionController

__all__ = ["TaintEviction", "TaintEvictionController", "process_pod_on_node"]
