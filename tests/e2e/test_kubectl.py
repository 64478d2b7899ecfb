"""The real kubectl against a real ``kubegc serve``: every command of kubectl-protocol.md."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import KUBECTL, Server, eventually, write

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {{app: web}}
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:{tag}
        ports:
        - containerPort: 80
"""

pytestmark = pytest.mark.kubectl


def test_version(server: Server) -> None:
    out = server.kubectl("version", "-o", "json").stdout
    assert json.loads(out)["serverVersion"]["minor"] == "33"


def test_api_resources(server: Server) -> None:
    out = server.kubectl("api-resources").stdout
    for line in ("pods", "deployments", "namespaces", "deletionrecords"):
        assert line in out
    assert "deploy" in out and "apps/v1" in out


def test_get_namespaces_and_all(server: Server, ns: str) -> None:
    out = server.kubectl("get", "namespaces").stdout
    assert "default" in out and "Active" in out and "STATUS" in out
    out = server.kubectl("get", "all", "-n", "default").stdout
    assert "service/kubernetes" in out


def test_get_output_formats(server: Server, ns: str) -> None:
    server.kubectl("create", "configmap", "c1", "--from-literal=a=b", "-n", ns)
    as_json = json.loads(server.kubectl("get", "cm", "c1", "-n", ns, "-o", "json").stdout)
    assert as_json["data"] == {"a": "b"}
    assert "a: b" in server.kubectl("get", "cm", "c1", "-n", ns, "-o", "yaml").stdout
    names = server.kubectl("get", "cm", "-n", ns, "-o", "name").stdout.split()
    assert "configmap/c1" in names  # beside kube-root-ca.crt, the root CA publisher's
    assert all(n.startswith("configmap/") for n in names)
    listed = server.kubectl("get", "cm", "-A").stdout
    assert ns in listed and "c1" in listed
    missing = server.kubectl("get", "cm", "nope", "-n", ns, check=False)
    assert missing.returncode == 1
    assert 'Error from server (NotFound): configmaps "nope" not found' in missing.stderr


