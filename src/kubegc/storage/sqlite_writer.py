"""The group commit of ``SqliteKV``: deciding a batch of queued writes and writing it.

``latest_rows`` looks up the committed rows a batch's writes check against, all at once;
``plan_batch`` decides every write of a batch in arrival order (the CAS and existence
checks, against the committed rows and the batch's own earlier writes), assigns revisions
and builds the rows and the events; ``write_rows`` inserts the rows in ONE transaction, as
multi-row ``INSERT`` statements (a batch of Pods is a handful of statements, not one per
row). Both run on the event loop thread, one right after the other (``SqliteKV._flush``).
May import: the standard library, ``kubegc.storage`` errors, kv types and schema.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field

from kubegc.storage import sqlite_schema as sql
from kubegc.storage.errors import ConflictError, KeyExistsError, KeyNotFoundError, StorageError
from kubegc.storage.kv import Event, EventType, KeyValue

CREATE, UPDATE, DELETE = 0, 1, 2
_PUT, _DEL = EventType.PUT, EventType.DELETE

#: One queued write: (kind, key, value, expected mod revision).
Write = tuple[int, str, bytes, int]
#: The newest row of a key: (id, create_revision, deleted, value).
Row = tuple[int, int, int, bytes]
#: A row to insert: (id, name, created, deleted, create_revision, prev_revision, value).
NewRow = tuple[int, str, int, int, int, int, bytes]
#: Rows per INSERT statement: batches are cut into powers of two up to this, so that a
#: handful of statement shapes serve every batch size from the statement cache.
MAX_ROWS_PER_INSERT = 64


@dataclass(slots=True)
class BatchPlan:
    revision: int  # the store's revision once the batch is written
    rows: list[NewRow] = field(default_factory=list)
    outcomes: list[int | StorageError] = field(default_factory=list)  # one per write
    events: list[Event] = field(default_factory=list)  # only when asked for


def plan_batch(latest: Callable[[str], Row | None], writes: list[Write], revision: int,
               want_events: bool) -> BatchPlan:
    """Decide ``writes`` in order, each seeing the ones before it (a CAS conflict fails
    only that write). ``latest(key)`` is the newest committed row of a key."""
    plan = BatchPlan(revision)
    rev = revision
    batch: dict[str, Row] = {}  # rows written by this batch, which later writes must see
    rows, outcomes, events = plan.rows, plan.outcomes, plan.events
    for kind, key, value, expected in writes:
        cur = batch.get(key) or latest(key)
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
    plan.revision = rev
    return plan


def latest_rows(conn: sqlite3.Connection, keys: list[str]) -> dict[str, Row | None]:
    """The newest committed row of each of ``keys`` (None: the key has no row), looked up
    in statements of up to ``MAX_ROWS_PER_INSERT`` keys: for a batch of creates this is
    one statement instead of one per key (~3.5 us less per key here)."""
    found: dict[str, Row | None] = dict.fromkeys(keys)
    for i in range(0, len(keys), MAX_ROWS_PER_INSERT):
        chunk = keys[i:i + MAX_ROWS_PER_INSERT]
        n = 1 << (len(chunk) - 1).bit_length()  # padded to a power of two: few shapes
        chunk += chunk[-1:] * (n - len(chunk))
        for name, rid, crev, deleted, value in conn.execute(_latest_many(n), chunk):
            found[name] = (rid, crev, deleted, value)
    return found


def write_rows(conn: sqlite3.Connection, rows: list[NewRow]) -> None:
    """Insert ``rows`` in ONE transaction. Raises (after a rollback) when it fails: then
    none of them was written."""
    try:
        conn.execute("BEGIN IMMEDIATE")
        i = 0
        while i < len(rows):
            n = min(MAX_ROWS_PER_INSERT, 1 << ((len(rows) - i).bit_length() - 1))
            conn.execute(_insert(n), [v for row in rows[i:i + n] for v in row])
            i += n
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


_inserts: dict[int, str] = {}
_latest_manys: dict[int, str] = {}


def _latest_many(n: int) -> str:
    statement = _latest_manys.get(n)
    if statement is None:
        statement = _latest_manys[n] = sql.LATEST_MANY.format(", ".join("?" * n))
    return statement


def _insert(n: int) -> str:
    statement = _inserts.get(n)
    if statement is None:
        statement = _inserts[n] = sql.INSERT + ", (?, ?, ?, ?, ?, ?, ?)" * (n - 1)
    return statement


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
    "MAX_ROWS_PER_INSERT",
    "UPDATE",
    "BatchPlan",
    "NewRow",
    "Row",
    "Write",
    "execute_transaction",
    "latest_rows",
    "plan_batch",
    "write_rows",
]
