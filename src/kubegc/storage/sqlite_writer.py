"""The group commit of ``SqliteKV``: apply one batch of queued writes in one transaction.

``apply_batch`` runs on the store's writer thread, with the writer connection, and touches
nothing else: it gets plain tuples and returns plain values, and the event loop resolves
the writers' futures and publishes the events afterwards. SQLite releases the GIL while it
inserts, updates the index and syncs the WAL, so the loop keeps serving requests (and
queueing the next batch) while a batch reaches the disk.
May import: the standard library, ``kubegc.storage`` errors, kv types and schema.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from kubegc.storage import sqlite_schema as sql
from kubegc.storage.errors import ConflictError, KeyExistsError, KeyNotFoundError, StorageError
from kubegc.storage.kv import Event, EventType, KeyValue

CREATE, UPDATE, DELETE = 0, 1, 2
_PUT, _DEL = EventType.PUT, EventType.DELETE

#: One queued write: (kind, key, value, expected mod revision).
Write = tuple[int, str, bytes, int]
# The newest row of a key: (id, create_revision, deleted, value).
_Row = tuple[int, int, int, bytes]


@dataclass(slots=True)
class BatchResult:
    revision: int  # the store's revision after the batch
    applied: int  # rows written
    outcomes: list[int | StorageError] = field(default_factory=list)  # one per write
    events: list[Event] = field(default_factory=list)  # only when asked for


def apply_batch(conn: sqlite3.Connection, writes: list[Write], revision: int,
                want_events: bool) -> BatchResult:
    """Apply ``writes`` in order in ONE transaction, each seeing the ones before it (a CAS
    conflict fails only that write). Raises (after a rollback) when the transaction
    fails: then no write of the batch happened."""
    result = BatchResult(revision, 0)
    rev = revision
    batch: dict[str, _Row] = {}  # rows written by this batch, which later writes must see
    rows: list[tuple[int, str, int, int, int, int, bytes]] = []
    outcomes = result.outcomes
    events = result.events
    try:
        conn.execute("BEGIN IMMEDIATE")
        for kind, key, value, expected in writes:
            cur = batch.get(key) or conn.execute(sql.LATEST, (key,)).fetchone()
            if kind == CREATE:
                if cur is not None and not cur[2]:
                    outcomes.append(KeyExistsError(key))
                    continue
                rev += 1
                rows.append((rev, key, 1, 0, rev, cur[0] if cur else 0, value))
                batch[key] = (rev, rev, 0, value)
                if want_events:
                    events.append(Event(_PUT, KeyValue(key, value, rev, rev)))
            elif cur is None or cur[2]:
                outcomes.append(KeyNotFoundError(key))
                continue
            elif cur[0] != expected:
                outcomes.append(ConflictError(key, expected, cur[0]))
                continue
            else:
                rev += 1
                crev = cur[1]
                deleted = kind == DELETE
                if deleted:
                    value = cur[3]
                rows.append((rev, key, 0, deleted, crev, cur[0], value))
                batch[key] = (rev, crev, deleted, value)
                if want_events:
                    events.append(Event(_DEL if deleted else _PUT,
                                        KeyValue(key, value, crev, rev),
                                        KeyValue(key, cur[3], crev, cur[0])))
            outcomes.append(rev)
        if rows:
            conn.executemany(sql.INSERT, rows)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    result.revision = rev
    result.applied = len(rows)
    return result


def execute_transaction(conn: sqlite3.Connection,
                        statements: list[tuple[str, tuple[object, ...]]]) -> None:
    """Run ``statements`` in one transaction (compaction, metadata)."""
    try:
        conn.execute("BEGIN IMMEDIATE")
        for statement, params in statements:
            conn.execute(statement, params)
        conn.execute("COMMIT")
    except sqlite3.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise StorageError(f"sqlite: {exc}") from exc


__all__ = [
    "CREATE",
    "DELETE",
    "UPDATE",
    "BatchResult",
    "Write",
    "apply_batch",
    "execute_transaction",
]