def test_create_generators(server: Server, ns: str) -> None:
    server.kubectl("create", "secret", "generic", "s1", "--from-literal=k=v", "-n", ns)
    secret = json.loads(server.kubectl("get", "secret", "s1", "-n", ns, "-o", "json").stdout)
    assert secret["data"] == {"k": "dg=="}
    server.kubectl("create", "deployment", "d1", "--image=nginx", "--replicas=2", "--port=80",
                   "-n", ns)
    deploy = json.loads(server.kubectl("get", "deploy", "d1", "-n", ns, "-o", "json").stdout)
    assert deploy["spec"]["replicas"] == 2
    assert deploy["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx"


def test_create_apply_twice_and_server_side(server: Server, ns: str, tmp_path: Path) -> None:
    path = write(tmp_path, "d.yaml", DEPLOYMENT.format(replicas=2, tag="1.25"))
    assert "deployment.apps/web created" in server.kubectl("apply", "-f", path, "-n", ns).stdout
    assert "deployment.apps/web unchanged" in server.kubectl("apply", "-f", path, "-n",
                                                             ns).stdout
    path = write(tmp_path, "d.yaml", DEPLOYMENT.format(replicas=3, tag="1.26"))
    assert "deployment.apps/web configured" in server.kubectl("apply", "-f", path, "-n",
                                                              ns).stdout
    live = json.loads(server.kubectl("get", "deploy", "web", "-n", ns, "-o", "json").stdout)
    container = live["spec"]["template"]["spec"]["containers"][0]
    assert (live["spec"]["replicas"], container["image"]) == (3, "nginx:1.26")
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    ssa = server.kubectl("apply", "--server-side", "-f", path, "-n", ns).stdout
    assert "serverside-applied" in ssa
    other = write(tmp_path, "other.yaml", DEPLOYMENT.format(replicas=2, tag="1.26").replace(
        "name: web", "name: other"))
    created = server.kubectl("create", "-f", other, "-n", ns).stdout
    assert "deployment.apps/other created" in created
    again = server.kubectl("create", "-f", other, "-n", ns, check=False)
    assert again.returncode == 1 and "AlreadyExists" in again.stderr


@pytest.mark.parametrize(("patch_type", "patch"), [
    ("merge", '{"metadata":{"labels":{"x":"1"}}}'),
    ("json", '[{"op":"add","path":"/metadata/labels","value":{"x":"1"}}]'),
    ("strategic", '{"metadata":{"labels":{"x":"1"}}}'),
])
def test_patch(server: Server, ns: str, patch_type: str, patch: str) -> None:
    server.kubectl("create", "configmap", "c1", "-n", ns)
    out = server.kubectl("patch", "cm", "c1", "-n", ns, "--type", patch_type, "-p", patch).stdout
    assert "configmap/c1 patched" in out
    again = server.kubectl("patch", "cm", "c1", "-n", ns, "--type", patch_type, "-p",
                           patch.replace('"add"', '"replace"')).stdout
    assert "patched (no change)" in again


def test_get_watch_sees_changes(server: Server, ns: str) -> None:
    """``get NAME -w`` discards the first watch event (kubectl's ``get -w`` of one object); every
    later change shows."""
    server.kubectl("create", "configmap", "w1", "-n", ns)
    proc = subprocess.Popen(
        [KUBECTL or "kubectl", "--kubeconfig", str(server.kubeconfig), "--cache-dir",
         str(server.cache_dir), "get", "cm", "w1", "-n", ns, "-w", "--output-watch-events"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        reader = LineReader(proc.stdout.fileno())
        header = reader.read_line(10)
        lines = [reader.read_line(10)]  # the initial GET
        server.wait_for_watch(f"/registry/core/configmaps/{ns}/w1")
        server.kubectl("label", "cm", "w1", "-n", ns, "x=1")
        lines.append(reader.read_line(10))
        assert header.split()[:2] == ["EVENT", "NAME"]
        assert lines[0].split()[:2] == ["ADDED", "w1"]
        assert len(lines) == 2 and lines[1].split()[:2] == ["MODIFIED", "w1"]
    finally:
        proc.kill()
        proc.wait()


class LineReader:
    """Lines from a pipe with a timeout (select + os.read, no hidden buffering)."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buffer = fd, b""

    def read_line(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.fd], [], [], remaining)[0]:
                return ""
            chunk = os.read(self.fd, 4096)
            if not chunk:
                return ""
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()


@pytest.mark.parametrize("cascade", ["background", "foreground", "orphan"])
def test_delete_each_cascade(server: Server, ns: str, cascade: str) -> None:
    server.kubectl("create", "configmap", "c1", "-n", ns)
    out = server.kubectl("delete", "cm", "c1", "-n", ns, f"--cascade={cascade}").stdout
    assert 'configmap "c1" deleted' in out
    assert server.kubectl("get", "cm", "c1", "-n", ns, check=False).returncode == 1


def test_delete_force_and_no_wait(server: Server, ns: str) -> None:
    server.kubectl("create", "configmap", "c1", "-n", ns)
    forced = server.kubectl("delete", "cm", "c1", "-n", ns, "--force", "--grace-period=0")
    assert 'configmap "c1" force deleted' in forced.stdout
    server.kubectl("create", "configmap", "c2", "-n", ns)
    out = server.kubectl("delete", "cm", "c2", "-n", ns, "--wait=false").stdout
    assert 'configmap "c2" deleted' in out


def test_delete_namespace_and_wait(server: Server) -> None:
    server.kubectl("create", "namespace", "doomed")
    server.kubectl("create", "configmap", "c1", "-n", "doomed")
    out = server.kubectl("delete", "namespace", "doomed", timeout=60).stdout
    assert 'namespace "doomed" deleted' in out
    assert server.kubectl("get", "namespace", "doomed", check=False).returncode == 1


def test_wait_for_delete(server: Server, ns: str) -> None:
    server.kubectl("create", "configmap", "c1", "-n", ns)
    server.kubectl("patch", "cm", "c1", "-n", ns, "--type", "merge", "-p",
                   '{"metadata":{"finalizers":["example.com/hold"]}}')
    server.kubectl("delete", "cm", "c1", "-n", ns, "--wait=false")
    before = server.watchers().get(f"/registry/core/configmaps/{ns}/c1", 0)
    waiter = subprocess.Popen(
        [KUBECTL or "kubectl", "--kubeconfig", str(server.kubeconfig), "--cache-dir",
         str(server.cache_dir), "wait", "--for=delete", "cm/c1", "-n", ns, "--timeout=30s"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    eventually(lambda: server.watchers().get(f"/registry/core/configmaps/{ns}/c1", 0) > before)
    server.kubectl("patch", "cm", "c1", "-n", ns, "--type", "json", "-p",
                   '[{"op":"remove","path":"/metadata/finalizers"}]')
    out, err = waiter.communicate(timeout=40)
    assert waiter.returncode == 0, err
    assert "condition met" in out


def test_describe_pod_and_events(server: Server, ns: str, tmp_path: Path) -> None:
    path = write(tmp_path, "pod.yaml", """\
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
  containers: [{name: c, image: nginx}]
""")
    server.kubectl("apply", "-f", path, "-n", ns)
    out = server.kubectl("describe", "pod", "p1", "-n", ns).stdout
    assert "Name:" in out and "p1" in out and "nginx" in out
    server.kubectl("get", "events", "-n", ns)


def test_explain(server: Server) -> None:
    out = server.kubectl("explain", "deployment.spec.replicas").stdout
    assert "replicas" in out and "integer" in out.lower()


def test_strict_field_validation(server: Server, ns: str, tmp_path: Path) -> None:
    """kubectl asks for fieldValidation=Strict: a typo in a manifest is an error, as on a
    real cluster; with --validate=false the unknown field is dropped, not stored."""
    path = write(tmp_path, "typo.yaml", DEPLOYMENT.format(replicas=1, tag="1.25").replace(
        "        image:", "        imagee: oops\n        image:"))
    failed = server.kubectl("create", "-f", path, "-n", ns, check=False)
    assert failed.returncode == 1
    assert ('strict decoding error: unknown field "spec.template.spec.containers[0].imagee"'
            in failed.stderr)
    server.kubectl("create", "-f", path, "-n", ns, "--validate=false")
    live = json.loads(server.kubectl("get", "deploy", "web", "-n", ns, "-o", "json").stdout)
    assert "imagee" not in live["spec"]["template"]["spec"]["containers"][0]


def test_force_delete_of_a_running_pod_skips_the_kubelet(server: Server, ns: str,
                                                         tmp_path: Path) -> None:
    """Seed 003's last case: --force --grace-period=0 removes the pod at the API server at
    once, even one whose processes ignore TERM with a 30 s grace period."""
    path = write(tmp_path, "pod.yaml", """\
apiVersion: v1
kind: Pod
metadata:
  name: stubborn
  annotations: {kubegc.io/ignore-term: "true"}
spec:
  terminationGracePeriodSeconds: 30
  containers: [{name: c, image: nginx}]
""")
    server.kubectl("apply", "-f", path, "-n", ns)
    eventually(lambda: server.kubectl("get", "pod", "stubborn", "-n", ns, "-o",
                                      "jsonpath={.status.phase}").stdout == "Running")
    started = time.monotonic()
    out = server.kubectl("delete", "pod", "stubborn", "-n", ns, "--force", "--grace-period=0")
    assert 'pod "stubborn" force deleted' in out.stdout
    assert time.monotonic() - started < 10  # not the 30 s grace period
    assert server.kubectl("get", "pod", "stubborn", "-n", ns, check=False).returncode == 1
