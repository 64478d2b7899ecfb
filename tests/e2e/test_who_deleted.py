"""Who deleted it, for the workload and namespace controllers' own DELETEs, against a real
``kubegc serve`` with the real kubectl: a ReplicaSet's surplus pods after a scale-down, and
everything in a deleted namespace. ``kubegc why`` names the controller and its rule, never
"a request"."""

from __future__ import annotations

import json
import uuid
from typing import Any

from tests.e2e.conftest import Server, eventually


def why(server: Server, what: str, ns: str) -> dict[str, Any]:
    return server.kubegc_json("why", what, "-n", ns)


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


def plan(server: Server, what: str, ns: str) -> dict[str, str]:
    """``kubegc plan delete WHAT``: who deletes each object ("Kind/name" -> by)."""
    report = server.kubegc_json("plan", "delete", what, "-n", ns)
    return {f"{s['object']['kind']}/{s['object']['name']}": s["by"] for s in report["steps"]
            if s["action"] == "deleted"}


def _only_record(report: dict[str, Any]) -> tuple[str, str]:
    deletes = [e for e in report["entries"] if e["source"] == "DeletionRecord"]
    assert len(deletes) == 1, deletes
    return deletes[0]["deleter"], deletes[0]["reason"]


def test_a_deleted_services_endpoints_were_deleted_by_the_endpoints_controller(
        server: Server, ns: str) -> None:
    server.kubectl("create", "service", "clusterip", "api", "-n", ns, "--tcp=80:8080")
    eventually(lambda: server.kubectl("get", "endpoints", "api", "-n", ns,
                                      check=False).returncode == 0, what="its Endpoints")
    assert plan(server, "service/api", ns) == {"Service/api": "the API server (no finalizer left)",
                                               "Endpoints/api": "endpoint-controller"}
    server.kubectl("delete", "service", "api", "-n", ns)
    eventually(lambda: server.kubectl("get", "endpoints", "api", "-n", ns,
                                      check=False).returncode != 0, what="its Endpoints gone")
    report = why(server, "endpoints/api", ns)
    assert _only_record(report) == ("endpoint-controller", "ServiceDeleted")
    assert "deleted by endpoint-controller" in report["conclusion"], report["conclusion"]
    assert "the Endpoints' Service no longer exists" in report["conclusion"]


def test_a_deleted_service_accounts_token_was_deleted_by_the_token_controller(
        server: Server, ns: str) -> None:
    server.kubectl("create", "serviceaccount", "robot", "-n", ns)
    server.kubectl("create", "-n", ns, "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
        "metadata": {"name": "robot-token",
                     "annotations": {"kubernetes.io/service-account.name": "robot"}}}))
    eventually(lambda: server.kubectl(
        "get", "secret", "robot-token", "-n", ns, "-o", "jsonpath={.data.token}").stdout,
        what="the token filled in")
    assert plan(server, "serviceaccount/robot", ns) == {
        "ServiceAccount/robot": "the API server (no finalizer left)",
        "Secret/robot-token": "serviceaccount-token-controller"}
    server.kubectl("delete", "serviceaccount", "robot", "-n", ns)
    eventually(lambda: server.kubectl("get", "secret", "robot-token", "-n", ns,
                                      check=False).returncode != 0, what="the token gone")
    report = why(server, "secret/robot-token", ns)
    assert _only_record(report) == ("serviceaccount-token-controller", "ServiceAccountDeleted")
    assert "a token of a ServiceAccount that no longer exists" in report["conclusion"]


def test_a_user_deletion_is_said_to_be_a_request(server: Server, ns: str) -> None:
    server.kubectl("create", "configmap", "mine", "-n", ns)
    server.kubectl("delete", "configmap", "mine", "-n", ns)
    report = why(server, "configmap/mine", ns)
    assert not [e for e in report["entries"] if e["source"] == "DeletionRecord"]
    assert "no kubegc component recorded deleting it" in report["conclusion"]
    assert "deleted by a request of a user or of a client outside kubegc" in (
        report["conclusion"])


def test_a_gone_event_is_said_to_expire_or_be_deleted(server: Server, ns: str) -> None:
    server.kubectl("create", "-n", ns, "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": ns},
        "reason": "Test", "message": "m", "type": "Normal"}))
    server.kubectl("delete", "event", "e1", "-n", ns)
    conclusion = why(server, "event/e1", ns)["conclusion"]
    assert "Events expire (kube-apiserver --event-ttl, 1 hour by default)" in conclusion
    assert "expired or was deleted by a request" in conclusion
