"""The apiserver's registry: every resource's storage (``groups/``, one package per API
group) over the generic Store (``generic/``), with admission (``admission/``), the watch
cache, and the machinery the storages share (``definitions``, ``typed``, ``structural``,
``fieldmanager``, ``validation``).

``Registry`` addresses a request's resource (``target``) and its storage, which serves
the verbs of the interfaces it implements (``generic.rest``); the server routes by those
interfaces and ``LocalClient`` calls the same storages. It raises only
``kubegc.api.errors.StatusError``. May import: ``kubegc.api``, ``kubegc.authz``,
``kubegc.tokens``, ``kubegc.storage``.
"""

from kubegc.registry.generic.target import Target
from kubegc.registry.generic.watch_cache import CachedEvent, WatchCache
from kubegc.registry.generic.watching import Change, RegistryWatch, WatchRequest
from kubegc.registry.registry import Registry, builtin_catalog, not_allowed

__all__ = [
    "CachedEvent",
    "Change",
    "Registry",
    "RegistryWatch",
    "Target",
    "WatchCache",
    "WatchRequest",
    "builtin_catalog",
    "not_allowed",
]
