"""SqliteKV beyond the shared contract: restart, group commit, kill -9 durability,
compaction on disk."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kubegc.storage import (
    BatchWrite,
    CompactedError,
    ConflictError,
    Event,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    SqliteKV,
    StorageClosedError,
    StorageError,
    WriteKind,
    sqlite_schema,
    sqlite_vacuum,
    sqlite_writer,
)

HELPER = Path(__file__).with_name("sqlite_kill9_writer.py")
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "kv.db"


async def test_restart_continues_at_the_same_revision_with_the_same_data(db: Path) -> None:
    kv = SqliteKV(db)
    r1 = await kv.create("/a", b"a1")
    r2 = await kv.update("/a", b"a2", expected_mod_revision=r1)
    r3 = await kv.create("/b", b"b1")
    r4 = await kv.delete("/b", expected_mod_revision=r3)
    await kv.close()

    again = SqliteKV(db)
    try:
        assert again.current_revision == r4
        assert await again.get("/a") == KeyValue("/a", b"a2", r1, r2)
        assert await again.get("/b") is None
        past = await again.range("/", prefix=True, revision=r3)
        assert [(k.key, k.value) for k in past.kvs] == [("/a", b"a2"), ("/b", b"b1")]
        assert await again.create("/c", b"") == r4 + 1
        replay = await _take(again.watch("/", start_revision=r2), 3)
        assert [e.revision for e in replay] == [r2, r3, r4]
    finally:
        await again.close()


async def test_restart_keeps_the_compact_revision(db: Path) -> None:
    kv = SqliteKV(db)
    r1 = await kv.create("/a", b"1")
    r2 = await kv.update("/a", b"2", expected_mod_revision=r1)
    await kv.update("/a", b"3", expected_mod_revision=r2)
    await kv.compact(r2)
    await kv.close()

    again = SqliteKV(db)
    try:
        assert again.compact_revision == r2
        with pytest.raises(CompactedError):
            await again.range("/a", revision=r1)
        assert (await again.range("/a", revision=r2)).kvs[0].value == b"2"
    finally:
        await again.close()


async def test_restart_after_compacting_everything_keeps_the_revision(db: Path) -> None:
    """The newest row is never compacted away, so the revision survives a restart even
    when the last write was a deletion and compaction reached it."""
    kv = SqliteKV(db)
    r1 = await kv.create("/a", b"1")
    r2 = await kv.delete("/a", expected_mod_revision=r1)
    await kv.compact(r2)
    await kv.close()

    again = SqliteKV(db)
    try:
        assert again.current_revision == r2 and again.compact_revision == r2
        assert await again.create("/a", b"2") == r2 + 1
    finally:
        await again.close()


async def test_databases_with_autoincrement_revisions_keep_counting(db: Path) -> None:
    """Databases created by earlier versions kept the revision in ``sqlite_sequence``
    (``id`` AUTOINCREMENT); they open and continue from it."""
    old = sqlite3.connect(db)
    old.executescript(sqlite_schema.SCHEMA.replace(
        "id INTEGER PRIMARY KEY,", "id INTEGER PRIMARY KEY AUTOINCREMENT,"))
    old.execute("INSERT INTO kine VALUES (7, '/a', 1, 0, 7, 0, x'00')")
    old.execute("UPDATE sqlite_sequence SET seq = 9 WHERE name = 'kine'")
    old.commit()
    old.close()
    kv = SqliteKV(db)
    try:
        assert kv.current_revision == 9
        assert await kv.create("/b", b"") == 10
    finally:
        await kv.close()


async def test_concurrent_writers_share_few_commits(db: Path) -> None:
    kv = SqliteKV(db)
    try:
        before = kv.writer_stats.commits
        revisions = await asyncio.gather(*(kv.create(f"/g/{i:03d}", b"v") for i in range(200)))
        assert sorted(revisions) == list(range(revisions[0], revisions[0] + 200))
        assert revisions == sorted(revisions)  # applied in submission order
        assert kv.writer_stats.commits - before == 1
        assert kv.writer_stats.max_batch == 200
        assert len((await kv.range("/g/", prefix=True)).kvs) == 200
    finally:
        await kv.close()


async def test_cas_inside_one_batch_sees_earlier_writes(db: Path) -> None:
    kv = SqliteKV(db)
    try:
        r1 = await kv.create("/k", b"v1")
        r_del = await kv.create("/gone", b"old")
        before = kv.writer_stats.commits
        results = await asyncio.gather(
            kv.update("/k", b"first", expected_mod_revision=r1),
            kv.update("/k", b"second", expected_mod_revision=r1),  # stale after the first
            kv.create("/new", b"n1"),
            kv.create("/new", b"n2"),  # exists after the previous create
            kv.delete("/gone", expected_mod_revision=r_del),
            kv.create("/gone", b"back"),  # sees the tombstone written just before
            return_exceptions=True,
        )
        assert kv.writer_stats.commits - before == 1
        first, second, new1, new2, deleted, recreated = results
        assert isinstance(first, int)
        assert isinstance(second, ConflictError) and second.actual == first
        assert isinstance(new2, KeyExistsError)
        assert [new1, deleted, recreated] == [first + 1, first + 2, first + 3]
        assert isinstance(new1, int) and isinstance(recreated, int)
        assert await kv.get("/k") == KeyValue("/k", b"first", r1, first)
        assert await kv.get("/new") == KeyValue("/new", b"n1", new1, new1)
        assert await kv.get("/gone") == KeyValue("/gone", b"back", recreated, recreated)
    finally:
        await kv.close()


async def test_failed_commit_fails_every_write_of_the_batch(db: Path) -> None:
    kv = SqliteKV(db)
    try:
        r1 = await kv.create("/a", b"")
        kv._conn.execute("PRAGMA query_only=1")  # the next commit fails: read-only
        results = await asyncio.gather(kv.create("/b", b""), kv.update(
            "/a", b"x", expected_mod_revision=r1), return_exceptions=True)
        assert [type(r) for r in results] == [StorageError, StorageError]
        assert kv.current_revision == r1
        kv._conn.execute("PRAGMA query_only=0")
        assert await kv.create("/b", b"") == r1 + 1
        assert await kv.get("/a") == KeyValue("/a", b"", r1, r1)
    finally:
        await kv.close()


async def test_a_write_batch_is_one_commit(db: Path) -> None:
    kv = SqliteKV(db)
    try:
        revs = [await kv.create(f"/k{i}", b"v") for i in range(300)]
        before = kv.writer_stats.commits
        outcomes = await kv.write_batch([
            BatchWrite(WriteKind.DELETE, f"/k{i}", expected_mod_revision=r)
            for i, r in enumerate(revs)])
        assert outcomes == list(range(revs[-1] + 1, revs[-1] + 301))
        assert kv.writer_stats.commits == before + 1
    finally:
        await kv.close()


async def test_batches_and_single_writes_of_one_flush_get_their_own_outcomes(
        db: Path) -> None:
    """Two write batches and single writes queued in the same loop turn share one commit;
    each batch gets its writes' outcomes in its own order (one future per batch), each
    single write its own."""
    kv = SqliteKV(db)
    try:
        r1 = await kv.create("/a", b"1")
        before = kv.writer_stats.commits
        first = kv.write_batch([BatchWrite(WriteKind.CREATE, "/x", b""),
                                BatchWrite(WriteKind.DELETE, "/a", expected_mod_revision=r1)])
        single = kv.create("/y", b"")
        second = kv.write_batch([BatchWrite(WriteKind.CREATE, "/x", b""),
                                 BatchWrite(WriteKind.DELETE, "/nope", expected_mod_revision=1),
                                 BatchWrite(WriteKind.CREATE, "/z", b"")])
        taken = kv.create("/z", b"")
        a, y, b, z = await asyncio.gather(first, single, second, taken,
                                          return_exceptions=True)
        assert a == [r1 + 1, r1 + 2]
        assert y == r1 + 3
        assert isinstance(b, list) and isinstance(b[0], KeyExistsError)
        assert isinstance(b[1], KeyNotFoundError) and b[2] == r1 + 4
        assert isinstance(z, KeyExistsError)
        assert kv.writer_stats.commits == before + 1
    finally:
        await kv.close()


async def test_a_failed_commit_leaves_nothing_of_a_write_batch(db: Path) -> None:
    kv = SqliteKV(db)
    try:
        revs = [await kv.create(f"/k{i}", b"v") for i in range(100)]
        kv._conn.execute("PRAGMA query_only=1")  # the next commit fails: read-only
        with pytest.raises(StorageError):
            await kv.write_batch([
                BatchWrite(WriteKind.DELETE, f"/k{i}", expected_mod_revision=r)
                for i, r in enumerate(revs)])
        kv._conn.execute("PRAGMA query_only=0")
        assert kv.current_revision == revs[-1]
        assert len((await kv.range("/k", prefix=True)).kvs) == 100
    finally:
        await kv.close()


async def test_a_cancelled_write_batch_applies_none_of_its_writes(db: Path) -> None:
    kv = SqliteKV(db)
    try:
        r1 = await kv.create("/a", b"")
        doomed = asyncio.ensure_future(kv.write_batch([
            BatchWrite(WriteKind.CREATE, "/x", b""), BatchWrite(WriteKind.CREATE, "/y", b""),
            BatchWrite(WriteKind.DELETE, "/a", expected_mod_revision=r1)]))
        await asyncio.sleep(0)  # the writes are queued, the flush not run yet
        doomed.cancel()
        assert await kv.create("/kept", b"") == r1 + 1
        with pytest.raises(asyncio.CancelledError):
            await doomed
        assert [kv_.key for kv_ in (await kv.range("/", prefix=True)).kvs] == ["/a", "/kept"]
    finally:
        await kv.close()


async def test_a_batch_is_written_in_few_statements(
        db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Multi-row INSERTs: the 100 creates of one batch go in as 64 + 32 + 4 rows."""
    statements: list[int] = []
    real_insert = sqlite_writer._insert

    def counted(n: int) -> str:
        statements.append(n)
        return real_insert(n)

    kv = SqliteKV(db)
    try:
        monkeypatch.setattr(sqlite_writer, "_insert", counted)
        revs = await asyncio.gather(*(kv.create(f"/k{i:03d}", b"v") for i in range(100)))
        assert statements == [64, 32, 4]
        assert sorted(revs) == list(range(1, 101)) and kv.writer_stats.commits == 1
        assert [x.key for x in (await kv.range("/", prefix=True)).kvs] == [
            f"/k{i:03d}" for i in range(100)]
    finally:
        await kv.close()


