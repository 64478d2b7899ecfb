"""What a serving kubegc keeps in its data directory beside the store and ``pki/`` (the
paths are ``kubegc.storage.DataDir``'s): the lock that makes it the directory's only
server, its leader-election identity, and the lead of its cluster clock over real time.
Read and written by the composition root (``kubegc.cluster``) alone.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

import orjson

from kubegc.api.clock import Clock, format_time
from kubegc.controllermanager.manager import new_identity
from kubegc.storage import DataDir

try:
    import fcntl
except ImportError:  # not POSIX (Windows): kubegc imports and its tools run, it does not serve
    fcntl = None  # type: ignore[assignment]


class DataDirError(RuntimeError):
    """The data directory cannot be used (the message says why and what to do)."""


class DataDirInUse(DataDirError):
    """Another kubegc process serves from the same data directory."""


class DataDirLockUnavailable(DataDirError):
    """This platform has no POSIX file locks (``fcntl``) to guard a data directory."""


def lock_data_dir(directory: Path) -> IO[str]:
    """Hold ``<data-dir>/kubegc.lock`` for the life of the process (close the handle to
    release it): two servers on one SQLite store would corrupt each other's view of the
    revisions (and kubeconfig)."""
    if fcntl is None:
        raise DataDirLockUnavailable(
            "serving from a data directory needs POSIX file locks (fcntl), which this "
            "platform lacks: kubegc serves on Linux and macOS; here run the tools "
            "(kubegc doctor, plan, tree, why, ui) against a cluster or a dump")
    handle = DataDir(directory).lock.open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "unknown"
        handle.close()
        raise DataDirInUse(f"data directory {directory} is in use by another kubegc "
                           f"(pid {holder})") from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def leader_identity(data_dir: Path | None) -> str:
    """This server's leader-election identity: the one kept in ``data_dir`` (made on first
    use), or a new one. Kept so that a server restarted on its data directory (which only
    one process may hold) renews its own Lease at once instead of waiting for it to
    expire."""
    if data_dir is None:
        return new_identity()
    path = DataDir(data_dir).leader_identity
    try:
        kept = path.read_text().strip()
    except OSError:
        kept = ""
    if kept:
        return kept
    identity = new_identity()
    _replace(path, (identity + "\n").encode())
    return identity


#: Real seconds between two saves of a scaled clock's lead.
CLOCK_SAVE_PERIOD = 1.0


def saved_clock_lead(data_dir: Path) -> float:
    """Seconds the cluster's clock was ahead of real time when it was last saved (0 when
    it never ran ahead)."""
    try:
        data = orjson.loads(DataDir(data_dir).clock.read_bytes())
        return max(0.0, float(data.get("leadSeconds") or 0.0))
    except (OSError, ValueError, TypeError, AttributeError):
        return 0.0


def save_clock(data_dir: Path, clock: Clock, time_scale: float, *, ahead: float = 0.0) -> None:
    """Write the clock's lead over real time, plus ``ahead`` seconds (an upper bound for a
    clock that keeps gaining until the next save), atomically."""
    now = clock.now()
    lead = max(0.0, (now - datetime.now(UTC)).total_seconds()) + ahead
    body = {"leadSeconds": round(lead, 3), "timeScale": time_scale,
            "clusterTime": format_time(now), "savedAt": format_time(datetime.now(UTC))}
    _replace(DataDir(data_dir).clock, orjson.dumps(body, option=orjson.OPT_INDENT_2))


def _replace(path: Path, data: bytes) -> None:
    """Write ``data`` beside ``path``, then rename it into place: a reader (or a crash)
    never sees half a file."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
