"""The Deployment controller (cf. pkg/controller/deployment): ``deployment_controller``
(queue, adoption, dispatch), ``sync`` (the steps every strategy shares), ``rolling``
(RollingUpdate, Recreate, rollout status), ``util`` and ``conditions`` (pure helpers of
upstream's deployment/util).

May import: ``kubegc.api``, ``kubegc.client``, ``kubegc.component`` and the shared
``kubegc.controllers`` modules (controller_utils, controller_ref_manager).
"""

from kubegc.controllers.deployment.deployment_controller import DeploymentController

__all__ = ["DeploymentController"]
