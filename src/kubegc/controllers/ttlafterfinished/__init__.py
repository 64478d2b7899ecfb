"""The TTL-after-finished controller (cf. pkg/controller/ttlafterfinished): deletes a
finished Job ``ttlSecondsAfterFinished`` after it finished, in the foreground.

May import: ``kubegc.api``, ``kubegc.client``, ``kubegc.component`` and, as upstream's
``jobutil``, ``kubegc.controllers.job.util``.
"""

from kubegc.controllers.ttlafterfinished.ttlafterfinished_controller import (
    TTLAfterFinishedController,
    finish_and_expire_time,
    needs_cleanup,
    time_left,
)

__all__ = ["TTLAfterFinishedController", "finish_and_expire_time", "needs_cleanup",
           "time_left"]
