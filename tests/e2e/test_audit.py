"""kube-apiserver's audit log, written by ``kubegc serve --audit-policy-file
--audit-log-path`` and read as upstream's (``audit.k8s.io/v1`` Event lines): the real
kubectl's requests and the in-process controllers' (the garbage collector's delete)."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Server, eventually, start_server, stop_server, write

POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  resources: [{group: coordination.k8s.io, resources: [leases]}]
- level: RequestResponse
  resources: [{group: "", resources: [configmaps]}]
  omitManagedFields: true
- level: Metadata
"""

#: an audit log as a kind 1.32 cluster writes it (Metadata and Request levels)
FIXTURE = Path(__file__).parents[1] / "tools" / "testdata" / "audit-kind-1.32.log"
FIELDS = ["kind", "apiVersion", "level", "auditID", "stage", "requestURI", "verb", "user"]


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    tmp = tmp_path_factory.mktemp("audit")
    log = tmp / "logs" / "audit.log"
    server = start_server(tmp / "data", "--audit-policy-file",
                          write(tmp, "policy.yaml", POLICY), "--audit-log-path", str(log))
    try:
        yield server, log
    finally:
        stop_server(server)


def events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def find(log: Path, **match: Any) -> list[dict[str, Any]]:
    def matches(ev: dict[str, Any]) -> bool:
        for key, want in match.items():
            value: Any = ev
            for part in key.split("__"):
                value = value.get(part) if isinstance(value, dict) else None
            if value != want:
                return False
        return True
    return [ev for ev in events(log) if matches(ev)]


def test_a_users_delete_is_logged_as_upstream_writes_it(audited: tuple[Server, Path]) -> None:
    server, log = audited
    server.kubectl("create", "configmap", "audited", "-n", "default")
    server.kubectl("delete", "configmap", "audited", "-n", "default")
    deletes = eventually(lambda: find(log, verb="delete", objectRef__name="audited"))
    (ev,) = deletes
    assert list(ev)[:8] == FIELDS
    assert ev["apiVersion"] == "audit.k8s.io/v1" and ev["stage"] == "ResponseComplete"
    assert ev["level"] == "RequestResponse"
    assert ev["requestURI"].startswith("/api/v1/namespaces/default/configmaps/audited")
    assert ev["user"]["username"] == "kubegc-admin" or "system:masters" in ev["user"]["groups"]
    assert ev["userAgent"].startswith("kubectl")
    assert ev["objectRef"] == {"resource": "configmaps", "namespace": "default",
                               "name": "audited", "apiVersion": "v1"}
    assert ev["responseStatus"]["code"] == 200
    assert ev["requestObject"]["propagationPolicy"] == "Background"
    assert "managedFields" not in ev["responseObject"]["metadata"]
    assert ev["annotations"]["authorization.k8s.io/decision"] == "allow"
    assert ev["sourceIPs"] == ["127.0.0.1"]
    # RequestReceived is omitted by the policy: one event per request here
    assert not find(log, stage="RequestReceived")


def test_errors_carry_their_status(audited: tuple[Server, Path]) -> None:
    server, log = audited
    proc = server.kubectl("get", "pod", "nosuchpod", "-n", "default", check=False)
    assert proc.returncode != 0
    (ev,) = eventually(lambda: find(log, verb="get", objectRef__name="nosuchpod"))
    assert ev["level"] == "Metadata" and "requestObject" not in ev
    assert ev["responseStatus"] == {
        "metadata": {}, "status": "Failure", "message": 'pods "nosuchpod" not found',
        "reason": "NotFound", "details": {"name": "nosuchpod", "kind": "pods"}, "code": 404}


def test_impersonation_and_a_forbidden_request(audited: tuple[Server, Path]) -> None:
    server, log = audited
    proc = server.kubectl("get", "secrets", "-n", "default", "--as", "mallory", check=False)
    assert proc.returncode != 0
    (ev,) = eventually(lambda: find(log, verb="list", impersonatedUser__username="mallory"))
    assert ev["responseStatus"]["code"] == 403
    assert ev["annotations"]["authorization.k8s.io/decision"] == "forbid"


def test_a_failed_authentication_is_one_response_started_event(
        audited: tuple[Server, Path]) -> None:
    server, log = audited
    req = urllib.request.Request(server.url + "/api/v1/namespaces?audit-probe=1",
                                 headers={"Authorization": "Bearer wrong"})
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, context=server._ssl(), timeout=10)
    assert info.value.code == 401
    (ev,) = eventually(lambda: [e for e in events(log) if "audit-probe" in e["requestURI"]])
    assert ev["stage"] == "ResponseStarted" and ev["user"] == {}
    assert ev["responseStatus"] == {"metadata": {}, "code": 401,
                                    "message": "Authentication failed, attempted: bearer"}


def test_a_watch_has_a_response_started_event(audited: tuple[Server, Path]) -> None:
    server, log = audited
    server.kubectl("get", "configmaps", "-n", "kube-public", "--watch",
                   "--request-timeout=1s", check=False)
    def kubectl_watch_stages() -> list[str]:
        return [e["stage"] for e in events(log) if e["verb"] == "watch"
                and e.get("objectRef", {}).get("namespace") == "kube-public"
                and e.get("userAgent", "").startswith("kubectl")]

    watch = eventually(lambda: "ResponseComplete" in kubectl_watch_stages()
                       and kubectl_watch_stages())
    assert watch[:2] == ["ResponseStarted", "ResponseComplete"]


