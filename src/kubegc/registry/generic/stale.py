"""Reads served from the past: while ``read_revision`` is set (the API server sets it for
a request a ``staleReads`` fault holds, ``kubegc.server.faults``), GETs and LISTs
without a revision of their own read the storage at that revision, as an apiserver whose
watch cache lags behind etcd would answer them (KEP-5647, "stale reads after a restart").
Never newer than the revision; a revision already compacted reads the current state.
"""

from __future__ import annotations

from contextvars import ContextVar

#: 0: read the current state (always, but in a request a ``staleReads`` fault holds)
read_revision: ContextVar[int] = ContextVar("kubegc_read_revision", default=0)
