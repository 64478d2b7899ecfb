"""End-to-end fixtures: a real ``kubegc serve`` process, the real kubectl, the official
Python client. One server per test session (fast); each test works in its own namespace."""

from __future__ import annotations

import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kubegc.storage import DataDir

KUBECTL = shutil.which("kubectl")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    url: str
    data_dir: Path
    kubeconfig: Path
    cache_dir: Path
    token: str
    ca_file: Path
    log: Path

    def _ssl(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_file))

    def http(self, method: str, path: str, body: Any = None, *,
             headers: dict[str, str] | None = None, timeout: float = 30) -> tuple[int, bytes]:
        data = None if body is None else (body if isinstance(body, bytes) else
                                          json.dumps(body).encode())
        req = urllib.request.Request(self.url + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with urllib.request.urlopen(req, context=self._ssl(), timeout=timeout) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def settle(self, timeout: float = 60) -> None:
        status, body = self.http("GET", f"/debug/kubegc/settle?timeout={timeout}",
                                 timeout=timeout + 5)
        if status != 200:
            raise AssertionError(f"server did not settle: {status} {body!r}")

    def watchers(self) -> dict[str, int]:
        status, body = self.http("GET", "/debug/kubegc/watchers")
        if status != 200:
            raise AssertionError(f"watchers endpoint failed: {status} {body!r}")
        result: dict[str, int] = json.loads(body)
        return result

    def wait_for_watch(self, key: str, *, timeout: float = 30) -> None:
        """Block until some client watches exactly ``key`` (a storage key such as
        ``/registry/core/configmaps/ns/name``: a single-object watch) — so a test can change
        the object knowing the watcher will see it."""
        eventually(lambda: self.watchers().get(key, 0) > 0, timeout=timeout)

    def kubectl(self, *args: str, check: bool = True, input: str | None = None,
                binary: str | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        exe = binary or KUBECTL
        if exe is None:
            pytest.skip("kubectl is not installed")
        cmd = [exe, "--kubeconfig", str(self.kubeconfig), "--cache-dir", str(self.cache_dir),
               *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, input=input, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n"
                f"{proc.stderr}\n--- server log tail ---\n{self.log_tail()}")
        return proc

    def kubegc_json(self, *args: str, any_exit: bool = False) -> dict[str, Any]:
        """``kubegc ARGS -o json`` against this server, parsed (a tool: doctor, why, plan,
        tree); it must exit 0 unless ``any_exit`` (``doctor --fail-on`` exits 3)."""
        done = subprocess.run([sys.executable, "-m", "kubegc.cli", *args, "-o", "json",
                               "--kubeconfig", str(self.kubeconfig)],
                              capture_output=True, text=True, timeout=120)
        assert done.stdout if any_exit else done.returncode == 0, done.stderr
        report: dict[str, Any] = json.loads(done.stdout)
        return report

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text().splitlines()[-lines:])
        except OSError:
            return ""


def start_server(data_dir: Path, *extra: str) -> Server:
    port = free_port()
    log = data_dir / "serve.log"
    data_dir.mkdir(parents=True, exist_ok=True)
    out = log.open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "kubegc.cli", "serve", "--port", str(port), "--data-dir",
         str(data_dir), "--gc-sync-period", "2", *extra],
        stdout=out, stderr=subprocess.STDOUT)
    files = DataDir(data_dir)
    ca_file = files.ca_cert
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"kubegc serve exited:\n{log.read_text()}")
        if ca_file.exists() and files.kubeconfig.exists():
            server = Server(process, f"https://127.0.0.1:{port}", data_dir,
                            files.kubeconfig, data_dir / "kubectl-cache",
                            files.token.read_text().strip(), ca_file, log)
            try:
                status, _ = server.http("GET", "/readyz", timeout=2)
                if status == 200:
                    return server
            except (OSError, ssl.SSLError):
                pass
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"kubegc serve did not become ready:\n{log.read_text()}")


def stop_server(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()


def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A ``kubegc serve`` for as long as a fixture's scope lasts."""
    s = start_server(tmp_path_factory.mktemp("kubegc"))
    yield s
    stop_server(s)


server = pytest.fixture(scope="session", name="server")(serve)


@pytest.fixture
def ns(server: Server) -> Iterator[str]:
    name = f"t-{uuid.uuid4().hex[:8]}"
    server.kubectl("create", "namespace", name)
    yield name
    server.kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture
def kube(server: Server) -> Iterator[Any]:
    """The official ``kubernetes`` Python client, configured from kubegc's kubeconfig."""
    from kubernetes import client, config

    configuration = client.Configuration()
    config.load_kube_config(config_file=str(server.kubeconfig),
                            client_configuration=configuration)
    api = client.ApiClient(configuration)
    yield api
    api.close()


def eventually(fn: Callable[[], Any], *, timeout: float = 30, interval: float = 0.05,
               what: str = "condition") -> Any:
    """Poll ``fn`` until it returns a truthy value (returned) or raise after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"{what} not met within {timeout}s (last: {last!r})")


def write(tmp: Path, name: str, text: str) -> str:
    path = tmp / name
    path.write_text(text)
    return str(path)


os.environ.setdefault("KUBECTL_EXTERNAL_DIFF", "diff")