async def test_a_batch_of_creates_looks_its_keys_up_at_once(db: Path) -> None:
    """The existence checks of a batch are one SELECT (per 64 keys), not one per key, and
    still fail exactly the creates whose key exists."""
    kv = SqliteKV(db)
    try:
        await kv.create("/k005", b"old")
        selects: list[str] = []
        kv._conn.set_trace_callback(
            lambda sql_text: selects.append(sql_text) if "SELECT" in sql_text else None)
        outcomes = await asyncio.gather(*(kv.create(f"/k{i:03d}", b"v") for i in range(10)),
                                        return_exceptions=True)
        assert len(selects) == 1
        assert [type(o) for o in outcomes].count(KeyExistsError) == 1
        assert isinstance(outcomes[5], KeyExistsError)
        assert sorted(o for o in outcomes if isinstance(o, int)) == list(range(2, 11))
    finally:
        kv._conn.set_trace_callback(None)
        await kv.close()


async def test_a_read_modify_write_reads_the_row_once(db: Path) -> None:
    """The registry's CAS write reads the object, then writes it: the write's check uses
    the row the read returned, unless the key was written in between."""
    kv = SqliteKV(db)
    try:
        r1 = await kv.create("/k", b"v1")
        selects: list[str] = []
        kv._conn.set_trace_callback(
            lambda sql_text: selects.append(sql_text) if "SELECT" in sql_text else None)
        current = await kv.get("/k")
        assert current is not None
        r2 = await kv.update("/k", b"v2", expected_mod_revision=current.mod_revision)
        assert len(selects) == 1 and r2 == r1 + 1
        # the cached row was dropped by that write: a stale CAS still conflicts
        with pytest.raises(ConflictError):
            await kv.update("/k", b"v3", expected_mod_revision=r1)
        r3 = await kv.delete("/k", expected_mod_revision=r2)
        assert await kv.get("/k") is None
        events = kv.read_events("/k", "/k\x00", r3, r3)
        assert events[0].prev_kv is not None and events[0].prev_kv.value == b"v2"
    finally:
        kv._conn.set_trace_callback(None)
        await kv.close()


