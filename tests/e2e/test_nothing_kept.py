"""Nothing kept for what is gone (issue 27): on a real ``kubegc serve`` (SQLite), objects
created and then deleted leave a database file that shrinks back once a compaction window
has passed (incremental vacuum after compaction)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kubegc.storage import DataDir
from tests.e2e.conftest import Server, eventually, start_server, stop_server

OBJECTS = 1500
VALUE_BYTES = 6000


@pytest.fixture
def compacting(tmp_path: Path) -> Iterator[Server]:
    """A server compacting every second, keeping few revisions."""
    server = start_server(tmp_path / "kubegc", "--etcd-compaction-interval", "1s",
                          "--compact-min-retain", "100", "--controllers", "namespace")
    yield server
    stop_server(server)


def _store_bytes(server: Server) -> tuple[int, int]:
    """(database file, its WAL) sizes in bytes."""
    db = DataDir(server.data_dir).store
    wal = Path(f"{db}-wal")
    return db.stat().st_size, wal.stat().st_size if wal.exists() else 0


def _create(server: Server, ns: str, i: int) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"cm-{i:05d}", "namespace": ns},
            "data": {"blob": f"{i:05d}" + "x" * VALUE_BYTES}}
    status, answer = server.http("POST", f"/api/v1/namespaces/{ns}/configmaps", body,
                                 headers={"Content-Type": "application/json"})
    assert status == 201, answer


def test_the_database_file_shrinks_after_deletion_and_compaction(compacting: Server) -> None:
    server, ns = compacting, f"t-{uuid.uuid4().hex[:8]}"
    server.kubectl("create", "namespace", ns)
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda i: _create(server, ns, i), range(OBJECTS)))
    db, wal = _store_bytes(server)
    full = db + wal
    assert full > OBJECTS * VALUE_BYTES
    status, body = server.http("DELETE", f"/api/v1/namespaces/{ns}/configmaps", timeout=120)
    assert status == 200, body
    status, body = server.http("GET", f"/api/v1/namespaces/{ns}/configmaps?limit=2")
    assert status == 200 and json.loads(body)["items"] == []

    def shrunk() -> int | None:
        size = _store_bytes(server)[0]
        return size if size < full / 4 else None

    eventually(shrunk, timeout=60, interval=0.2,
               what=f"database file below a quarter of {full:,} bytes")
