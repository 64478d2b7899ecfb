"""The request log's keeping (``server.faults.requestlog.RequestLog``), in process: the
newest ``capacity`` writes exactly, whatever their strings hold, across the packing of
chunks; tests/e2e/test_faults.py and tests/testing/test_faults.py read it over HTTP."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kubegc.api.auth import Attributes, UserInfo
from kubegc.server.faults.requestlog import RequestLog, entry

T0 = datetime(2026, 12, 7, 4, 30, 0, 123456, tzinfo=UTC)


def write(log: RequestLog, i: int, *, name: str = "", agent: str = "kubectl/v1.33",
          user: str = "alice", fault: str | None = None) -> None:
    attrs = Attributes(user=UserInfo(name=user), verb="create", resource="configmaps",
                       api_version="v1", namespace="ns")
    log.append(entry(T0 + timedelta(microseconds=i), attrs, agent, "m", 201, fault,
                     name or f"cm-{i}"))


@pytest.mark.parametrize("writes", [0, 5, 9, 10, 11, 36, 100])
def test_the_newest_capacity_writes_oldest_first(writes: int) -> None:
    log = RequestLog(capacity=10, chunk=4)
    for i in range(writes):
        write(log, i)
    names = [doc["name"] for doc in log.select()]
    assert names == [f"cm-{i}" for i in range(max(0, writes - 10), writes)]
    assert len(log) == len(names)


def test_a_packed_write_reads_back_as_written() -> None:
    log = RequestLog(capacity=10, chunk=2)
    write(log, 0, name="naïve-☃", agent="ua \U0001f600", user="system:serviceaccount:a:b",
          fault="3")
    write(log, 1)
    write(log, 2)  # the first two packed, this one as built
    first, second, third = log.select()
    assert first == {
        "time": "2026-12-07T04:30:00.123456Z", "user": "system:serviceaccount:a:b",
        "userAgent": "ua \U0001f600", "verb": "create", "group": "", "resource": "configmaps",
        "subresource": "", "namespace": "ns", "name": "naïve-☃", "fieldManager": "m",
        "code": 201, "fault": "3"}
    assert (second["time"], second["fault"]) == ("2026-12-07T04:30:00.123457Z", None)
    assert third["name"] == "cm-2"


def test_strings_holding_the_separators_are_kept_whole() -> None:
    log = RequestLog(capacity=10, chunk=2)
    write(log, 0, name="a\x1fb\x1ec")
    write(log, 1, agent="\x1e")
    write(log, 2)
    assert [(d["name"], d["userAgent"]) for d in log.select()] == [
        ("a\x1fb\x1ec", "kubectl/v1.33"), ("cm-1", "\x1e"), ("cm-2", "kubectl/v1.33")]


def test_select_by_user_and_since() -> None:
    log = RequestLog(capacity=100, chunk=3)
    for i in range(10):
        write(log, i, user="alice" if i % 2 else "bob")
    since = T0 + timedelta(microseconds=6)
    assert [d["name"] for d in log.select(user="alice", since=since)] == ["cm-7", "cm-9"]
    assert [d["name"] for d in log.select(since=since)] == ["cm-6", "cm-7", "cm-8", "cm-9"]
