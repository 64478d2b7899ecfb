"""What a new user met in a QA pass, end to end: a real ``kubegc serve``, the real kubectl
(and its plugin mechanism for ``kubectl gc``) and the tools as processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import kubegc

from .conftest import KUBECTL, Server, eventually, start_server, stop_server

#: where the kubegc under test is imported from (the plugin must run the same one)
SRC = Path(kubegc.__file__).resolve().parents[1]


def tool(server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    """``kubegc <tool> ...`` against ``server``, as a process."""
    return subprocess.run([sys.executable, "-m", "kubegc.cli", *args, "--kubeconfig",
                           str(server.kubeconfig)], capture_output=True, text=True, timeout=120)


def doctor(server: Server, *args: str) -> dict[str, Any]:
    done = tool(server, "doctor", "-o", "json", *args)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_cluster_scoped_child_of_a_namespaced_owner_is_one_finding(server: Server,
                                                                   ns: str) -> None:
    server.kubectl("create", "deployment", "web", "--image=nginx", "-n", ns)
    uid = server.kubectl("get", "deploy", "web", "-n", ns, "-o",
                         "jsonpath={.metadata.uid}").stdout
    pv = f"pv-kid-{ns}"
    server.kubectl("apply", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": pv, "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": uid}]},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": "/tmp/x"}}}))
    try:
        eventually(lambda: pv in server.kubectl(
            "get", "events", "-A", "--field-selector", "reason=OwnerRefInvalidNamespace").stdout)
        about = [f for f in doctor(server)["findings"] if f["object"]["name"] == pv]
        assert [f["kind"] for f in about] == ["ClusterScopedDependentOfNamespacedOwner"]
        assert "never deleted by the garbage collector" in " ".join(about[0]["next"])
        assert "Warning OwnerRefInvalidNamespace event" in " ".join(about[0]["facts"])
    finally:
        server.kubectl("delete", "pv", pv, "--wait=false", check=False)


@pytest.mark.parametrize("output", ["text", "json"])
def test_doctor_of_a_missing_namespace_says_so(server: Server, output: str) -> None:
    done = tool(server, "doctor", "-n", "nosuchns", "-o", output)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == ('kubegc doctor: Error from server (NotFound): namespaces "nosuchns" '
                           "not found\n")


def test_kubectl_gc_help_lists_the_tools_only(tmp_path: Path, server: Server) -> None:
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    plugin = tmp_path / "kubectl-gc"
    plugin.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, "
                      f"{str(SRC)!r})\nfrom kubegc.cli import kubectl_plugin_main\n"
                      "sys.exit(kubectl_plugin_main())\n")
    plugin.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}",
           "KUBECONFIG": str(server.kubeconfig)}

    def kubectl_gc(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([KUBECTL or "kubectl", "gc", *args], capture_output=True,
                              text=True, env=env, timeout=120)

    helped = kubectl_gc("--help")
    assert helped.returncode == 0, helped.stderr
    assert helped.stdout.startswith("usage: kubectl gc ")
    assert "{doctor,plan,tree,why}" in helped.stdout and "serve" not in helped.stdout
    assert kubectl_gc("doctor", "--help").stdout.startswith("usage: kubectl gc doctor ")
    refused = kubectl_gc("serve")
    assert refused.returncode == 2 and "invalid choice: 'serve'" in refused.stderr
    missing = kubectl_gc("doctor", "-n", "nosuchns")
    assert missing.stderr.startswith("kubectl gc doctor: Error from server (NotFound)")


def test_validation_messages_render_values_as_go_does(server: Server, ns: str) -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "bad"},
                  "spec": {"selector": {"matchLabels": {"a": "b"}},
                           "template": {"metadata": {"labels": {"a": "c"}},
                                        "spec": {"containers": [{"name": "x", "image": "y"}]}}}}
    done = server.kubectl("create", "-n", ns, "-f", "-", input=json.dumps(deployment),
                          check=False)
    assert done.returncode == 1
    assert ('spec.template.metadata.labels: Invalid value: map[string]string{"a":"c"}: '
            "`selector` does not match template `labels`") in done.stderr
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "bad", "finalizers": ["orphan", "foregroundDeletion"]}}
    done = server.kubectl("create", "-n", ns, "-f", "-", input=json.dumps(config_map),
                          check=False)
    assert ('metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: '
            "finalizer orphan and foregroundDeletion cannot be both set") in done.stderr
    assert "'" not in done.stderr.split("is invalid:")[1]  # no Python repr


def test_persistent_volume_claim_is_pending(server: Server, ns: str) -> None:
    server.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1Gi"}}}}))
    table = server.kubectl("get", "pvc", "data", "-n", ns).stdout.splitlines()
    header, row = table[0].split(), table[1].split()
    assert header[:2] == ["NAME", "STATUS"] and row[:2] == ["data", "Pending"]


def test_kubectl_explain_deletionrecords(server: Server) -> None:
    top = server.kubectl("explain", "deletionrecords").stdout
    assert "DeletionRecord is kubegc's durable record" in top
    for field in ("action", "message", "object", "owners", "propagationPolicy", "reason",
                  "time"):
        assert f"  {field}\t<" in top, field
    owners = server.kubectl("explain", "deletionrecords.owners").stdout
    assert "classification\t<string>" in owners and "waitingForDependentsDeletion" in owners
    obj = server.kubectl("explain", "deletionrecords.object.namespace").stdout
    assert "empty for a cluster-scoped object" in obj


def test_a_scaled_clock_is_resumed_after_a_restart(tmp_path: Path) -> None:
    """A --time-scale run writes timestamps ahead of real time; after a restart at normal
    speed, AGE is still sensible and the doctor still sees what was stuck."""
    data = tmp_path / "data"
    fast = start_server(data, "--time-scale", "600")
    try:
        fast.kubectl("create", "configmap", "stuck")
        fast.kubectl("patch", "configmap", "stuck", "--type=merge", "-p",
                     '{"metadata":{"finalizers":["example.com/hold"]}}')
        fast.kubectl("delete", "configmap", "stuck", "--wait=false")
        # 10 simulated minutes after the delete (1 s of real time): far ahead of real time
        eventually(lambda: [f for f in doctor(fast, "--stuck-after", "10m")["findings"]
                            if f["object"]["name"] == "stuck" and f["kind"] == "StuckDeletion"])
    finally:
        stop_server(fast)
    assert json.loads((data / "clock.json").read_text())["leadSeconds"] > 600
    normal = start_server(data)
    try:
        assert "ahead of real time" in normal.log.read_text()
        row = normal.kubectl("get", "configmap", "stuck").stdout.splitlines()[1]
        assert "<invalid>" not in row
        created = normal.kubectl("create", "configmap", "fresh").stdout
        assert created.strip() == "configmap/fresh created"
        fresh = normal.kubectl("get", "configmap", "fresh").stdout.splitlines()[1].split()
        stuck = normal.kubectl("get", "configmap", "stuck", "-o", "json").stdout
        assert fresh[-1] != "<invalid>"
        assert json.loads(stuck)["metadata"]["deletionTimestamp"]
        report = doctor(normal)
        assert [f["kind"] for f in report["findings"] if f["object"]["name"] == "stuck"] == [
            "StuckDeletion"]
        assert any("ahead of this machine's" in n for n in report["notes"])
    finally:
        stop_server(normal)
