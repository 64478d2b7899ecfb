"""The value types of the command lines' flags: durations and the times ``--now`` takes."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta

import pytest

from kubegc.tools.flags import parse_duration, parse_when, port

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("text", "seconds"), [
    ("90", 90), ("30s", 30), ("5m", 300), ("1h30m", 5400), ("1h 30m", 5400), ("1.5h", 5400),
    ("2 days", 172800), ("1w", 604800), ("10 sec", 10)])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5 parsecs", "m5", "-5m", "1h30"])
def test_not_durations(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="not a duration"):
        parse_duration(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("2026-01-01T10:00:00Z", datetime(2026, 1, 1, 10, tzinfo=UTC)),
    ("2026-01-01T12:00:00+02:00", datetime(2026, 1, 1, 10, tzinfo=UTC)),
    ("2026-01-01T10:00:00", datetime(2026, 1, 1, 10, tzinfo=UTC)),  # no zone: UTC, as before
    ("2026-01-01 10:00", datetime(2026, 1, 1, 10, tzinfo=UTC)),
    ("2026-01-01", datetime(2026, 1, 1, tzinfo=UTC)),
    ("@1767261600", datetime(2026, 1, 1, 10, tzinfo=UTC)),
    ("now", NOW), ("today", NOW), ("Yesterday", NOW - timedelta(days=1)),
    ("tomorrow", NOW + timedelta(days=1)),
    ("-5m", NOW - timedelta(minutes=5)), ("+1h30m", NOW + timedelta(minutes=90)),
    ("5 minutes ago", NOW - timedelta(minutes=5)), ("2 hours  ago", NOW - timedelta(hours=2)),
    ("in 3 days", NOW + timedelta(days=3)),
])
def test_times(text: str, expected: datetime) -> None:
    assert parse_when(text, now=NOW) == expected


@pytest.mark.parametrize("text", ["soon", "5 parsecs ago", "-", "@x", "2026-13-01"])
def test_not_times_say_what_is_accepted(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=r"use RFC 3339 .* '5 minutes ago'"):
        parse_when(text, now=NOW)


@pytest.mark.parametrize("text", ["-1", "65536", "x", "1.5"])
def test_not_ports(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="not a port"):
        port(text)
