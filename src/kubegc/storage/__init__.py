"""Revisioned key-value storage with watch: the etcd/kine role (see ``kv`` for the contract).

Backends: ``MemoryKV`` (tests, the planner), ``SqliteKV`` (embedded default, durable with
group commit) and ``EtcdKV`` (a real etcd through aetcd). ``open_kv`` picks one from a URL-ish
spec. May import: ``kubegc.api`` and the standard library (plus the backend's driver).
"""

from typing import TYPE_CHECKING

from kubegc.storage.compactor import compact_once, run_compactor
from kubegc.storage.errors import (
    CompactedError,
    ConflictError,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    StorageClosedError,
    StorageError,
)
from kubegc.storage.kv import KV, Event, EventType, KeyValue, RangeResult, prefix_end
from kubegc.storage.memory import MemoryKV
from kubegc.storage.open import connect_kv, open_kv
from kubegc.storage.sqlite import SqliteKV

if TYPE_CHECKING:
    from kubegc.storage.etcd import EtcdKV

__all__ = [
    "KV",
    "CompactedError",
    "ConflictError",
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
    "StorageError",
    "compact_once",
    "connect_kv",
    "open_kv",
    "prefix_end",
    "run_compactor",
]


def __getattr__(name: str) -> object:
    # EtcdKV is imported on first use so that aetcd (and grpc) stay optional.
    if name == "EtcdKV":
        from kubegc.storage.etcd import EtcdKV

        return EtcdKV
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
