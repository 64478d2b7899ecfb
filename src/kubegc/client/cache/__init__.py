"""Informers and their caches (cf. client-go tools/cache).

A ``Reflector`` lists then watches one resource into a store; a ``SharedInformer`` owns a
Reflector, an ``Indexer`` cache and the registered ``ResourceEventHandler``s; a
``SharedInformerFactory`` shares one informer per resource among controllers.

Guarantees:
  * handlers see, per object key, notifications in the order the server produced them;
  * after a watch gap (410) the cache is rebuilt by a relist and handlers get on_update for
    survivors and on_delete(DeletedFinalStateUnknown) for objects that vanished meanwhile;
  * has_synced() is True once the first list reached the cache and every handler.

Concurrency: asyncio, one event loop. Handlers run synchronously in the informer's task.
Time (backoff, resync, sync timeouts) runs on the injected Clock.
May import: kubegc.api and kubegc.client.interface.
"""

from __future__ import annotations

from kubegc.client.cache.reflector import Backoff, CachedList, Reflector, ReflectorStore
from kubegc.client.cache.shared_informer import (
    FuncHandler,
    ResourceEventHandler,
    SharedInformer,
    SharedInformerFactory,
    to_partial_object_metadata,
)
from kubegc.client.cache.store import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Indexer,
    deletion_handling_meta_namespace_key,
    meta_namespace_index_func,
    meta_namespace_key,
    split_meta_namespace_key,
)

__all__ = [
    "NAMESPACE_INDEX",
    "Backoff",
    "CachedList",
    "DeletedFinalStateUnknown",
    "FuncHandler",
    "Indexer",
    "Reflector",
    "ReflectorStore",
    "ResourceEventHandler",
    "SharedInformer",
    "SharedInformerFactory",
    "deletion_handling_meta_namespace_key",
    "meta_namespace_index_func",
    "meta_namespace_key",
    "split_meta_namespace_key",
    "to_partial_object_metadata",
]
