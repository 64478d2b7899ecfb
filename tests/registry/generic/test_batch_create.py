"""``Registry.create_batch`` (``registry/generic/batch_create.py``): objects created as a
POST creates them, written in one write batch — one SQLite transaction, each its own
revision — with each object's own error in its place."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubegc.api.clock import ManualClock
from kubegc.registry import Registry, Target
from kubegc.storage import StorageError
from kubegc.storage.sqlite import SqliteKV
from tests.registry.conftest import manifest, target


async def _registry(tmp_path: Path) -> tuple[SqliteKV, Registry, Target]:
    kv = SqliteKV(tmp_path / "db.sqlite")
    reg = Registry(kv, clock=ManualClock())
    await reg.start()
    return kv, reg, target(reg, "configmaps")


async def test_a_batch_is_one_commit_each_object_its_own_revision(tmp_path: Path) -> None:
    kv, reg, t = await _registry(tmp_path)
    try:
        await reg.create(t, manifest("configmaps", "taken"))
        objs = [manifest("configmaps", f"c{i:03d}", labels={"i": str(i)}) for i in range(200)]
        objs[5]["metadata"]["labels"] = {"bad key!": "x"}  # invalid: its own error
        objs[9] = manifest("configmaps", "taken")  # exists: AlreadyExists
        objs[11] = {"metadata": {"generateName": "gen-"}}  # made up names: one by one
        before, start = kv.writer_stats.commits, kv.current_revision
        outcomes = await reg.create_batch(t, objs)
        assert kv.writer_stats.commits - before <= 3
        assert [i for i, o in enumerate(outcomes) if o is not None] == [5, 9]
        assert outcomes[5] is not None and outcomes[5].reason == "Invalid"
        assert outcomes[9] is not None and outcomes[9].reason == "AlreadyExists"
        items = (await reg.list(t))["items"]
        assert len(items) == 1 + 198
        revisions = [int(i["metadata"]["resourceVersion"]) for i in items
                     if i["metadata"]["name"] != "taken"]
        assert sorted(revisions) == list(range(start + 1, start + 199))
        created = {i["metadata"]["name"]: i for i in items}
        assert created["c007"]["metadata"]["uid"] and created["c007"]["metadata"][
            "creationTimestamp"]
        assert created["c007"]["metadata"]["labels"] == {"i": "7"}
        assert any(name.startswith("gen-") for name in created)
    finally:
        await reg.stop()
        await kv.close()


async def test_a_failed_commit_creates_none_of_the_batch(tmp_path: Path) -> None:
    kv, reg, t = await _registry(tmp_path)
    try:
        kv._conn.execute("PRAGMA query_only=1")  # the next commit fails: read-only
        with pytest.raises(StorageError):
            await reg.create_batch(t, [manifest("configmaps", f"c{i}") for i in range(50)])
        kv._conn.execute("PRAGMA query_only=0")
        assert (await reg.list(t))["items"] == []
    finally:
        await reg.stop()
        await kv.close()
