"""The CronJob controller (cf. pkg/controller/cronjob): ``cronjob_controllerv2`` syncs,
``utils`` holds the schedule arithmetic and Job construction.

May import: ``kubegc.api``, ``kubegc.client``, ``kubegc.component``, the shared
``kubegc.controllers.controller_utils`` and, as upstream, ``kubegc.controllers.job.util``.
"""

from kubegc.controllers.cronjob.cronjob_controllerv2 import CronJobController

__all__ = ["CronJobController"]
