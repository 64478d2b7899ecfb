"""The disruption controller's arithmetic (``countHealthyPods``, the scaled values of
``getExpectedPodCount``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubegc.api.clock import format_time
from kubegc.controllers.disruption.disruption import count_healthy_pods, scaled_value

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def pod(name: str, *, ready: bool = True, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if deleting:
        meta["deletionTimestamp"] = format_time(NOW)
    return {"metadata": meta, "status": {"conditions": [
        {"type": "Ready", "status": "True" if ready else "False"}]}}


@pytest.mark.parametrize(("value", "total", "expected"), [
    (3, 10, 3), ("50%", 5, 3), ("34%", 3, 2), ("0%", 7, 0), ("100%", 4, 4)])
def test_scaled_value_rounds_up(value: Any, total: int, expected: int) -> None:
    assert scaled_value(value, total) == expected


def test_count_healthy_pods() -> None:
    pods = [pod("a"), pod("b", ready=False), pod("c", deleting=True), pod("d"), pod("e")]
    recently = format_time(NOW - timedelta(seconds=30))
    long_ago = format_time(NOW - timedelta(minutes=3))
    # d was just evicted (not counted); e's eviction is older than DeletionTimeout (counted)
    assert count_healthy_pods(pods, {"d": recently, "e": long_ago}, NOW) == 2
