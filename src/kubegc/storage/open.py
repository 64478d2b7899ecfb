"""``open_kv``: the backend a storage endpoint names (``endpoint.parse_storage``'s grammar).

  ``memory``                         MemoryKV (nothing persists)
  ``sqlite:///abs/path.db``          SqliteKV at /abs/path.db (``sqlite://rel.db``: relative)
  ``etcd://host:port[/prefix]``      EtcdKV; keys are stored under ``/prefix`` (default none)

``sqlite`` alone names a data directory's store: resolve it first
(``StorageEndpoint.in_data_dir``). ``open_kv`` returns an EtcdKV unconnected (it connects
on first use); ``connect_kv`` also connects it, so ``current_revision``/``compact_revision``
are right before the first call, which a watch cache that starts from ``current_revision``
needs. May import: the standard library, ``kubegc.api``, the backends.
"""

from __future__ import annotations

from kubegc.api.clock import Clock
from kubegc.storage.endpoint import (
    StorageEndpoint,
    StorageEndpointError,
    StorageKind,
    parse_storage,
)
from kubegc.storage.kv import KV
from kubegc.storage.memory import MemoryKV
from kubegc.storage.sqlite import SqliteKV

#: what a missing driver of an optional backend is told (``require_driver``)
ETCD_NOT_INSTALLED = "the etcd backend is not installed: pip install 'kubegc[etcd]'"


def require_driver(endpoint: StorageEndpoint) -> None:
    """``StorageEndpointError`` naming the install when the backend ``endpoint`` needs is
    missing (etcd's client, aetcd, is the ``kubegc[etcd]`` extra)."""
    if endpoint.kind is StorageKind.ETCD:
        try:
            import aetcd  # noqa: F401
        except ImportError:
            raise StorageEndpointError(f"{str(endpoint)!r}: {ETCD_NOT_INSTALLED}") from None


def open_kv(endpoint: StorageEndpoint | str, *, synchronous: str = "FULL",
            clock: Clock | None = None) -> KV:
    """Build the store ``endpoint`` names (a string is parsed first); ``synchronous`` is
    SQLite's unless the endpoint says. ``StorageEndpointError`` (a ``ValueError``) if it
    is not one, or is ``sqlite`` of no data directory, or its backend is not installed."""
    if isinstance(endpoint, str):
        endpoint = parse_storage(endpoint)
    if endpoint.kind is StorageKind.MEMORY:
        return MemoryKV()
    if endpoint.kind is StorageKind.SQLITE:
        if endpoint.path is None:
            raise StorageEndpointError(
                "'sqlite' is the store of a data directory: open sqlite:///FILE, or resolve "
                "it with StorageEndpoint.in_data_dir")
        return SqliteKV(endpoint.path, synchronous=endpoint.synchronous or synchronous,
                        clock=clock)
    require_driver(endpoint)
    from kubegc.storage.etcd import EtcdKV  # aetcd is an optional dependency

    return EtcdKV(endpoint.etcd_url, prefix=endpoint.prefix, clock=clock)


async def connect_kv(endpoint: StorageEndpoint | str, *, synchronous: str = "FULL",
                     clock: Clock | None = None) -> KV:
    """``open_kv``, then connect the store if it needs it (EtcdKV.open)."""
    if isinstance(endpoint, str):
        endpoint = parse_storage(endpoint)
    kv = open_kv(endpoint, synchronous=synchronous, clock=clock)
    if endpoint.kind is StorageKind.ETCD:
        from kubegc.storage.etcd import EtcdKV

        if isinstance(kv, EtcdKV):
            try:
                await kv.open()
            except BaseException:
                await kv.close()
                raise
    return kv
