"""Giving the space of compacted rows back to the file system (``SqliteKV``'s database
shrinks after deletions; k3s users learned otherwise with ``state.db`` files of many GB
that only an offline ``VACUUM`` shrank: k3s-io/k3s#1575, k3s-io/kine#607).

SQLite keeps the pages of deleted rows on its freelist and the file keeps its size.
kubegc's databases use ``auto_vacuum=INCREMENTAL``: ``PRAGMA incremental_vacuum(N)``
moves up to N pages from the end of the file into free ones and truncates the file (at the
next WAL checkpoint). ``vacuum_step`` does that in one short transaction of at most
``VACUUM_STEP_PAGES`` pages; ``SqliteKV.compact`` runs steps, yielding to the event loop
between them, until the freelist is empty, so writers wait at most one step.

``auto_vacuum`` can only be chosen before the first table is created; a database made
before kubegc chose it is converted once, when opened, by a ``VACUUM``
(``ensure_incremental``: it rewrites the file, as long as copying it takes).
May import: the standard library and ``kubegc.storage.errors``.
"""

from __future__ import annotations

import logging
import sqlite3
import time

from kubegc.storage.errors import StorageError

log = logging.getLogger(__name__)

#: ``PRAGMA auto_vacuum`` value of INCREMENTAL.
INCREMENTAL = 2
#: Pages one vacuum step frees at most (8 MiB of 8 KiB pages): measured here, a step of
#: 1,024 pages took ~20 ms, commit included, the pause a writer may see.
VACUUM_STEP_PAGES = 1024


def free_pages(conn: sqlite3.Connection) -> int:
    """Pages on the database's freelist (space the file could give back)."""
    return int(conn.execute("PRAGMA freelist_count").fetchone()[0])


def vacuum_step(conn: sqlite3.Connection, pages: int = VACUUM_STEP_PAGES) -> int:
    """Give back up to ``pages`` free pages in one transaction; return the free pages left.
    A database without incremental auto-vacuum is left as it is."""
    if int(conn.execute("PRAGMA auto_vacuum").fetchone()[0]) != INCREMENTAL:
        return free_pages(conn)
    try:
        # executescript steps the pragma to its end; ``execute`` steps a statement without
        # result columns once, which frees one page
        conn.executescript(f"BEGIN IMMEDIATE; PRAGMA incremental_vacuum({int(pages)}); COMMIT;")
    except sqlite3.Error as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise StorageError(f"sqlite: incremental vacuum: {exc}") from exc
    return free_pages(conn)


def checkpoint(conn: sqlite3.Connection) -> None:
    """Copy the WAL into the database file now (``PASSIVE``: never waits for a reader), so
    that the truncation of a vacuum shows in the file's size; and let go of the page cache
    (``shrink_memory``: up to ``cache_size`` of pages of what is gone; it refills as
    reads need)."""
    try:
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        conn.execute("PRAGMA shrink_memory")
    except sqlite3.Error as exc:
        raise StorageError(f"sqlite: checkpoint: {exc}") from exc


def ensure_incremental(conn: sqlite3.Connection, path: str) -> None:
    """Make an existing database incrementally vacuumable: a one-time ``VACUUM`` of a
    database created before kubegc set ``auto_vacuum`` (the caller set the pragma before
    creating any table, so a new database already has it)."""
    if int(conn.execute("PRAGMA auto_vacuum").fetchone()[0]) == INCREMENTAL:
        return
    started = time.monotonic()
    conn.execute(f"PRAGMA auto_vacuum={INCREMENTAL}")
    conn.execute("VACUUM")
    log.info("sqlite: %s converted to incremental auto-vacuum in %.1f s", path,
             time.monotonic() - started)


__all__ = ["INCREMENTAL", "VACUUM_STEP_PAGES", "checkpoint", "ensure_incremental",
           "free_pages", "vacuum_step"]
