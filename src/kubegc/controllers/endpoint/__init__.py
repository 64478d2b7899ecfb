"""The Endpoints controller (cf. pkg/controller/endpoint): Endpoints in step with Services
and their pods.

May import: ``kubegc.api``, ``kubegc.client`` and ``kubegc.component``.
"""

from kubegc.controllers.endpoint.endpoints_controller import EndpointsController

__all__ = ["EndpointsController"]
