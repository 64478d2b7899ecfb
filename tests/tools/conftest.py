"""Fixtures of the tools' tests: the lab dump read at a fixed time, and inventories of
small hand-made object lists."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kubegc.api.clock import ManualClock
from kubegc.client.dump import DumpClient
from kubegc.tools.inventory import Inventory, read_inventory

TESTDATA = Path(__file__).parent / "testdata"
LAB_DUMP = TESTDATA / "lab-dump.yaml"
#: the "now" of the lab dump and of every golden file
NOW = datetime(2026, 1, 1, 0, 10, tzinfo=UTC)
NOW_TEXT = "2026-01-01T00:10:00Z"


async def inventory_of(objects: list[dict[str, Any]], *, namespace: str = "") -> Inventory:
    return await read_inventory(DumpClient(objects), clock=ManualClock(NOW),
                                namespace=namespace, source="test")


@pytest.fixture
async def lab_inventory() -> Inventory:
    return await read_inventory(DumpClient.from_file(LAB_DUMP), clock=ManualClock(NOW),
                                source="dump lab-dump.yaml")
