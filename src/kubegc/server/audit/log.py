"""The audit log backend (``plugin/pkg/audit/log``, ``--audit-log-*``) in its default
``blocking`` mode: each event is written as the request passes, one line per event, to a
file rotated as upstream's ``lumberjack.Logger`` rotates it: past ``--audit-log-maxsize``
megabytes (lumberjack's 100 when 0) the file is renamed ``NAME-<UTC time>.EXT`` and a new
one opened; backups beyond ``--audit-log-maxbackup`` (0: all kept) or older than
``--audit-log-maxage`` days (0: kept) are removed, ``--audit-log-compress`` gzips them.
``-`` writes to standard output.
"""

from __future__ import annotations

import gzip
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from kubegc.server.audit.event import Event

MEGABYTE = 1024 * 1024
#: lumberjack's ``defaultMaxSize`` (megabytes), used when ``--audit-log-maxsize`` is 0
DEFAULT_MAX_SIZE = 100
#: lumberjack's ``backupTimeFormat``
BACKUP_TIME_FORMAT = "%Y-%m-%dT%H-%M-%S"


@dataclass(frozen=True)
class LogOptions:
    """``AuditLogOptions``: kube-apiserver's ``--audit-log-*`` flags."""

    path: str
    max_age: int = 0  # days
    max_backups: int = 0
    max_size: int = 0  # megabytes
    format: str = "json"  # or "legacy" (cluster_config.AUDIT_LOG_FORMATS)
    compress: bool = False


class LogBackend:
    """Writes events to the log. Thread-safe (one lock around each line)."""

    def __init__(self, options: LogOptions, *,
                 now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.options = options
        self._now = now
        self._lock = threading.Lock()
        self._line: Callable[[Event], bytes] = (
            Event.legacy_line if options.format == "legacy" else Event.json_line)
        self._out: BinaryIO | None = None
        self._size = 0
        if options.path != "-":
            self._open()  # ensureLogFile: fails at start, not at the first request

    def _open(self) -> None:
        path = Path(self.options.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_APPEND | os.O_RDWR | os.O_CREAT, 0o600)
        self._out = os.fdopen(fd, "ab")
        self._size = self._out.tell()

    def process(self, event: Event) -> None:
        line = self._line(event)
        with self._lock:
            if self.options.path == "-":
                sys.stdout.buffer.write(line)
                sys.stdout.buffer.flush()
                return
            limit = (self.options.max_size or DEFAULT_MAX_SIZE) * MEGABYTE
            if self._size + len(line) > limit and self._size > 0:
                self._rotate()
            assert self._out is not None
            self._out.write(line)
            self._out.flush()
            self._size += len(line)

    def _rotate(self) -> None:
        """``lumberjack.Logger.rotate``: the current file becomes a backup."""
        assert self._out is not None
        self._out.close()
        path = Path(self.options.path)
        stamp = self._now().astimezone(UTC)
        name = (f"{path.stem}-{stamp.strftime(BACKUP_TIME_FORMAT)}."
                f"{stamp.microsecond // 1000:03d}{path.suffix}")
        os.replace(path, path.with_name(name))
        self._open()
        self._mill(path.with_name(name))

    def _mill(self, backup: Path) -> None:
        """``millRunOnce``: compress, then remove backups past the count or the age."""
        if self.options.compress:
            with backup.open("rb") as src, gzip.open(f"{backup}.gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            backup.unlink()
        backups = sorted(self.backups(), key=lambda p: p.name, reverse=True)
        doomed = set(backups[self.options.max_backups:]) if self.options.max_backups else set()
        if self.options.max_age:
            cutoff = time.time() - self.options.max_age * 86400
            doomed |= {p for p in backups if p.stat().st_mtime < cutoff}
        for p in doomed:
            p.unlink(missing_ok=True)

    def backups(self) -> list[Path]:
        """The rotated files beside the log (``oldLogFiles``)."""
        path = Path(self.options.path)
        prefix = f"{path.stem}-"
        return [p for p in path.parent.iterdir()
                if p.name.startswith(prefix) and p.name != path.name
                and (p.name.endswith(path.suffix) or p.name.endswith(f"{path.suffix}.gz"))]

    def close(self) -> None:
        with self._lock:
            if self._out is not None:
                self._out.close()
                self._out = None
