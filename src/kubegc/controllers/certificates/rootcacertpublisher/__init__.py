"""The root CA publisher: a ``kube-root-ca.crt`` ConfigMap in every namespace, holding the
CA bundle that verifies the API server (cf. pkg/controller/certificates/
rootcacertpublisher), recreated when deleted and repaired when changed.

May import: ``kubegc.api``, ``kubegc.client``, ``kubegc.component`` and
``kubegc.controllers.controller_utils``.
"""

from kubegc.controllers.certificates.rootcacertpublisher.publisher import (
    DESCRIPTION,
    DESCRIPTION_ANNOTATION,
    ROOT_CA_CERT_CONFIG_MAP_NAME,
    Publisher,
)

__all__ = ["DESCRIPTION", "DESCRIPTION_ANNOTATION", "ROOT_CA_CERT_CONFIG_MAP_NAME", "Publisher"]
