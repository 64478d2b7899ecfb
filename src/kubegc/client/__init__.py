"""client-go's role: the ``Client`` protocol and what controllers build on it.

* ``interface``: ``Client`` (get/list/watch/create/update/patch/delete/discover) and its
  option and event types; every API failure is a ``kubegc.api.errors.StatusError``.
* ``local.LocalClient``: in-process, straight to the registry (controllers in kubegc serve).
* ``rest.RestClient``: HTTP from a kubeconfig (``kubeconfig``); kubegc or any real cluster.
* ``batch``: ``create_all``, many creates in one call where the client can
  (``BatchCreater``: ``LocalClient``), else one ``create`` each.
* ``cache``: reflector, indexer, shared informers; ``workqueue``: client-go's queues and rate
  limiters; ``events.EventRecorder``: deduplicated events; ``leaderelection``: client-go's
  leader election on a Lease.

May import: ``kubegc.api``, and ``kubegc.registry`` (only ``local``).
"""

from kubegc.client.interface import (
    APIResource,
    Client,
    DeleteOptions,
    ListOptions,
    PatchType,
    ServerResources,
    WatchEvent,
    WatchOptions,
)

__all__ = [
    "APIResource",
    "Client",
    "DeleteOptions",
    "ListOptions",
    "PatchType",
    "ServerResources",
    "WatchEvent",
    "WatchOptions",
]
