"""The SQLite layout of ``SqliteKV`` (kine's log-structured table) and its statements.

One row per write, ``id`` = the revision. The newest row is never compacted away (only
superseded rows and tombstones below the compact revision are), so ``MAX(id)`` is the
current revision. Databases created before this was noticed declare ``id`` AUTOINCREMENT
and keep it in ``sqlite_sequence``; new ones do not (SQLite then writes no
``sqlite_sequence`` page per commit: ~13% fewer WAL writes for a batch of Pods)::

    kine(id, name, created, deleted, create_revision, prev_revision, value)

* ``created`` 1 marks the row that created the key; ``deleted`` 1 a tombstone, whose
  ``value`` is the value before the deletion (the DELETE event carries it).
* ``prev_revision`` is the row this one supersedes (0: none), which lets replay attach
  ``prev_kv`` and compaction find superseded rows without scanning by name.
* The latest state of a key is its row with the highest id; it is absent if that row is a
  tombstone. Lists take ``MAX(id) GROUP BY name`` over the covering index ``(name, id)``
  with range predicates (``name >= ? AND name < ?``; never ``LIKE``, which SQLite's
  case-insensitive default keeps off the index: sqlite.org/optoverview.html#the_like_optimization).

``kine_meta`` holds ``compact_revision`` (reads below fail), ``compact_progress``
(superseded rows below it are deleted; it lags only while a compaction runs) and
``store_id`` (a random number drawn when the database is first opened: what was derived
from one store, such as the informers' caches, is not taken for another's).
May import: the standard library, ``kubegc.storage.errors`` and ``sqlite_vacuum``.
"""

from __future__ import annotations

import os
import secrets
import sqlite3

from kubegc.storage.errors import StorageError
from kubegc.storage.sqlite_vacuum import INCREMENTAL, ensure_incremental

