"""The namespace controller (cf. pkg/controller/namespace): ``namespace_controller``
queues Terminating namespaces; ``deletion`` empties them (``NamespacedResourcesDeleter``)
and reports the namespace's deletion conditions.

May import: ``kubegc.api``, ``kubegc.client`` and ``kubegc.component``.
"""

from kubegc.controllers.namespace.namespace_controller import NamespaceController

__all__ = ["NamespaceController"]
