"""The apiserver's generic registry: Store + strategies + admission + watch cache.

``Registry`` is the facade the server and ``LocalClient`` use: every verb on every
resource of its ``Catalog``, with Kubernetes metadata semantics (see ``store``,
``deletion``, ``patching``, ``listing``, ``watching``). It raises only
``kubegc.api.errors.StatusError``. May import: ``kubegc.api``, ``kubegc.storage``.
"""

from kubegc.registry.registry import Registry
from kubegc.registry.target import Target
from kubegc.registry.watch_cache import CachedEvent, WatchCache
from kubegc.registry.watching import Change, RegistryWatch, WatchRequest

__all__ = [
    "CachedEvent",
    "Change",
    "Registry",
    "RegistryWatch",
    "Target",
    "WatchCache",
    "WatchRequest",
]