SCHEMA = """
CREATE TABLE IF NOT EXISTS kine (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    created INTEGER NOT NULL,
    deleted INTEGER NOT NULL,
    create_revision INTEGER NOT NULL,
    prev_revision INTEGER NOT NULL,
    value BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS kine_name_id ON kine (name, id);
CREATE TABLE IF NOT EXISTS kine_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""

# (id, create_revision, deleted, value) of the newest row of a key.
LATEST = (
    "SELECT id, create_revision, deleted, value FROM kine WHERE name = ? "
    "ORDER BY id DESC LIMIT 1"
)
# (name, id, create_revision, deleted, value) of the newest row of each of the keys in
# the IN list (keys without rows yield nothing); see ``latest_many``.
LATEST_MANY = (
    "SELECT k.name, k.id, k.create_revision, k.deleted, k.value FROM kine AS k WHERE k.id IN "
    "(SELECT MAX(id) FROM kine WHERE name IN ({}) GROUP BY name)"
)
LATEST_AT = (
    "SELECT id, create_revision, deleted, value FROM kine WHERE name = ? AND id <= ? "
    "ORDER BY id DESC LIMIT 1"
)
INSERT = (
    "INSERT INTO kine (id, name, created, deleted, create_revision, prev_revision, value) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
# (name, value, create_revision, id, deleted) of the newest row of each key in [lo, hi),
# at most LIMIT keys (-1: all) in name order. Tombstones are returned (and skipped by the
# caller) so that a short page tells the caller the range is exhausted.
# ``_AT``: as of revision ``?`` (after lo and hi); ``_SUFFIX``: of the keys ending with a
# suffix (``substr(name, -len) = suffix``, two parameters before the limit), which the
# grouping finds in the covering index (name, id): no other key's row nor value is read.
def _list_rows(*, at: bool, suffix: bool) -> str:
    return ("SELECT kv.name, kv.value, kv.create_revision, kv.id, kv.deleted FROM "
            "(SELECT MAX(id) AS id FROM kine WHERE name >= ? AND name < ? "
            + ("AND id <= ? " if at else "") + ("AND substr(name, ?) = ? " if suffix else "")
            + "GROUP BY name ORDER BY name LIMIT ?) AS m JOIN kine AS kv ON kv.id = m.id")


LIST_LATEST = _list_rows(at=False, suffix=False)
LIST_AT = _list_rows(at=True, suffix=False)
LIST_LATEST_SUFFIX = _list_rows(at=False, suffix=True)
LIST_AT_SUFFIX = _list_rows(at=True, suffix=True)
# The log for watch catch-up, with the superseded row's id and value for prev_kv. The
# unary ``+`` keeps the planner on the primary key (callers read at most 1000 ids).
LOG = (
    "SELECT kv.id, kv.name, kv.created, kv.deleted, kv.create_revision, kv.prev_revision, "
    "kv.value, p.id, p.value FROM kine AS kv LEFT JOIN kine AS p ON p.id = kv.prev_revision "
    "WHERE kv.id >= ? AND kv.id <= ? AND +kv.name >= ? AND +kv.name < ? ORDER BY kv.id"
)
# Compaction of the rows superseded by the writes in (lo, hi], and of tombstones in
# [lo, hi) (the caller caps hi at the compact revision).
DELETE_SUPERSEDED = (
    "DELETE FROM kine WHERE id IN "
    "(SELECT prev_revision FROM kine WHERE id > ? AND id <= ? AND prev_revision > 0)"
)
DELETE_TOMBSTONES = "DELETE FROM kine WHERE id >= ? AND id < ? AND deleted = 1"
SET_META = "INSERT OR REPLACE INTO kine_meta (name, value) VALUES (?, ?)"
SET_STORE_ID = "INSERT OR IGNORE INTO kine_meta (name, value) VALUES ('store_id', ?)"

SYNCHRONOUS_MODES = ("FULL", "NORMAL", "EXTRA")
#: Page size of databases kubegc creates.
PAGE_SIZE = 8192
#: Bytes of the database file SQLite reads through a memory map.
MMAP_SIZE = 1 << 30


#: The store holds every Secret's value: readable by its owner only.
PRIVATE_MODE = 0o600


def make_private(path: str) -> None:
    """Create the database file owner-only before SQLite opens it (SQLite gives its ``-wal``
    and ``-shm`` files the database file's permissions), and take group and other access
    away from the files of a store made before kubegc did this."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_MODE))
    except FileExistsError:
        pass
    except OSError as exc:
        raise StorageError(f"sqlite: cannot open {path}: {exc}") from exc
    for name in (path, f"{path}-wal", f"{path}-shm"):
        try:
            if os.stat(name).st_mode & 0o077:
                os.chmod(name, PRIVATE_MODE)
        except FileNotFoundError:
            pass


def connect(path: str, synchronous: str) -> sqlite3.Connection:
    """Open (creating if needed) the database in WAL mode with explicit transactions.
    ``ValueError`` for an unknown ``synchronous``; ``StorageError`` if it cannot be opened
    (``":memory:"`` works, without durability)."""
    if synchronous.upper() not in SYNCHRONOUS_MODES:
        raise ValueError(f"synchronous must be one of {SYNCHRONOUS_MODES}, not {synchronous!r}")
    if path != ":memory:":
        make_private(path)
    try:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                               cached_statements=64)
    except sqlite3.Error as exc:
        raise StorageError(f"sqlite: cannot open {path}: {exc}") from exc
    try:
        # 8 KiB pages for a new database (an existing one keeps its size): stored objects
        # are 1-4 KiB, and with 4 KiB pages most rows fill a page of their own. Measured
        # here: inserting batches of 3.4 KiB Pods costs ~15% less CPU, raw CAS deletes run
        # ~15% faster (bench/bench_gc.py's baseline).
        conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
        # Before WAL mode writes the file's header: a new database is created with
        # incremental auto-vacuum (``sqlite_vacuum``); an old one is converted below.
        conn.execute(f"PRAGMA auto_vacuum={INCREMENTAL}")
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode not in ("wal", "memory"):
            raise StorageError(f"sqlite: {path}: WAL mode unavailable (journal_mode={mode})")
        conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
        conn.execute("PRAGMA busy_timeout=5000")
        conn.execute("PRAGMA cache_size=-32768")  # 32 MiB of page cache (default 2 MiB)
        # Read the database file through a memory map (up to 1 GiB of address space, no
        # memory of its own): no pread and no copy per page read. Point gets on a
        # 200k-key store: ~25% less CPU here.
        conn.execute(f"PRAGMA mmap_size={MMAP_SIZE}")
        conn.execute("PRAGMA journal_size_limit=67108864")  # truncate the WAL to 64 MiB
        conn.executescript(SCHEMA)
        conn.execute(SET_STORE_ID, (secrets.randbits(62) + 1,))
        ensure_incremental(conn, path)
    except sqlite3.Error as exc:
        conn.close()
        raise StorageError(f"sqlite: cannot open {path}: {exc}") from exc
    except BaseException:
        conn.close()
        raise
    return conn


def load_revisions(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """(current revision, compact revision, compact progress) as persisted."""
    current = conn.execute("SELECT MAX(id) FROM kine").fetchone()[0] or 0
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").fetchone():
        row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'kine'").fetchone()
        current = max(current, int(row[0]) if row else 0)
    meta = dict(conn.execute("SELECT name, value FROM kine_meta").fetchall())
    compact = int(meta.get("compact_revision", 0))
    return max(current, compact), compact, int(meta.get("compact_progress", compact))


def load_store_id(conn: sqlite3.Connection) -> int:
    """The database's ``store_id`` (see the module doc)."""
    row = conn.execute("SELECT value FROM kine_meta WHERE name = 'store_id'").fetchone()
    return int(row[0]) if row else 0
