"""The DaemonSet controller (cf. pkg/controller/daemon): one pod per eligible node.

May import: ``kubegc.api``, ``kubegc.client``, ``kubegc.component`` and the shared
``kubegc.controllers`` modules (controller_utils, expectations,
controller_ref_manager).
"""

from kubegc.controllers.daemon.daemon_controller import DaemonSetsController

__all__ = ["DaemonSetsController"]
