"""open_kv: the storage spec syntax."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubegc.storage import KV, MemoryKV, SqliteKV, StorageError, connect_kv, open_kv


async def test_memory_spec() -> None:
    kv = open_kv("memory")
    assert isinstance(kv, MemoryKV)
    await kv.close()


@pytest.mark.parametrize(("spec", "synchronous"), [
    pytest.param("sqlite://{path}", "FULL", id="sqlite-url"),
    pytest.param("sqlite://{path}?synchronous=NORMAL", "NORMAL", id="sqlite-url-normal"),
    pytest.param("{path}", "FULL", id="bare-path"),
])
async def test_sqlite_specs(tmp_path: Path, spec: str, synchronous: str) -> None:
    path = tmp_path / "data.db"
    kv = open_kv(spec.format(path=path))
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
])
def test_bad_specs_are_rejected(spec: str) -> None:
    with pytest.raises(ValueError):
        open_kv(spec)


def test_open_kv_returns_a_kv() -> None:
    kv: KV = open_kv("memory")
    assert kv.current_revision == 0


async def test_connect_kv_opens_memory_and_sqlite_as_open_kv_does(tmp_path: Path) -> None:
    for spec in ("memory", str(tmp_path / "c.db")):
        kv = await connect_kv(spec)
        assert await kv.create("/a", b"") == 1
        await kv.close()


async def test_connect_kv_fails_fast_without_etcd() -> None:
    pytest.importorskip("aetcd")
    with pytest.raises(StorageError):
        # Port 9 (discard) is closed here: the connection is refused within the timeout.
        await connect_kv("etcd://127.0.0.1:9/x")
