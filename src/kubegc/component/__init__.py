"""What every component the controller manager runs is built from (cf. k8s.io/component-base
and k8s.io/controller-manager): the controllers, the kubelet simulator and the scheduler
all sit on this package and none of them on another.

* ``config``: the configuration, each default written once (``ClusterConfig`` and its
  sections); ``kubegc serve``'s flags and ``kubegc.testing`` read their defaults from it.
* ``context``: ``ControllerContext`` (client, clock, informer factory, options, event
  recorder), the ``Controller`` interface the manager drives, ``DebugDocument``.
* ``base_controller``: ``BaseController``, the work-queue-and-workers skeleton of upstream
  controllers.
* ``fields`` and ``objects``: what a component can understand of the objects it reads
  (each kind's fields with upstream's types and ranges), checked before it acts.
* ``failures``: what a failed sync does (upstream's ``handleErr``: backoff; a Warning
  event, and no loop, on an object the component cannot understand).
* ``pending``: what keeps a component busy (its items, a retrying one's last error), for
  the error of a ``settle()`` that timed out, and ``settle()``'s loop.

Concurrency: asyncio, one event loop per process; components start tasks, never threads.
May import: ``kubegc.api``, ``kubegc.client`` and the standard library.
"""

from kubegc.component.base_controller import BaseController, tombstone_object
from kubegc.component.context import Controller, ControllerContext, DebugDocument

__all__ = [
    "BaseController",
    "Controller",
    "ControllerContext",
    "DebugDocument",
    "tombstone_object",
]
