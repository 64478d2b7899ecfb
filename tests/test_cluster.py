"""The composition root: where the store of a data directory is."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubegc.cluster import Cluster
from kubegc.cluster_config import ClusterConfig
from kubegc.storage import parse_storage


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
