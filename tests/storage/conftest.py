"""Fixtures for the storage tests: one ``kv`` fixture per backend.

The etcd backend runs only when ``KUBEGC_TEST_ETCD`` names a running etcd
(e.g. ``http://127.0.0.1:2379``); each test gets its own key prefix there.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kubegc.storage import KV, MemoryKV, SqliteKV

ETCD_ENDPOINT = os.environ.get("KUBEGC_TEST_ETCD", "")
SKIP_ETCD = pytest.mark.skipif(
    not ETCD_ENDPOINT,
    reason="KUBEGC_TEST_ETCD is not set (start etcd and set it, e.g. http://127.0.0.1:2379)",
)

BACKENDS = [
    pytest.param("memory", id="memory"),
    pytest.param("sqlite", id="sqlite"),
    pytest.param("etcd", id="etcd", marks=[pytest.mark.etcd, SKIP_ETCD]),
]


async def make_kv(backend: str, tmp_path: Path) -> KV:
    if backend == "memory":
        return MemoryKV()
    if backend == "sqlite":
        return SqliteKV(tmp_path / "kv.db")
    from kubegc.storage.etcd import EtcdKV

    etcd = EtcdKV(ETCD_ENDPOINT, prefix=f"/kubegc-test/{uuid.uuid4().hex}")
    await etcd.open()
    return etcd


@pytest.fixture(params=BACKENDS)
async def kv(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[KV]:
    store = await make_kv(request.param, tmp_path)
    yield store
    await store.close()