@pytest.mark.parametrize("query", [sqlite_schema.LIST_LATEST_SUFFIX,
                                   sqlite_schema.LIST_AT_SUFFIX], ids=["latest", "at"])
def test_a_range_by_key_suffix_reads_the_rows_of_its_keys_alone(db: Path, query: str) -> None:
    """``range(key_suffix=...)`` (a LIST by ``metadata.name`` in every namespace) selects
    its keys in the covering index (name, id), then reads the row, value included, of
    each selected id alone: the other objects' values are never read."""
    conn = sqlite_schema.connect(str(db), "FULL")
    try:
        plan = [step[3] for step in conn.execute("EXPLAIN QUERY PLAN " + query,
                                                 ("",) * query.count("?"))]
    finally:
        conn.close()
    assert any(step.startswith("SEARCH kine USING COVERING INDEX kine_name_id")
               for step in plan), plan
    assert "SEARCH kv USING INTEGER PRIMARY KEY (rowid=?)" in plan, plan


async def test_values_must_be_bytes(db: Path) -> None:
    kv = SqliteKV(db)
    try:
        with pytest.raises(TypeError):
            await kv.create("/a", "text")  # type: ignore[arg-type]
    finally:
        await kv.close()


async def test_cancelled_write_is_not_applied(db: Path) -> None:
    kv = SqliteKV(db)
    try:
        r1 = await kv.create("/a", b"")
        doomed = asyncio.ensure_future(kv.create("/doomed", b""))
        await asyncio.sleep(0)  # the create is queued, the flush not run yet
        doomed.cancel()
        assert await kv.create("/kept", b"") == r1 + 1
        assert doomed.cancelled()
        assert await kv.get("/doomed") is None
    finally:
        await kv.close()


