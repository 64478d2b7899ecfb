"""The GC's metadata informers' caches kept in the data directory between two runs of
``kubegc serve`` (``client.cache.snapshot``): read at start, written every
``ClusterConfig.informer_cache_interval`` seconds while the controllers run (so that a
crash leaves recent ones) and at a clean stop. Used by the composition root
(``kubegc.cluster``) alone, for a SQLite store of its own data directory only (an etcd is
shared with other servers and writers).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from pathlib import Path

from kubegc.api.clock import RealClock
from kubegc.api.resources import GroupVersionResource
from kubegc.client.cache import CachedList
from kubegc.client.cache.snapshot import CacheKeeper, Window, read_caches, write_caches
from kubegc.storage.sqlite import SqliteKV

log = logging.getLogger(__name__)

Caches = Mapping[GroupVersionResource, CachedList]


class InformerCaches:
    """Ownership: the composition root: ``read`` once at start, ``keep`` once the
    controller manager runs, ``stop`` once every writer has stopped."""

    def __init__(self, path: Path, kv: SqliteKV, *, period: float) -> None:
        self.path, self.kv, self.period = path, kv, period
        self.keeper: CacheKeeper | None = None
        self._task: asyncio.Task[None] | None = None

    def read(self, oldest: int) -> dict[GroupVersionResource, CachedList]:
        """The caches a watch can resume from ``oldest`` (the watch cache's origin) on."""
        return read_caches(self.path, Window(self.kv.store_id, oldest,
                                             self.kv.current_revision))

    def keep(self, collect: Callable[[], Caches], *, window: int) -> None:
        """Write ``collect()`` every ``period`` real seconds (not scaled: at 600x a
        scaled minute is 0.1 s), unless ``period`` is 0, and as soon as the store has
        moved half of ``window`` (the revisions a watch can resume across) past the last
        write: caches further behind could not be resumed from after a crash."""
        if self.period <= 0:
            return
        kv = self.kv
        self.keeper = CacheKeeper(
            self.path, store=kv.store_id, period=self.period, clock=RealClock(),
            collect=lambda: (kv.current_revision, collect()),
            revision=lambda: kv.current_revision, revisions=window // 2)
        self._task = asyncio.create_task(self.keeper.run(), name="informer-cache-keeper")

    async def stop(self, final: Caches) -> None:
        """Stop writing periodically and write ``final`` (the caches when the controller
        manager stopped) at the store's revision now."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        if self.keeper is not None:
            await self.keeper.stop()
        try:
            await asyncio.to_thread(write_caches, self.path, self.kv.current_revision, final,
                                    store=self.kv.store_id)
        except OSError as e:  # the next start lists, or uses the last periodic file
            log.warning("informer caches not written to %s: %s", self.path, e)
