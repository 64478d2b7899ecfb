"""The composition root: where the store of a data directory is."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubegc.cluster import Cluster
from kubegc.cluster_config import ClusterConfig


def test_a_relative_data_directory_keeps_its_store_inside_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    spec = Cluster(ClusterConfig(data_dir=Path("data")))._storage_spec()
    assert spec == f"sqlite:///{tmp_path / 'data' / 'kubegc.db'}"
