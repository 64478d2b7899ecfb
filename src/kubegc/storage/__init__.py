"""Revisioned key-value storage with watch: the etcd/kine role (see ``kv`` for the contract).

Backends: ``MemoryKV`` (tests, the planner), ``SqliteKV`` (embedded default, durable with
group commit) and ``EtcdKV`` (a real etcd through aetcd); they share their revision
bookkeeping (``revisions``). ``parse_storage`` is the one grammar of a storage endpoint
(``--storage``), ``open_kv`` opens the backend an endpoint names, and ``DataDir`` names
every file of a data directory. May import: ``kubegc.api`` and the standard library (plus
the backend's driver).
"""

from typing import TYPE_CHECKING

from kubegc.storage.compactor import compact_once, run_compactor
from kubegc.storage.data_dir import DataDir, default_data_dir
from kubegc.storage.endpoint import (
    StorageEndpoint,
    StorageEndpointError,
    StorageKind,
    etcd_storage,
    parse_storage,
)
from kubegc.storage.errors import (
    CompactedError,
    ConflictError,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    StorageClosedError,
    StorageError,
)
from kubegc.storage.kv import (
    KV,
    BatchOutcome,
    BatchWrite,
    Event,
    EventType,
    KeyValue,
    RangeResult,
    WriteKind,
    prefix_end,
)
from kubegc.storage.memory import MemoryKV
from kubegc.storage.open import connect_kv, open_kv, require_driver
from kubegc.storage.sqlite import SqliteKV

if TYPE_CHECKING:
    from kubegc.storage.etcd import EtcdKV

__all__ = [
    "KV",
    "BatchOutcome",
    "BatchWrite",
    "CompactedError",
    "ConflictError",
    "DataDir",
    "EtcdKV",
    "Event",
    "EventType",
    "FutureRevisionError",
    "KeyExistsError",
    "KeyNotFoundError",
    "KeyValue",
    "MemoryKV",
    "RangeResult",
    "SqliteKV",
    "StorageClosedError",
    "StorageEndpoint",
    "StorageEndpointError",
    "StorageError",
    "StorageKind",
    "WriteKind",
    "compact_once",
    "connect_kv",
    "default_data_dir",
    "etcd_storage",
    "open_kv",
    "parse_storage",
    "prefix_end",
    "require_driver",
    "run_compactor",
]


def __getattr__(name: str) -> object:
    # EtcdKV is imported on first use so that aetcd (and grpc) stay optional.
    if name == "EtcdKV":
        from kubegc.storage.etcd import EtcdKV

        return EtcdKV
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
