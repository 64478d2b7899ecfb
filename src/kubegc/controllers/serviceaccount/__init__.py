"""The service account controllers (cf. pkg/controller/serviceaccount): the ``default``
ServiceAccount in every active namespace, recreated when deleted
(``ServiceAccountsController``), and the legacy token Secrets filled and cleaned up
(``TokensController``).

May import: ``kubegc.api``, ``kubegc.client``, ``kubegc.component`` and
``kubegc.controllers.controller_utils``.
"""

from kubegc.controllers.serviceaccount.serviceaccounts_controller import (
    SERVICEACCOUNTS,
    ServiceAccountsController,
)
from kubegc.controllers.serviceaccount.tokens_controller import TokensController

__all__ = ["SERVICEACCOUNTS", "ServiceAccountsController", "TokensController"]
