"""``StoredResource.delete_collection`` (cf. ``Store.DeleteCollection``): the list of what
was deleted, selectors, and the deletes of a collection written in a few durable commits
of the SQLite store's group commit, not one each: a chunk's removals are one write batch
(``registry/generic/collection.py``), each object still its own revision and event."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from kubegc.api.clock import ManualClock
from kubegc.api.meta import DeleteOptions
from kubegc.registry import Registry, Target
from kubegc.storage import BatchOutcome, BatchWrite, Event, EventType, StorageError
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


async def _filled(tmp_path: Path, n: int, *, kept: int = 0) -> tuple[SqliteKV, Registry, Target]:
    """A registry over SQLite holding ``n`` ConfigMaps, the first ``kept`` of them held by
    a finalizer."""
    kv = SqliteKV(tmp_path / "db.sqlite")
    reg = Registry(kv, clock=ManualClock())
    await reg.start()
    t = target(reg, "configmaps")
    for i in range(n):
        finalizers = ["example.com/keep"] if i < kept else []
        await reg.create(t, manifest("configmaps", f"cm{i:03d}", finalizers=finalizers))
    return kv, reg, t


async def _events(kv: SqliteKV, start: int, last: int) -> list[Event]:
    events: list[Event] = []
    async with asyncio.timeout(10):
        async for batch in kv.watch("/registry/", start_revision=start):
            events += batch
            if events[-1].revision >= last:
                return events
    return events


async def test_each_object_of_a_batch_gets_its_own_revision_and_event(tmp_path: Path) -> None:
    """The removals are one write batch (one commit); the objects a finalizer holds are
    updated by the per-object DELETE (deletionTimestamp set, kept)."""
    kv, reg, t = await _filled(tmp_path, 300, kept=3)
    try:
        start, commits = kv.current_revision + 1, kv.writer_stats.commits
        answer = await reg.delete_collection(t, DeleteOptions())
        assert len(answer["items"]) == 300
        assert kv.writer_stats.commits - commits <= 2
        events = await _events(kv, start, start + 299)
        assert [e.revision for e in events] == list(range(start, start + 300))
        deleted = sorted(e.kv.key.rsplit("/", 1)[1] for e in events
                         if e.type is EventType.DELETE)
        assert deleted == [f"cm{i:03d}" for i in range(3, 300)]
        left = (await reg.list(t))["items"]
        assert [i["metadata"]["name"] for i in left] == ["cm000", "cm001", "cm002"]
        assert all(i["metadata"]["deletionTimestamp"] for i in left)
    finally:
        await reg.stop()
        await kv.close()


async def test_an_object_changed_since_the_list_is_decided_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch writes against the listed mod revisions; an object written meanwhile
    conflicts and goes by the per-object DELETE on its current state."""
    kv, reg, t = await _filled(tmp_path, 50)
    batch = kv.write_batch

    async def meanwhile(writes: Sequence[BatchWrite]) -> list[BatchOutcome]:
        current = await reg.get(t, "cm007")
        current["metadata"]["labels"] = {"changed": "yes"}
        await reg.update(t, "cm007", current)
        return await batch(writes)

    monkeypatch.setattr(kv, "write_batch", meanwhile)
    try:
        answer = await reg.delete_collection(t, DeleteOptions())
        listed = {i["metadata"]["name"]: i for i in answer["items"]}
        assert "labels" not in listed["cm007"]["metadata"]  # answered as listed
        assert (await reg.list(t))["items"] == []
    finally:
        await reg.stop()
        await kv.close()


async def test_a_failed_commit_leaves_the_chunk_whole(tmp_path: Path) -> None:
    kv, reg, t = await _filled(tmp_path, 120)
    try:
        revision = kv.current_revision
        kv._conn.execute("PRAGMA query_only=1")  # the next commit fails: read-only
        with pytest.raises(StorageError):
            await reg.delete_collection(t, DeleteOptions())
        kv._conn.execute("PRAGMA query_only=0")
        assert kv.current_revision == revision
        assert len((await reg.list(t))["items"]) == 120
        await reg.delete_collection(t, DeleteOptions())  # and it can be asked again
        assert (await reg.list(t))["items"] == []
    finally:
        await reg.stop()
        await kv.close()


async def test_a_dry_run_deletes_nothing(tmp_path: Path) -> None:
    kv, reg, t = await _filled(tmp_path, 20)
    try:
        revision = kv.current_revision
        answer = await reg.delete_collection(t, DeleteOptions(dry_run=True))
        assert len(answer["items"]) == 20
        assert kv.current_revision == revision
    finally:
        await reg.stop()
        await kv.close()
