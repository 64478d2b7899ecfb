"""The composition root: where the store of a data directory is, and what it keeps there."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubegc.cluster import Cluster
from kubegc.cluster_config import ClusterConfig
from kubegc.component.config import ControllerManagerConfiguration
from kubegc.storage import DataDir, parse_storage


def test_a_relative_data_directory_keeps_its_store_inside_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cluster = Cluster(ClusterConfig(data_dir=Path("data")))
    assert str(cluster.storage) == f"sqlite://{tmp_path / 'data' / 'kubegc.db'}"
    assert cluster.clock_file == Path("data") / "clock.json"


@pytest.mark.parametrize("storage", ["memory", "sqlite"])
def test_nothing_is_kept_of_a_store_that_keeps_nothing(storage: str) -> None:
    cluster = Cluster(ClusterConfig(storage=parse_storage(storage),
                                    data_dir=Path("data") if storage == "memory" else None))
    assert str(cluster.storage) == "memory"
    assert cluster.clock_file is None


async def test_what_a_cluster_writes_in_its_data_directory_is_what_data_dir_names(
        tmp_path: Path) -> None:
    """Every file ``kubegc serve`` leaves there (TLS, a scaled clock, a durable store) is
    one ``DataDir`` names, so that one module is the map of the directory."""
    cluster = Cluster(ClusterConfig(
        data_dir=tmp_path, port=0, time_scale=2.0,
        controller_manager=ControllerManagerConfiguration(controllers=[])))
    await cluster.start()
    await cluster.stop()
    files = DataDir(tmp_path)
    named = {files.store, files.lock, files.kubeconfig, files.clock, files.leader_identity,
             files.pki, files.ca_cert, files.ca_key, files.server_cert, files.server_key,
             files.token, files.service_account_key, files.service_account_public_key,
             files.front_proxy_ca_cert, files.front_proxy_ca_key, files.front_proxy_client_cert,
             files.front_proxy_client_key, files.informer_caches}
    written = set(tmp_path.rglob("*"))
    sqlite_own = {p for p in written if p.name in ("kubegc.db-wal", "kubegc.db-shm")}
    assert written - sqlite_own == named
