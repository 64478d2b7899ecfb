"""``DataDir``: the one map of a data directory's files (what kubegc writes there is checked
against it in tests/test_cluster.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubegc.storage import DataDir, default_data_dir


def test_every_file_of_the_data_directory() -> None:
    files = DataDir(Path("/d"))
    assert {name: str(getattr(files, name)) for name in (
        "store", "lock", "kubeconfig", "clock", "leader_identity", "pki", "ca_cert", "ca_key",
        "server_cert", "server_key", "token", "service_account_key",
        "service_account_public_key")} == {
        "store": "/d/kubegc.db", "lock": "/d/kubegc.lock", "kubeconfig": "/d/kubeconfig",
        "clock": "/d/clock.json", "leader_identity": "/d/leader-identity", "pki": "/d/pki",
        "ca_cert": "/d/pki/ca.crt", "ca_key": "/d/pki/ca.key",
        "server_cert": "/d/pki/server.crt", "server_key": "/d/pki/server.key",
        "token": "/d/pki/token", "service_account_key": "/d/pki/sa.key",
        "service_account_public_key": "/d/pki/sa.pub"}


def test_the_default_data_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KUBEGC_DATA_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_data_dir() == tmp_path / ".kubegc"
    monkeypatch.setenv("KUBEGC_DATA_DIR", "~/elsewhere")
    assert default_data_dir() == tmp_path / "elsewhere"
