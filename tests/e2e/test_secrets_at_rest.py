"""Secrets at rest: under a permissive umask, ``kubegc serve`` keeps its data directory,
store (database, WAL, shared memory), keys and token readable by its user only, writes
every secret file with that mode from its creation on, and warns when it serves beyond
loopback."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kubegc.cli import exposure_warning
from kubegc.server import tls
from tests.e2e.conftest import free_port, start_server, stop_server


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_store_keys_and_token_are_private_under_a_permissive_umask(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with umask(0):
        server = start_server(data_dir)
    try:
        status, _ = server.http("POST", "/api/v1/namespaces/default/secrets",
                                {"metadata": {"name": "s"}, "stringData": {"k": "v"}},
                                headers={"Content-Type": "application/json"})
        assert status == 201
        modes = {p.name: mode(p) for p in [data_dir, data_dir / "pki", *[
            data_dir / n for n in ("kubegc.db", "kubegc.db-wal", "kubegc.db-shm", "kubeconfig")],
            *[data_dir / "pki" / n for n in ("token", "ca.key", "server.key")]]}
    finally:
        stop_server(server)
    assert modes == {"data": 0o700, "pki": 0o700, "kubegc.db": 0o600, "kubegc.db-wal": 0o600,
                     "kubegc.db-shm": 0o600, "kubeconfig": 0o600, "token": 0o600,
                     "ca.key": 0o600, "server.key": 0o600}


def test_an_old_data_dir_readable_by_others_is_made_private(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    server = start_server(data_dir)
    stop_server(server)
    for path in (data_dir, data_dir / "pki", data_dir / "pki" / "token",
                 data_dir / "pki" / "server.key", data_dir / "kubegc.db"):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    server = start_server(data_dir)
    stop_server(server)
    assert [mode(p) for p in (data_dir, data_dir / "pki", data_dir / "pki" / "token",
                              data_dir / "pki" / "server.key", data_dir / "kubegc.db")] == [
        0o700, 0o700, 0o600, 0o600, 0o600]


def test_secret_files_are_never_written_before_being_restricted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys and token are created owner-only: nothing chmods a freshly written secret."""

    def no_chmod(*args: object, **kwargs: object) -> None:
        raise AssertionError("a secret file was written first and restricted after")

    monkeypatch.setattr(tls.os, "chmod", no_chmod)
    created: list[int] = []
    real_open = os.open

    def recording_open(path: str, flags: int, file_mode: int = 0o777) -> int:
        if flags & os.O_CREAT:
            created.append(file_mode)
        return real_open(path, flags, file_mode)

    monkeypatch.setattr(tls.os, "open", recording_open)
    with umask(0):
        tls.serving_credentials(tmp_path, ["127.0.0.1"])
    assert created == [0o600, 0o644, 0o600, 0o644, 0o600]  # CA key, cert, server's, token
    assert {p.name: mode(p) for p in (tmp_path / "pki").iterdir()} == {
        "ca.crt": 0o644, "ca.key": 0o600, "server.crt": 0o644, "server.key": 0o600,
        "token": 0o600}


def test_serving_beyond_loopback_warns_about_the_token(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubegc.cli", "serve", "--host", "0.0.0.0", "--port", str(port),
         "--data-dir", str(tmp_path), "--storage", "memory"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert line.startswith("kubegc: warning: serving on every interface, not loopback"), line
    assert str(tmp_path / "pki" / "token") in line and "full access" in line


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "127.0.0.2"])
def test_loopback_hosts_do_not_warn(host: str) -> None:
    assert exposure_warning(host, Path("t"), None) == ""