def test_the_garbage_collectors_delete_is_in_the_log(audited: tuple[Server, Path]) -> None:
    server, log = audited
    server.kubectl("create", "configmap", "owner", "-n", "default")
    owner = json.loads(server.kubectl("get", "configmap", "owner", "-n", "default",
                                      "-o", "json").stdout)
    dependent = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "dependent", "namespace": "default", "ownerReferences": [{
            "apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
            "uid": owner["metadata"]["uid"]}]}}
    server.kubectl("create", "-f", "-", input=json.dumps(dependent))
    server.kubectl("delete", "configmap", "owner", "-n", "default")
    (ev,) = eventually(lambda: find(log, verb="delete", objectRef__name="dependent"),
                       timeout=60)
    assert ev["user"]["username"] == (
        "system:serviceaccount:kube-system:generic-garbage-collector")
    assert ev["userAgent"].startswith("kube-controller-manager/")
    assert ev["userAgent"].endswith(
        "/system:serviceaccount:kube-system:generic-garbage-collector")
    assert ev["requestObject"]["preconditions"]["uid"]
    assert ev["responseStatus"]["code"] == 200


def kubegc_why(server: Server, *args: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "kubegc.cli", "why", "--kubeconfig", str(server.kubeconfig),
         *args, "-o", "json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def test_why_reads_the_log_kubegc_wrote(audited: tuple[Server, Path]) -> None:
    server, log = audited
    eventually(lambda: find(log, verb="delete", objectRef__name="dependent"), timeout=60)
    report = kubegc_why(server, "configmap/dependent", "-n", "default", "--audit-log",
                        str(log))
    (deletion,) = report["auditLog"]["deletions"]
    assert deletion["user"] == "system:serviceaccount:kube-system:generic-garbage-collector"
    assert deletion["rule"].startswith("the garbage collector")
    assert "DELETE by system:serviceaccount:kube-system:generic-garbage-collector" in (
        report["conclusion"])


@pytest.mark.parametrize(("target", "namespace", "user", "said"), [
    ("replicaset/web-6d4cf56db6", "shop",
     "system:serviceaccount:kube-system:generic-garbage-collector", "the garbage collector"),
    ("deployment/web", "shop", "kubernetes-admin", "DELETE by kubernetes-admin"),
    ("job/nightly-29412345", "batch",
     "system:serviceaccount:kube-system:ttl-after-finished-controller", "TTL-after-finished"),
])
def test_why_answers_from_a_real_clusters_audit_log(audited: tuple[Server, Path],
                                                    target: str, namespace: str, user: str,
                                                    said: str) -> None:
    server, _ = audited
    report = kubegc_why(server, target, "-n", namespace, "--audit-log", str(FIXTURE))
    (deletion,) = report["auditLog"]["deletions"]
    assert deletion["user"] == user
    assert said in report["conclusion"] and "audit log" in report["conclusion"]


def test_a_delete_collection_is_a_possibility_never_the_answer(
        audited: tuple[Server, Path]) -> None:
    server, _ = audited
    report = kubegc_why(server, "configmap/settings", "-n", "shop", "--audit-log",
                        str(FIXTURE))
    assert report["auditLog"]["deletions"] == []  # the 403 deleted nothing
    (collection,) = report["auditLog"]["deleteCollections"]
    assert collection["user"] == "system:serviceaccount:kube-system:namespace-controller"
    assert "may have included it" in report["conclusion"]


def test_the_namespace_controllers_delete_collection_is_in_the_log(
        audited: tuple[Server, Path]) -> None:
    """The namespace controller empties a namespace with one DeleteCollection per resource:
    audited as upstream's (verb deletecollection, its ServiceAccount, no object name), and
    ``kubegc why`` still names the controller from its DeletionRecord."""
    server, log = audited
    server.kubectl("create", "namespace", "emptied")
    server.kubectl("create", "configmap", "inside", "-n", "emptied")
    server.kubectl("delete", "namespace", "emptied", "--wait=true", "--timeout=60s")
    (ev,) = eventually(lambda: find(log, verb="deletecollection",
                                    objectRef__namespace="emptied",
                                    objectRef__resource="configmaps"))
    assert ev["user"]["username"] == "system:serviceaccount:kube-system:namespace-controller"
    assert ev["requestURI"] == "/api/v1/namespaces/emptied/configmaps"
    assert "name" not in ev["objectRef"]
    assert sorted(i["metadata"]["name"] for i in ev["responseObject"]["items"]) == [
        "inside", "kube-root-ca.crt"]


def test_a_file_that_is_no_audit_log_is_one_line_with_the_reason(
        audited: tuple[Server, Path], tmp_path: Path) -> None:
    server, _ = audited
    bad = tmp_path / "not-audit.log"
    bad.write_text("hello\n")
    proc = subprocess.run(
        [sys.executable, "-m", "kubegc.cli", "why", "--kubeconfig", str(server.kubeconfig),
         "configmap/x", "--audit-log", str(bad)], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "holds no audit.k8s.io/v1 Event lines" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
