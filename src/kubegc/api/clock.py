"""Injected time (cf. k8s.io/utils/clock).

Every component that reads the time or waits takes a ``Clock``; tests use ``ManualClock``
(time moves only when the test says so) or ``ScaledClock`` (time runs N times faster), and
nothing in kubegc calls ``time.time()`` or ``asyncio.sleep()`` with a duration directly.

Timestamps on the wire are RFC 3339 in UTC with second precision (``2026-11-30T16:20:57Z``),
as Kubernetes' ``metav1.Time``; ``MicroTime`` fields use ``format_micro_time``.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import time
from abc import abstractmethod
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    """Wall time for timestamps, monotonic time for intervals, and sleeping."""

    @abstractmethod
    def now(self) -> datetime:
        """The current wall time, timezone-aware UTC."""

    @abstractmethod
    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards."""

    @abstractmethod
    async def sleep(self, seconds: float) -> None:
        """Return after ``seconds`` of this clock's time have passed."""


class RealClock(Clock):
    def now(self) -> datetime:
        return datetime.now(UTC)

    #: the builtin itself, so that ``clock.monotonic`` costs no Python call (the request
    #: log's time of every write; bench/bench_faults.py)
    monotonic = staticmethod(time.monotonic)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class ScaledClock(Clock):
    """Time that runs ``factor`` times faster than real time (a 30 s grace period in 0.3 s
    with ``factor=100``). Wall time starts at ``start`` — by default the real time of
    construction; a later start resumes a clock that ran ahead (``kubegc.cluster``)."""

    def __init__(self, factor: float, *, start: datetime | None = None) -> None:
        if factor <= 0:
            raise ValueError("factor must be positive")
        self.factor = factor
        self._wall0 = start or datetime.now(UTC)
        self._mono0 = time.monotonic()

    def monotonic(self) -> float:
        return self._mono0 + (time.monotonic() - self._mono0) * self.factor

    def now(self) -> datetime:
        return self._wall0 + timedelta(seconds=self.monotonic() - self._mono0)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds) / self.factor)


class ManualClock(Clock):
    """Time that moves only through ``advance``/``set``; sleepers wake in deadline order.

    Ownership: the test (one task) advances; any task may sleep. Not thread-safe: use it
    from the event loop that runs the sleepers.
    """

    def __init__(self, start: datetime | None = None) -> None:
        self._wall0 = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._offset = 0.0
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def now(self) -> datetime:
        return self._wall0 + timedelta(seconds=self._offset)

    def monotonic(self) -> float:
        return self._offset

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._offset + seconds, next(self._seq), fut))
        await fut

    def advance(self, seconds: float) -> None:
        self._offset += seconds
        while self._sleepers and self._sleepers[0][0] <= self._offset:
            _, _, fut = heapq.heappop(self._sleepers)
            if not fut.done():
                fut.set_result(None)

    @property
    def next_deadline(self) -> float | None:
        """Monotonic time of the earliest sleeper, if any."""
        return self._sleepers[0][0] if self._sleepers else None


def format_time(t: datetime) -> str:
    """``metav1.Time`` wire form: RFC 3339, UTC, whole seconds."""
    second = math.floor(t.timestamp())
    last = _last_formatted[0]
    if last[0] != second:  # strftime once per second, not once per write
        last = (second, t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
        _last_formatted[0] = last  # one assignment: threads see a consistent pair
    return last[1]


_last_formatted: list[tuple[int, str]] = [(-1, "")]


def format_micro_time(t: datetime) -> str:
    """``metav1.MicroTime`` wire form: RFC 3339, UTC, microseconds."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    """Parse RFC 3339 with ``Z`` or an offset (the Python client sends ``+00:00``)."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def parse_time_or_none(value: object) -> datetime | None:
    """A wire timestamp as a datetime; None when missing or unreadable (for display code
    that must never fail on a malformed object)."""
    if not value:
        return None
    try:
        return parse_time(str(value))
    except ValueError:
        return None


def normalize_time(text: str) -> str:
    """Re-render a wire timestamp in canonical ``metav1.Time`` form."""
    return format_time(parse_time(text))
