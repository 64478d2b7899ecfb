"""The controller manager (cf. cmd/kube-controller-manager/app): which components run
(``descriptors``), the manager that builds each from its own ``ControllerContext`` and
runs them while this server holds the leader-election Lease (``manager``, on
``kubegc.client.leaderelection``), and the garbage collector's wiring with its decision
records (``garbagecollector``).

Nothing below imports this package: components are handed a context, not the manager.
May import: ``kubegc.controllers``, ``kubegc.kubelet``, ``kubegc.scheduler`` and below.
"""

from kubegc.controllermanager.descriptors import CONTROLLERS
from kubegc.controllermanager.manager import ControllerManager, selected

__all__ = ["CONTROLLERS", "ControllerManager", "selected"]
