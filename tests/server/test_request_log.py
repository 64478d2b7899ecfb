"""The request log's keeping (``server.faults.requestlog.RequestLog``), in process: the
newest ``capacity`` writes, oldest first, in the wire form; tests/e2e/test_faults.py and
tests/testing/test_faults.py read it over HTTP."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kubegc.server.faults.requestlog import RequestLog

T0 = datetime(2026, 12, 7, 4, 30, 0, 123456, tzinfo=UTC)
#: the cluster clock when the log is read: its wall time 1 s after T0, monotonic 1000.0
NOW = (T0 + timedelta(seconds=1), 1000.0)


def log_of(capacity: int = 10_000) -> RequestLog:
    return RequestLog(capacity, now=lambda: NOW[0], monotonic=lambda: NOW[1])


def write(log: RequestLog, i: int, *, user: str = "alice", fault: str | None = None) -> None:
    """The i-th write, i µs after T0 (as the clock's monotonic time)."""
    log.entries.append((NOW[1] - 1 + i / 1e6, user, "kubectl/v1.33", "create", "",
                        "configmaps", "", "ns", f"cm-{i}", "m", 201, fault))


@pytest.mark.parametrize("writes", [0, 5, 10, 11, 36])
def test_the_newest_capacity_writes_oldest_first(writes: int) -> None:
    log = log_of(capacity=10)
    for i in range(writes):
        write(log, i)
    names = [doc["name"] for doc in log.select()]
    assert names == [f"cm-{i}" for i in range(max(0, writes - 10), writes)]
    assert len(log) == len(names)


def test_a_write_reads_back_in_the_wire_form_at_the_clocks_time() -> None:
    log = log_of()
    write(log, 0, user="system:serviceaccount:a:b", fault="3")
    assert list(log.select()) == [{
        "time": "2026-12-07T04:30:00.123456Z", "user": "system:serviceaccount:a:b",
        "userAgent": "kubectl/v1.33", "verb": "create", "group": "", "resource": "configmaps",
        "subresource": "", "namespace": "ns", "name": "cm-0", "fieldManager": "m",
        "code": 201, "fault": "3"}]


def test_select_by_user_and_since() -> None:
    log = log_of()
    for i in range(10):
        write(log, i, user="alice" if i % 2 else "bob")
    since = T0 + timedelta(microseconds=6)
    assert [d["name"] for d in log.select(user="alice", since=since)] == ["cm-7", "cm-9"]
    assert [d["name"] for d in log.select(since=since)] == ["cm-6", "cm-7", "cm-8", "cm-9"]
