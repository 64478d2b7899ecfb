"""``SqliteKV``: the embedded default backend, kine's log-structured model on stdlib
``sqlite3`` (layout and statements in ``sqlite_schema``).

Contract beyond ``kv``:
  * Durability: WAL with ``synchronous="FULL"`` (default): a write that returned survives
    kill -9 and power loss. ``"NORMAL"`` survives kill -9 of the process but may lose the
    last commits on an OS crash or power loss.
  * Group commit: writes queue up; one flush per event-loop turn applies every queued write
    in ONE ``BEGIN IMMEDIATE ... COMMIT``, in arrival order, each write seeing the ones
    before it (a CAS conflict fails only that write), then resolves the writers. Concurrent
    writers thus share one fsync. A write whose caller was cancelled before the flush is
    not applied. A failed commit fails every write of the batch with ``StorageError``.
    ``write_batch`` queues all its writes before the flush runs, so they are always in
    one transaction (a DeleteCollection chunk: one fsync, nothing half-written), and waits
    on ONE future for all of them (``_Batch``: a future and a task wake-up per write cost
    ~5 us each, as much as a tenth of a namespace deletion's CPU per object; issue 27).
  * The flush is a ``loop.call_soon`` callback scheduled by the first queued write (the
    writer "task" without a task to wake): it runs after every coroutine that is already
    runnable has queued its write, which is what makes batches form. It decides the
    writes (``sqlite_writer.plan_batch``) and inserts the rows in multi-row statements
    (``write_rows``); it runs on the loop thread, fsync included (see
    docs/architecture.md for why not on a writer thread).
  * Reads run inline (short synchronous SQLite calls on the loop thread) and see committed
    writes only. A flush is synchronous too, so no read ever sees half a batch.
  * Watch: live events are handed to ``WatchHub`` right after each commit; replay scans the
    log (``id >= rev ORDER BY id``) in slices, then switches to live (see ``watch_hub``).
  * Restart: the revision continues from the newest row (see ``sqlite_schema``); data
    and the compact revision persist. One process owns a database file (revisions and
    watches are tracked in memory; a second writer process would go unnoticed).
  * Construction is synchronous (opens/creates the file); writes need a running loop.
    ``close()`` flushes queued writes, ends watches and closes the file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kubegc.api.clock import Clock, RealClock
from kubegc.storage import sqlite_schema as sql
from kubegc.storage import sqlite_vacuum as vacuum
from kubegc.storage.errors import (
    StorageClosedError,
    StorageError,
)
from kubegc.storage.kv import (
    KV,
    BatchOutcome,
    BatchWrite,
    Event,
    EventType,
    KeyValue,
    RangeResult,
    key_bounds,
)
from kubegc.storage.revisions import Revisions
from kubegc.storage.sqlite_writer import (
    CREATE,
    DELETE,
    UPDATE,
    BatchPlan,
    Row,
    Write,
    execute_transaction,
    latest_rows,
    plan_batch,
    write_rows,
)
from kubegc.storage.watch_hub import LogWatch, WatchHub

# Rows remembered from gets for the writes that follow them (see ``_read_rows``).
READ_ROWS_KEPT = 4096

# Revisions compacted per transaction: bounds how long compaction holds the event loop.
COMPACT_BATCH_REVISIONS = 2000

_PUT, _DEL = EventType.PUT, EventType.DELETE



class _Batch:
    """The writers of one ``write_batch``: one future for all its writes, resolved with
    their outcomes in order once the flush that took them has decided them all (a batch's
    writes are queued together, so one flush always takes all of them)."""

    __slots__ = ("future", "outcomes")

    def __init__(self, future: asyncio.Future[list[BatchOutcome]]) -> None:
        self.future = future
        self.outcomes: list[BatchOutcome] = []

    def cancelled(self) -> bool:
        return self.future.cancelled()

    def done(self) -> bool:
        return self.future.done()

    def set_exception(self, exc: BaseException) -> None:
        self.future.set_exception(exc)


# A queued write: (kind, key, value, expected mod revision, the writer's future or batch).
_Op = tuple[int, str, bytes, int, "asyncio.Future[int] | _Batch"]


@dataclass(frozen=True, slots=True)
class WriterStats:
    """Group-commit counters since the store was opened."""

    commits: int  # transactions committed by the writer
    writes: int  # writes applied (failed CAS/create checks excluded)
    max_batch: int  # most writes submitted in one batch


class SqliteKV(Revisions, KV):
    """Durable revisioned store in one SQLite file (see the module contract).

    Ownership: one event loop. ``_flush`` (a loop callback) is the only writer of ``_rev``
    and of the ``kine`` table apart from ``compact``, whose transactions are synchronous
    too, so the two never interleave. ``clock`` is the time source for helpers that run
    beside the store (``run_compactor``); reads and writes do not use time.
    """

    def __init__(
        self, path: str | Path, *, synchronous: str = "FULL", clock: Clock | None = None,
    ) -> None:
        self.path = Path(path)
        self.clock: Clock = clock or RealClock()
        self._conn = sql.connect(str(path), synchronous)
        self._rev, self._compact_rev, self._compact_progress = sql.load_revisions(self._conn)
        #: this database's random identity (``sqlite_schema``), kept for its lifetime
        self.store_id = sql.load_store_id(self._conn)
        self._ops: list[_Op] = []
        self._flush_handle: asyncio.Handle | None = None
        self._hub = WatchHub()
        self._compact_lock = asyncio.Lock()
        self._closed = False
        self._commits = 0
        self._writes = 0
        self._max_batch = 0
        #: the committed row each ``get`` returned, until that key is written: a
        #: read-modify-write (the registry's CAS update or delete) then finds its current
        #: row here instead of reading it again. Writes go through ``_flush`` only, which
        #: drops the keys it writes, so an entry is always the key's latest row.
        self._read_rows: dict[str, Row] = {}

    @property
    def writer_stats(self) -> WriterStats:
        return WriterStats(self._commits, self._writes, self._max_batch)

    def _check_open(self) -> None:
        if self._closed:
            raise StorageClosedError("storage is closed")

    # -- reads ---------------------------------------------------------------------------

    async def get(self, key: str) -> KeyValue | None:
        self._check_open()
        row = self._conn.execute(sql.LATEST, (key,)).fetchone()
        if row is None or row[2]:
            return None
        if len(self._read_rows) >= READ_ROWS_KEPT:
            self._read_rows.clear()
        self._read_rows[key] = row
        return KeyValue(key, row[3], row[1], row[0])

    async def range(
        self, key: str, *, end: str = "", prefix: bool = False, revision: int = 0,
        limit: int = 0, key_suffix: str = "",
    ) -> RangeResult:
        self._check_open()
        lo, hi = key_bounds(key, prefix=prefix, end=end)
        rev = self._read_revision(revision)
        at = 0 if rev == self._rev else rev
        if hi is None:
            if at:
                row = self._conn.execute(sql.LATEST_AT, (key, at)).fetchone()
            else:
                row = self._conn.execute(sql.LATEST, (key,)).fetchone()
            if row is None or row[2] or not key.endswith(key_suffix):
                return RangeResult([], rev)
            return RangeResult([KeyValue(key, row[3], row[1], row[0])], rev)
        kvs = self._list(lo, hi, at, limit + 1 if limit > 0 else -1, key_suffix)
        if 0 < limit < len(kvs):
            return RangeResult(kvs[:limit], rev, True)
        return RangeResult(kvs, rev)

    def _list(self, lo: str, hi: str, at: int, want: int, suffix: str) -> list[KeyValue]:
        """Live keys in ``[lo, hi)`` ending with ``suffix`` at revision ``at`` (0: latest),
        at most ``want`` (-1: all). Pages again past tombstones until ``want`` keys are
        found or the range ends."""
        out: list[KeyValue] = []
        while True:
            n = want - len(out) if want > 0 else -1
            rows = self._conn.execute(*_list_query(lo, hi, at, suffix, n)).fetchall()
            # The join yields the groups in name order in practice; SQL does not promise it.
            rows.sort(key=_first)
            out += [KeyValue(name, value, crev, rid)
                    for name, value, crev, rid, deleted in rows if not deleted]
            if n < 0 or len(rows) < n or len(out) >= want:
                return out
            lo = rows[-1][0] + "\x00"

    # -- writes (group commit) -----------------------------------------------------------

    async def create(self, key: str, value: bytes) -> int:
        return await self._submit(CREATE, key, value, 0)

    async def update(self, key: str, value: bytes, *, expected_mod_revision: int) -> int:
        return await self._submit(UPDATE, key, value, expected_mod_revision)

    async def delete(self, key: str, *, expected_mod_revision: int) -> int:
        return await self._submit(DELETE, key, b"", expected_mod_revision)

    async def write_batch(self, writes: Sequence[BatchWrite]) -> list[BatchOutcome]:
        """See ``KV.write_batch``: every write is queued before the flush runs, so they are
        all decided and written by ONE flush, in one transaction (with whatever else was
        queued); a failed commit fails them all, a cancelled caller applies none."""
        self._check_open()
        if not writes:
            return []
        for w in writes:
            if type(w.value) is not bytes:
                raise TypeError(f"values are bytes, not {type(w.value).__name__}")
        loop = asyncio.get_running_loop()
        # one future: cancelling the caller cancels it, and the flush then applies none
        batch = _Batch(loop.create_future())
        self._ops += [(w.kind, w.key, w.value, w.expected_mod_revision, batch) for w in writes]
        if self._flush_handle is None:
            self._flush_handle = loop.call_soon(self._flush)
        return await batch.future

    def _submit(self, kind: int, key: str, value: bytes, expected: int) -> asyncio.Future[int]:
        self._check_open()
        if type(value) is not bytes:
            raise TypeError(f"values are bytes, not {type(value).__name__}")
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[int] = loop.create_future()
        self._ops.append((kind, key, value, expected, fut))
        if self._flush_handle is None:
            self._flush_handle = loop.call_soon(self._flush)
        return fut

    def _flush(self) -> None:
        """Apply every queued write in one transaction, then publish and resolve."""
        self._flush_handle = None
        ops = [op for op in self._ops if not op[4].cancelled()]
        self._ops = []
        if not ops:
            return
        self._max_batch = max(self._max_batch, len(ops))
        writes: list[Write] = [op[:4] for op in ops]
        try:
            plan = plan_batch(self._latest_rows(writes).__getitem__, writes, self._rev,
                              self._hub.has_watchers)
            for row in plan.rows:
                self._read_rows.pop(row[1], None)
            if plan.rows:
                write_rows(self._conn, plan.rows)
        except Exception as exc:  # sqlite3.Error (disk full, I/O) or a bug: fail the batch
            self._read_rows.clear()
            self._fail_batch(ops, exc)
            return
        self._publish(ops, plan)

    def _latest_rows(self, writes: list[Write]) -> dict[str, Row | None]:
        """The committed row of every key ``writes`` touch: from ``_read_rows`` when a get
        just read it, the others in one lookup."""
        known: dict[str, Row | None] = {}
        missing: list[str] = []
        for _, key, _, _ in writes:
            row = self._read_rows.get(key)
            if row is None:
                missing.append(key)
            else:
                known[key] = row
        if missing:
            known.update(latest_rows(self._conn, missing))
        return known

    def _publish(self, ops: list[_Op], plan: BatchPlan) -> None:
        """Advance the revision, hand the events to watchers, resolve the writers."""
        if plan.rows:
            self._rev = plan.revision
            self._commits += 1
            self._writes += len(plan.rows)
        if plan.events:
            self._hub.notify(plan.events)
        batches: list[_Batch] = []
        for op, outcome in zip(ops, plan.outcomes, strict=True):
            fut = op[4]
            if isinstance(fut, _Batch):
                if not fut.outcomes:
                    batches.append(fut)
                fut.outcomes.append(outcome)
            elif fut.done():
                continue
            elif isinstance(outcome, int):
                fut.set_result(outcome)
            else:
                fut.set_exception(outcome)
        for batch in batches:
            if not batch.future.done():
                batch.future.set_result(batch.outcomes)

    def _fail_batch(self, ops: list[_Op], exc: BaseException) -> None:
        for *_, fut in ops:
            if not fut.done():
                error = StorageError(f"sqlite: write failed: {exc!r}")
                error.__cause__ = exc
                fut.set_exception(error)

    # -- watch ---------------------------------------------------------------------------

    def watch(self, prefix: str, *, start_revision: int) -> LogWatch:
        """See ``KV.watch``; ``start_revision`` <= 0 means "from the next write"."""
        self._check_open()
        return self._hub.watch(self, prefix, start_revision)

    def read_events(self, lo: str, hi: str, start: int, end: int) -> list[Event]:
        """``EventLog`` for the hub: the committed log in ``[lo, hi)`` x ``[start, end]``."""
        out: list[Event] = []
        for rid, name, created, deleted, crev, _prev, value, pid, pvalue in self._conn.execute(
                sql.LOG, (start, end, lo, hi)):
            prev_kv = None if created or pid is None else KeyValue(name, pvalue, crev, pid)
            out.append(Event(_DEL if deleted else _PUT, KeyValue(name, value, crev, rid),
                             prev_kv))
        return out

    # -- compaction and lifecycle --------------------------------------------------------

    async def compact(self, revision: int) -> None:
        """Forget history before ``revision``: reads and watches below it fail at once;
        superseded rows and tombstones below it are deleted in transactions of
        ``COMPACT_BATCH_REVISIONS`` revisions, yielding to the loop between them; then the
        file shrinks by the pages they held (``_vacuum``)."""
        self._check_open()
        self._update_compact_rev(revision)
        self._execute_txn([(sql.SET_META, ("compact_revision", revision))])
        async with self._compact_lock:
            while not self._closed and self._compact_progress < self._compact_rev:
                lo = self._compact_progress
                hi = min(self._compact_rev, lo + COMPACT_BATCH_REVISIONS)
                self._execute_txn([
                    (sql.DELETE_SUPERSEDED, (lo, hi)),
                    (sql.DELETE_TOMBSTONES, (lo, hi)),
                    (sql.SET_META, ("compact_progress", hi)),
                ])
                self._compact_progress = hi
                await asyncio.sleep(0)
            await self._vacuum()

    async def _vacuum(self) -> None:
        """Give the pages compaction freed back to the file system, one short step at a
        time (``sqlite_vacuum``), yielding to the loop (and so to writers) between steps."""
        free = before = vacuum.free_pages(self._conn)
        while free and not self._closed:
            left = vacuum.vacuum_step(self._conn)
            if left >= free:  # not an incrementally vacuumed database: nothing to give
                break
            free = left
            await asyncio.sleep(0)
        if free < before and not self._closed:
            vacuum.checkpoint(self._conn)

    def _execute_txn(self, statements: list[tuple[str, tuple[object, ...]]]) -> None:
        execute_transaction(self._conn, statements)

    async def close(self) -> None:
        if self._closed:
            return
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush()
        self._closed = True
        self._hub.close()
        self._conn.close()


def _list_query(lo: str, hi: str, at: int, suffix: str, n: int
                ) -> tuple[str, tuple[object, ...]]:
    """``_list``'s statement and parameters."""
    bounds: tuple[object, ...] = (lo, hi, at) if at else (lo, hi)
    if suffix:
        query = sql.LIST_AT_SUFFIX if at else sql.LIST_LATEST_SUFFIX
        return query, (*bounds, -len(suffix), suffix, n)
    return (sql.LIST_AT if at else sql.LIST_LATEST), (*bounds, n)


def _first(row: tuple[str, bytes, int, int, int]) -> str:
    return row[0]
