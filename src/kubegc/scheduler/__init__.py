"""A small scheduler (cf. pkg/scheduler), a component of its own beside the controllers.

May import: ``kubegc.api``, ``kubegc.client`` and ``kubegc.component`` — not
``kubegc.controllers`` nor ``kubegc.kubelet``.
"""

from kubegc.scheduler.scheduler import Scheduler

__all__ = ["Scheduler"]
