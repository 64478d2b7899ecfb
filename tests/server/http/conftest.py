"""Fixtures of the HTTP server's tests that need more than the HTTP layer."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from kubegc.api.clock import RealClock
from kubegc.registry import Registry
from kubegc.server import APIServer, ServingOptions
from kubegc.storage.memory import MemoryKV


@pytest.fixture
async def api_server() -> AsyncIterator[APIServer]:
    """kubegc's real API server (memory storage, no controllers) on a free port."""
    clock = RealClock()
    kv = MemoryKV()
    registry = Registry(kv, clock=clock)
    await registry.start()
    server = APIServer(registry, clock=clock, options=ServingOptions(host="127.0.0.1", port=0))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
        await registry.stop()
        await kv.close()
