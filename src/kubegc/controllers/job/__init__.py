"""The Job controller (cf. pkg/controller/job): ``job_controller`` (queue, adoption,
handlers), ``sync`` (one ``syncJob``), ``util`` (pure helpers, also read by the CronJob
controller as upstream's job/util is).

May import: ``kubegc.api``, ``kubegc.client``, ``kubegc.component`` and the shared
``kubegc.controllers`` modules (controller_utils, expectations,
controller_ref_manager).
"""

from kubegc.controllers.job.job_controller import JobController

__all__ = ["JobController"]
