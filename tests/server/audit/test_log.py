"""The log backend's line formats and its lumberjack rotation."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from kubegc.api.auth import UserInfo
from kubegc.server.audit.event import Event
from kubegc.server.audit.log import MEGABYTE, LogBackend, LogOptions
from kubegc.server.audit.policy import Level, Stage

WHEN = datetime(2026, 12, 6, 16, 9, 56, 123400, tzinfo=UTC)


def event(n: int = 0) -> Event:
    return Event(level=Level.METADATA, audit_id=f"id-{n}", request_uri="/api/v1/pods?a=<b>",
                 verb="list", received=WHEN, user=UserInfo("alice", groups=("g",)),
                 source_ips=("10.0.0.1",), user_agent="ua", stage=Stage.RESPONSE_COMPLETE,
                 stage_time=WHEN + timedelta(milliseconds=5),
                 response_status={"metadata": {}, "code": 200})


def test_json_lines_are_gos_encoding(tmp_path: Path) -> None:
    line = event().json_line()
    assert line.endswith(b"}\n") and b"\\u003cb\\u003e" in line  # HTML escaped, as Go
    doc = json.loads(line)
    assert doc["requestReceivedTimestamp"] == "2026-12-06T16:09:56.123400Z"
    assert doc["stageTimestamp"] == "2026-12-06T16:09:56.128400Z"
    assert doc["user"] == {"username": "alice", "groups": ["g"]}


def test_legacy_lines_are_audit_event_string() -> None:
    assert event().legacy_line().decode() == (
        '2026-12-06T16:09:56.1234Z AUDIT: id="id-0" stage="ResponseComplete" '
        'ip="10.0.0.1" method="list" user="alice" groups="\\"g\\"" as="<self>" '
        'asgroups="<lookup>" user-agent="ua" namespace="<none>" '
        'uri="/api/v1/pods?a=<b>" response="200"\n')


def test_the_log_rotates_past_its_size_and_keeps_maxbackup(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    times = iter(WHEN + timedelta(seconds=i) for i in range(100))
    backend = LogBackend(LogOptions(path=str(path), max_size=1, max_backups=2),
                         now=lambda: next(times))
    line = len(event().json_line())
    for n in range(3 * MEGABYTE // line + 10):
        backend.process(event(n))
    backend.close()
    backups = sorted(p.name for p in backend.backups())
    assert backups == ["audit-2026-12-06T16-09-57.123.log", "audit-2026-12-06T16-09-58.123.log"]
    assert path.stat().st_size <= MEGABYTE and oct(path.stat().st_mode & 0o777) == "0o600"
    assert all(json.loads(x) for x in path.read_text().splitlines())
