"""``--concurrent-gc-syncs`` on a durable store: each GC worker has one DELETE in flight
and waits for it to be durable, so a SQLite group commit carries at most as many of a
cascade's deletions as there are workers — more workers, fewer commits (issue 27; upstream
``GarbageCollectorControllerConfiguration.ConcurrentGCSyncs``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kubegc.api.resources import GroupVersionResource
from kubegc.client.interface import DeleteOptions
from kubegc.storage import SqliteKV
from kubegc.testing import Cluster

CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")
DEPENDENTS = 120


async def _cascade_commits(tmp_path: Path, workers: int) -> int:
    """Commits from the owner's DELETE until its ``DEPENDENTS`` dependents are gone."""
    async with Cluster(controllers=["garbagecollector"], storage="sqlite",
                       data_dir=tmp_path / str(workers),
                       concurrent_gc_syncs=workers) as cluster:
        client = cluster.client
        await client.create(NAMESPACES, {"metadata": {"name": "w"}})
        owner = await client.create(CONFIGMAPS, {"metadata": {"name": "owner"}}, namespace="w")
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
               "uid": owner["metadata"]["uid"]}
        await asyncio.gather(*(client.create(CONFIGMAPS, {"metadata": {
            "name": f"d{i}", "ownerReferences": [ref]}}, namespace="w")
            for i in range(DEPENDENTS)))
        await cluster.asettle(60)
        kv = cluster.cluster.kv
        assert isinstance(kv, SqliteKV)
        before = kv.writer_stats.commits
        await client.delete(CONFIGMAPS, "owner", namespace="w",
                            options=DeleteOptions(propagation_policy="Background"))
        async with asyncio.timeout(60):
            while (await client.list(CONFIGMAPS, namespace="w"))["items"]:
                await asyncio.sleep(0.01)
        return kv.writer_stats.commits - before


@pytest.mark.parametrize("few, many", [(2, 60)])
async def test_more_workers_share_commits(tmp_path: Path, few: int, many: int) -> None:
    with_few = await _cascade_commits(tmp_path, few)
    with_many = await _cascade_commits(tmp_path, many)
    assert with_few >= DEPENDENTS // few  # never more than `few` deletions per commit
    assert with_many * 4 <= with_few, (with_few, with_many)
