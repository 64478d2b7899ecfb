"""``kubegc serve`` as a process: the kubeconfig it writes works as-is, SIGTERM and Ctrl-C
shut it down cleanly, and a restart on the same data directory keeps every object."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from .conftest import eventually, free_port, start_server, stop_server


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_signal_shuts_down_cleanly_and_restart_keeps_data(tmp_path: Path,
                                                          sig: signal.Signals) -> None:
    data = tmp_path / "data"
    server = start_server(data)
    try:
        server.kubectl("create", "configmap", "kept", "--from-literal=a=b")
        before = json.loads(server.kubectl("get", "cm", "kept", "-o", "json").stdout)
        server.process.send_signal(sig)
        assert server.process.wait(timeout=15) == 0
        log = server.log.read_text()
        assert "shutting down" in log
        assert re.search(r"^kubegc: ready \(\d+\.\d\d s after start\)$", log, re.M), log
    finally:
        if server.process.poll() is None:
            stop_server(server)
    again = start_server(data)
    try:
        after = json.loads(again.kubectl("get", "cm", "kept", "-o", "json").stdout)
        assert after["metadata"]["uid"] == before["metadata"]["uid"]
        assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
        assert after["data"] == {"a": "b"}
    finally:
        stop_server(again)


def test_insecure_http_serves_plain_http_without_a_token(tmp_path: Path) -> None:
    port = free_port()
    data = tmp_path / "plain"
    proc = subprocess.Popen([sys.executable, "-m", "kubegc.cli", "serve", "--insecure-http",
                             "--port", str(port), "--data-dir", str(data)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def ready() -> bool:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as r:
                    return bool(r.status == 200)
            except OSError:
                return False

        eventually(ready, timeout=30)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/namespaces",
                                    timeout=5) as resp:  # no Authorization header
            names = [i["metadata"]["name"] for i in json.loads(resp.read())["items"]]
        assert "default" in names
        out = subprocess.run(["kubectl", "--kubeconfig", str(data / "kubeconfig"),
                              "--cache-dir", str(tmp_path / "cache"), "get", "ns", "default",
                              "-o", "name"], capture_output=True, text=True, timeout=60)
        assert out.stdout.strip() == "namespace/default", out.stderr
    finally:
        proc.terminate()
        assert proc.wait(timeout=15) == 0


def test_a_second_server_on_the_same_data_dir_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "shared"
    first = start_server(data)
    try:
        kubeconfig = (data / "kubeconfig").read_text()
        second = subprocess.run(
            [sys.executable, "-m", "kubegc.cli", "serve", "--port", str(free_port()),
             "--data-dir", str(data)], capture_output=True, text=True, timeout=30)
        assert second.returncode == 1
        assert f"data directory {data} is in use by another kubegc (pid " in second.stderr
        assert (data / "kubeconfig").read_text() == kubeconfig  # untouched
        first.kubectl("create", "configmap", "still-writable")  # the first one is unharmed
    finally:
        stop_server(first)


def test_kubectl_drain_cordons_and_deletes_the_pods(tmp_path: Path) -> None:
    """kubectl drain evicts the pods through pods/eviction (its typed client's protobuf
    Eviction), as on a real cluster; none falls back to a DELETE."""
    server = start_server(tmp_path / "drain")
    try:
        server.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2")
        eventually(lambda: server.kubectl("get", "pods", "-o", "name").stdout.count("pod/") == 2)
        out = server.kubectl("drain", "kubegc-node-1", "--ignore-daemonsets", "--force",
                             "--delete-emptydir-data", "--timeout=30s", timeout=60).stdout
        assert "node/kubegc-node-1 cordoned" in out and "node/kubegc-node-1 drained" in out
        assert out.count(" evicted") == 2 and " deleted" not in out
        node = json.loads(server.kubectl("get", "node", "kubegc-node-1", "-o", "json").stdout)
        assert node["spec"]["unschedulable"] is True
    finally:
        stop_server(server)


def test_python_dash_m_kubegc_is_the_kubegc_command() -> None:
    out = subprocess.run([sys.executable, "-m", "kubegc", "--help"], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    assert out.startswith("usage: kubegc ")
    assert "serve" in out and "doctor" in out