async def test_close_flushes_queued_writes(db: Path) -> None:
    kv = SqliteKV(db)
    queued = asyncio.ensure_future(kv.create("/late", b"x"))
    await asyncio.sleep(0)  # queued, flush pending
    await kv.close()
    assert await queued == 1
    with pytest.raises(StorageClosedError):
        await kv.get("/late")
    again = SqliteKV(db)
    try:
        assert await again.get("/late") == KeyValue("/late", b"x", 1, 1)
    finally:
        await again.close()


async def test_compaction_deletes_superseded_rows_and_tombstones(db: Path) -> None:
    kv = SqliteKV(db)
    try:
        r = await kv.create("/a", b"0")
        for i in range(1, 10):
            r = await kv.update("/a", str(i).encode(), expected_mod_revision=r)
        rb = await kv.create("/b", b"")
        await kv.delete("/b", expected_mod_revision=rb)
        rc = await kv.create("/c", b"")
        assert _rows(db) == 13
        await kv.compact(rc)
        assert _rows(db) == 2  # the latest /a and /c; /b's tombstone is gone
        assert (await kv.get("/a")) == KeyValue("/a", b"9", 1, r)
    finally:
        await kv.close()


@pytest.mark.parametrize("mode", ["FULL", "NORMAL", "normal"])
async def test_synchronous_modes(db: Path, mode: str) -> None:
    kv = SqliteKV(db, synchronous=mode)
    try:
        assert await kv.create("/a", b"") == 1
        assert kv.path == db
    finally:
        await kv.close()


def test_unopenable_path_is_a_storage_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="cannot open"):
        SqliteKV(tmp_path / "no-such-dir" / "kv.db")


async def test_in_memory_database_works() -> None:
    kv = SqliteKV(":memory:")
    assert await kv.create("/a", b"") == 1
    await kv.close()


def test_unknown_synchronous_mode_is_rejected(db: Path) -> None:
    with pytest.raises(ValueError, match="synchronous"):
        SqliteKV(db, synchronous="OFF")


