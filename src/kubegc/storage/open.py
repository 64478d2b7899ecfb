"""``open_kv``: pick a backend from a URL-ish spec (the ``--storage`` flag's syntax).

  ``memory``                         MemoryKV (nothing persists)
  ``sqlite:///abs/path.db``          SqliteKV at /abs/path.db (``sqlite://rel.db``: relative)
  ``/path/to/file.db`` or ``x.db``   any other spec is a SQLite file path
  ``etcd://host:port[/prefix]``      EtcdKV; keys are stored under ``/prefix`` (default none)

A ``?synchronous=NORMAL`` query on a ``sqlite://`` spec overrides ``synchronous``.
``open_kv`` returns an EtcdKV unconnected (it connects on first use); ``connect_kv`` also
connects it, so ``current_revision``/``compact_revision`` are right before the first call,
which a watch cache that starts from ``current_revision`` needs. May import: the standard
library, ``kubegc.api``, the backends.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from kubegc.api.clock import Clock
from kubegc.storage.kv import KV
from kubegc.storage.memory import MemoryKV
from kubegc.storage.sqlite import SqliteKV


def open_kv(spec: str, *, synchronous: str = "FULL", clock: Clock | None = None) -> KV:
    """Build the store ``spec`` names (see the module docstring); ``ValueError`` if malformed."""
    spec = spec.strip()
    if not spec:
        raise ValueError("empty storage spec")
    if spec in ("memory", "memory://"):
        return MemoryKV()
    if spec.startswith("sqlite://"):
        path, _, query = spec[len("sqlite://"):].partition("?")
        if not path:
            raise ValueError(f"storage spec {spec!r} has no path")
        mode = parse_qs(query).get("synchronous", [synchronous])[-1]
        return SqliteKV(path, synchronous=mode, clock=clock)
    if spec.startswith("etcd://"):
        from kubegc.storage.etcd import EtcdKV  # aetcd is an optional dependency

        parts = urlsplit(spec)
        if not parts.hostname:
            raise ValueError(f"storage spec {spec!r} has no host")
        prefix = parts.path.rstrip("/")
        return EtcdKV(f"http://{parts.hostname}:{parts.port or 2379}", prefix=prefix,
                      clock=clock)
    if "://" in spec:
        raise ValueError(f"unknown storage scheme in {spec!r} (memory, sqlite://, etcd://)")
    return SqliteKV(spec, synchronous=synchronous, clock=clock)


async def connect_kv(spec: str, *, synchronous: str = "FULL", clock: Clock | None = None,
                     ) -> KV:
    """``open_kv``, then connect the store if it needs it (EtcdKV.open)."""
    kv = open_kv(spec, synchronous=synchronous, clock=clock)
    if spec.strip().startswith("etcd://"):
        from kubegc.storage.etcd import EtcdKV

        if isinstance(kv, EtcdKV):
            try:
                await kv.open()
            except BaseException:
                await kv.close()
                raise
    return kv
