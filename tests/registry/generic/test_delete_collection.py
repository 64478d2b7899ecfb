"""``StoredResource.delete_collection`` (cf. ``Store.DeleteCollection``): the list of what
was deleted, selectors, and the deletes of a collection written in a few durable commits
of the SQLite store's group commit, not one each."""

from __future__ import annotations

from pathlib import Path

from kubegc.api.clock import ManualClock
from kubegc.api.meta import DeleteOptions
from kubegc.registry import Registry
from kubegc.storage.sqlite import SqliteKV
from tests.registry.conftest import manifest, target


async def test_a_collection_is_deleted_in_a_few_commits(tmp_path: Path) -> None:
    kv = SqliteKV(tmp_path / "db.sqlite")
    reg = Registry(kv, clock=ManualClock())
    await reg.start()
    try:
        t = target(reg, "configmaps")
        for i in range(300):
            await reg.create(t, manifest("configmaps", f"cm{i:03d}",
                                         labels={"half": str(i % 2)}))
        before = kv.writer_stats.commits
        answer = await reg.delete_collection(t, DeleteOptions(), label_selector="half=0")
        assert kv.writer_stats.commits - before <= 3
        assert answer["kind"] == "ConfigMapList"
        assert [i["metadata"]["name"] for i in answer["items"]] == [
            f"cm{i:03d}" for i in range(0, 300, 2)]
        left = await reg.list(t)
        assert len(left["items"]) == 150
        assert all(i["metadata"]["labels"]["half"] == "1" for i in left["items"])
    finally:
        await reg.stop()
        await kv.close()
