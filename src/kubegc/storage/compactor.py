"""Automatic compaction (cf. the apiserver's etcd compactor, which compacts every 5 minutes).

``run_compactor`` keeps a window of the newest ``keep`` revisions so watches and paged
lists can resume, and forgets the rest (its owner passes both; the defaults are
``kubegc.cluster_config.ClusterConfig``'s). It works with every ``KV`` backend. After a
compaction that forgot something it hands the heap's free memory back to the system
(``trim_heap``): what the deleted objects held in the process (watch cache, informers, the
GC's graph) has been freed by then, but glibc keeps freed memory in its arenas.
May import: the standard library and ``kubegc.api``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
from collections.abc import Callable

from kubegc.api.clock import Clock
from kubegc.storage.errors import CompactedError, StorageClosedError, StorageError
from kubegc.storage.kv import KV

log = logging.getLogger(__name__)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError, TypeError):  # not glibc (musl, macOS): nothing to do
        return None
    return trim


def trim_heap() -> bool:
    """Return the heap's free memory to the system (glibc's ``malloc_trim(0)``, as long
    running Python servers do after freeing much); False where there is no glibc."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


async def compact_once(kv: KV, *, keep: int) -> int | None:
    """Compact ``kv`` to ``current_revision - keep`` if that is above its compact revision;
    return the new compact revision, or None when there was nothing to do."""
    target = kv.current_revision - keep
    if target <= kv.compact_revision:
        return None
    try:
        await kv.compact(target)
    except CompactedError:
        return None  # someone compacted further meanwhile
    return target


async def run_compactor(kv: KV, *, interval: float, keep: int, clock: Clock) -> None:
    """Every ``interval`` seconds of ``clock`` time, ``compact_once(kv, keep=keep)``.

    Runs until cancelled (its owner cancels it before closing ``kv``), or until a
    compaction finds ``kv`` closed. Other storage errors are logged and the compaction is
    retried at the next interval (a failed compaction loses nothing).
    """
    if interval <= 0 or keep < 0:
        raise ValueError("run_compactor: interval must be > 0 and keep >= 0")
    while True:
        await clock.sleep(interval)
        try:
            revision = await compact_once(kv, keep=keep)
        except StorageClosedError:
            return
        except StorageError:
            log.exception("compaction failed; retrying in %s s", interval)
            continue
        if revision is not None:
            log.debug("compacted to revision %d", revision)
            trim_heap()
