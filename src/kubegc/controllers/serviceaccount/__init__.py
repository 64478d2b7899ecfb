"""The service account controller: the ``default`` ServiceAccount in every active
namespace, recreated when deleted (cf. pkg/controller/serviceaccount, the
``ServiceAccountsController``; the token controller is not part of it).

May import: ``kubegc.api``, ``kubegc.client``, ``kubegc.component`` and
``kubegc.controllers.controller_utils``.
"""

from kubegc.controllers.serviceaccount.serviceaccounts_controller import (
    SERVICEACCOUNTS,
    ServiceAccountsController,
)

__all__ = ["SERVICEACCOUNTS", "ServiceAccountsController"]
