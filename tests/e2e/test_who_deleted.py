"""Who deleted it, for the workload and namespace controllers' own DELETEs, against a real
``kubegc serve`` with the real kubectl: a ReplicaSet's surplus pods after a scale-down, and
everything in a deleted namespace. ``kubegc why`` names the controller and its rule, never
"a request"."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from typing import Any

from tests.e2e.conftest import Server, eventually


def why(server: Server, what: str, ns: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "kubegc.cli", "why", what, "-n", ns,
                           "-o", "json", "--kubeconfig", str(server.kubeconfig)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def pods(server: Server, ns: str) -> set[str]:
    return set(server.kubectl("get", "pods", "-n", ns, "-l", "app=web", "-o",
                              "jsonpath={.items[*].metadata.name}").stdout.split())


def test_a_scaled_down_replicasets_pods_were_deleted_by_its_controller(
        server: Server, ns: str) -> None:
    server.kubectl("create", "deployment", "web", "-n", ns, "--image=nginx", "--replicas=3")
    eventually(lambda: len(pods(server, ns)) == 3, what="3 pods")
    before = pods(server, ns)
    server.kubectl("scale", "deployment", "web", "-n", ns, "--replicas=1")
    eventually(lambda: len(pods(server, ns)) == 1, what="the surplus gone")
    gone = sorted(before - pods(server, ns))
    assert len(gone) == 2
    report = why(server, f"pod/{gone[0]}", ns)
    deletes = [e for e in report["entries"] if e["source"] == "DeletionRecord"]
    assert [(e["deleter"], e["reason"]) for e in deletes] == [
        ("replicaset-controller", "SurplusReplicas")], deletes
    assert "had 3 active pods for spec.replicas 1" in deletes[0]["message"]
    conclusion = report["conclusion"]
    assert "deleted by replicaset-controller" in conclusion, conclusion
    assert "more active pods than spec.replicas" in conclusion, conclusion
    assert "request" not in conclusion


def test_the_content_of_a_deleted_namespace_was_deleted_by_the_namespace_controller(
        server: Server) -> None:
    ns = "gone-" + uuid.uuid4().hex[:6]
    server.kubectl("create", "namespace", ns)
    server.kubectl("create", "configmap", "settings", "-n", ns, "--from-literal=a=b")
    server.kubectl("delete", "namespace", ns, "--wait=true", "--timeout=60s")
    report = why(server, "configmap/settings", ns)
    deletes = [e for e in report["entries"] if e["source"] == "DeletionRecord"]
    assert [(e["deleter"], e["reason"]) for e in deletes] == [
        ("namespace-controller", "NamespaceDeleted")], deletes
    assert f"namespace {ns} is being deleted" in deletes[0]["message"]
    conclusion = report["conclusion"]
    assert "deleted by namespace-controller" in conclusion, conclusion
    assert "request" not in conclusion
