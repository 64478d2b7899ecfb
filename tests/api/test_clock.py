"""Clocks: a scaled clock may start ahead of real time (resumed after a restart)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kubegc.api.clock import ScaledClock


def test_scaled_clock_starts_where_it_is_told() -> None:
    start = datetime.now(UTC) + timedelta(hours=2)
    clock = ScaledClock(1.0, start=start)
    assert start <= clock.now() < start + timedelta(seconds=5)


def test_scaled_clock_starts_at_real_time_by_default() -> None:
    clock = ScaledClock(100.0)
    assert abs((clock.now() - datetime.now(UTC)).total_seconds()) < 5
