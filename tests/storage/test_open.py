"""open_kv: the backend a storage endpoint names (the grammar itself: test_endpoint.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubegc.storage import (
    KV,
    MemoryKV,
    SqliteKV,
    StorageEndpointError,
    StorageError,
    connect_kv,
    open_kv,
    parse_storage,
)


async def test_memory_spec() -> None:
    kv = open_kv("memory")
    assert isinstance(kv, MemoryKV)
    await kv.close()


@pytest.mark.parametrize(("spec", "synchronous"), [
    pytest.param("sqlite://{path}", "FULL", id="sqlite-url"),
    pytest.param("sqlite://{path}?synchronous=NORMAL", "NORMAL", id="sqlite-url-normal"),
    pytest.param("sqlite", "FULL", id="sqlite-in-the-data-dir"),
])
async def test_sqlite_specs(tmp_path: Path, spec: str, synchronous: str) -> None:
    path = tmp_path / "kubegc.db"
    kv = open_kv(parse_storage(spec.format(path=path)).in_data_dir(tmp_path))
    assert isinstance(kv, SqliteKV)
    assert kv.path == path
    assert kv._conn.execute("PRAGMA synchronous").fetchone()[0] == {"FULL": 2, "NORMAL": 1}[
        synchronous]
    await kv.create("/a", b"")
    await kv.close()
    assert path.exists()


async def test_etcd_spec_is_lazy_and_prefixed() -> None:
    pytest.importorskip("aetcd")
    from kubegc.storage.etcd import EtcdKV

    kv = open_kv("etcd://10.1.2.3:2390/kubegc/one/")
    assert isinstance(kv, EtcdKV)
    assert (kv.endpoint, kv.prefix) == ("http://10.1.2.3:2390", "/kubegc/one")
    await kv.close()  # never connected: nothing to do


@pytest.mark.parametrize("spec", [
    pytest.param("", id="empty"),
    pytest.param("redis://localhost", id="unknown-scheme"),
    pytest.param("sqlite://", id="sqlite-without-path"),
    pytest.param("etcd:///prefix", id="etcd-without-host"),
    pytest.param("kubegc.db", id="a-bare-path"),
])
def test_bad_specs_are_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                spec: str) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StorageEndpointError):
        open_kv(spec)
    assert list(tmp_path.iterdir()) == []


def test_sqlite_of_no_data_directory_is_not_opened() -> None:
    with pytest.raises(StorageEndpointError, match="store of a data directory"):
        open_kv("sqlite")


def test_open_kv_returns_a_kv() -> None:
    kv: KV = open_kv("memory")
    assert kv.current_revision == 0


async def test_connect_kv_opens_memory_and_sqlite_as_open_kv_does(tmp_path: Path) -> None:
    for spec in ("memory", f"sqlite://{tmp_path / 'c.db'}"):
        kv = await connect_kv(spec)
        assert await kv.create("/a", b"") == 1
        await kv.close()


async def test_connect_kv_fails_fast_without_etcd() -> None:
    pytest.importorskip("aetcd")
    with pytest.raises(StorageError):
        # Port 9 (discard) is closed here: the connection is refused within the timeout.
        await connect_kv("etcd://127.0.0.1:9/x")