@pytest.mark.slow
async def test_acknowledged_writes_survive_kill_9(db: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(HELPER), str(db), "16",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    acked: list[tuple[str, int]] = []
    try:
        async with asyncio.timeout(60):
            while len(acked) < 2000:  # kill it mid-stream, well into group commits
                line = await proc.stdout.readline()
                if not line:
                    pytest.fail(f"writer exited early: {(await proc.stderr.read()).decode()}")
                key, revision = line.decode().split()
                acked.append((key, int(revision)))
    finally:
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
    assert proc.returncode == -signal.SIGKILL
    tail = (await proc.stdout.read()).decode()
    for text in tail.splitlines(keepends=True):
        if text.endswith("\n"):  # printed before the kill: acknowledged too
            key, revision = text.split()
            acked.append((key, int(revision)))

    kv = SqliteKV(db)
    try:
        missing = [(key, rev) for key, rev in acked
                   if await kv.get(key) != KeyValue(key, key.encode() * 8, rev, rev)]
        assert missing == []
        assert kv.current_revision >= max(rev for _, rev in acked)
    finally:
        await kv.close()


async def _take(watch: AsyncIterator[list[Event]], n: int) -> list[Event]:
    """The first ``n`` events of ``watch`` (fails after 10 s)."""
    events: list[Event] = []
    async with asyncio.timeout(10):
        async for batch in watch:
            events.extend(batch)
            if len(events) >= n:
                break
    return events[:n]


def _rows(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM kine").fetchone()[0])
    finally:
        conn.close()


def test_new_databases_use_8k_pages_and_old_ones_keep_theirs(tmp_path: Path) -> None:
    fresh = sqlite_schema.connect(str(tmp_path / "new.db"), "FULL")
    assert fresh.execute("PRAGMA page_size").fetchone()[0] == sqlite_schema.PAGE_SIZE == 8192
    fresh.close()
    old_path = tmp_path / "old.db"
    old = sqlite3.connect(old_path)
    old.execute("PRAGMA page_size=4096")
    old.execute("CREATE TABLE t(x)")
    old.close()
    reopened = sqlite_schema.connect(str(old_path), "FULL")
    assert reopened.execute("PRAGMA page_size").fetchone()[0] == 4096
    reopened.execute("INSERT INTO kine (name, created, deleted, create_revision, "
                     "prev_revision, value) VALUES ('/k', 1, 0, 1, 0, x'00')")
    reopened.close()


def _file_size(db: Path) -> int:
    return db.stat().st_size


async def test_compaction_gives_the_freed_pages_back_to_the_file_system(db: Path) -> None:
    kv = SqliteKV(db)
    try:
        value = b"x" * 4000
        revs = await asyncio.gather(*(kv.create(f"/k/{i:05d}", value) for i in range(2000)))
        full = _file_size(db) + Path(f"{db}-wal").stat().st_size
        await asyncio.gather(*(kv.delete(f"/k/{i:05d}", expected_mod_revision=rev)
                               for i, rev in enumerate(revs)))
        await kv.compact(kv.current_revision)
        conn = sqlite3.connect(db)
        try:
            assert conn.execute("PRAGMA freelist_count").fetchone()[0] == 0
        finally:
            conn.close()
        assert _file_size(db) < full / 10, (_file_size(db), full)
    finally:
        await kv.close()


def test_a_vacuum_step_frees_at_most_its_pages(tmp_path: Path) -> None:
    conn = sqlite_schema.connect(str(tmp_path / "v.db"), "FULL")
    try:
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO kine (name, created, deleted, create_revision, "
                         "prev_revision, value) VALUES (?, 1, 0, 1, 0, ?)",
                         [(f"/k/{i}", b"x" * 4000) for i in range(3000)])
        conn.execute("COMMIT")
        conn.execute("DELETE FROM kine")
        free = sqlite_vacuum.free_pages(conn)
        assert free > 2 * 100
        assert sqlite_vacuum.vacuum_step(conn, 100) == free - 100
        while sqlite_vacuum.vacuum_step(conn, 1000):
            pass
        assert sqlite_vacuum.free_pages(conn) == 0
    finally:
        conn.close()


def test_old_databases_are_converted_to_incremental_vacuum_once(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE t(x)")
    old.execute("INSERT INTO t VALUES (1)")
    old.commit()
    assert old.execute("PRAGMA auto_vacuum").fetchone()[0] == 0
    old.close()
    for _ in range(2):
        conn = sqlite_schema.connect(str(path), "FULL")
        try:
            assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == sqlite_vacuum.INCREMENTAL
            assert conn.execute("SELECT x FROM t").fetchall() == [(1,)]
        finally:
            conn.close()
    fresh = sqlite_schema.connect(str(tmp_path / "new.db"), "FULL")
    try:
        assert fresh.execute("PRAGMA auto_vacuum").fetchone()[0] == sqlite_vacuum.INCREMENTAL
    finally:
        fresh.close()
