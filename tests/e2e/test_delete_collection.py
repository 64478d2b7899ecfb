"""DeleteCollection with the real kubectl and the official Python client: ``kubectl delete
--all`` and ``-l``, ``kubectl delete --raw`` of a collection (upstream's answer: the list of
what was deleted), the ``deletecollection`` verb in discovery and in RBAC, and the
namespace controller's one DeleteCollection per resource (``kubegc why`` still names it)."""

from __future__ import annotations

import json
import uuid
from typing import Any

from tests.e2e.conftest import Server, eventually
from tests.e2e.test_who_deleted import why


def _configmaps(server: Server, ns: str) -> set[str]:
    out = server.kubectl("get", "configmaps", "-n", ns, "-o", "name").stdout.split()
    return {n.split("/", 1)[1] for n in out if n != "configmap/kube-root-ca.crt"}


def _create(server: Server, ns: str, *names_and_labels: tuple[str, str]) -> None:
    for name, label in names_and_labels:
        server.kubectl("create", "configmap", name, "-n", ns, "--from-literal=a=b")
        if label:
            server.kubectl("label", "configmap", name, "-n", ns, label)


def test_kubectl_delete_all_and_by_label(server: Server, ns: str) -> None:
    _create(server, ns, ("a", "tier=web"), ("b", "tier=web"), ("c", "tier=db"))
    out = server.kubectl("delete", "configmaps", "-l", "tier=web", "-n", ns).stdout
    assert out.splitlines() == ['configmap "a" deleted', 'configmap "b" deleted']
    assert _configmaps(server, ns) == {"c"}
    server.kubectl("delete", "configmaps", "--all", "-n", ns)
    assert _configmaps(server, ns) == set()


def test_delete_of_a_collection_answers_the_list_of_what_it_deleted(
        server: Server, ns: str) -> None:
    _create(server, ns, ("x", "keep=no"), ("y", "keep=no"), ("z", "keep=yes"))
    out = server.kubectl("delete", "--raw",
                         f"/api/v1/namespaces/{ns}/configmaps?labelSelector=keep%3Dno").stdout
    answer = json.loads(out)
    assert answer["kind"] == "ConfigMapList" and answer["apiVersion"] == "v1"
    assert sorted(i["metadata"]["name"] for i in answer["items"]) == ["x", "y"]
    assert _configmaps(server, ns) == {"z"}


def test_the_python_client_deletes_a_collection(server: Server, ns: str, kube: Any) -> None:
    from kubernetes import client

    _create(server, ns, ("p", ""), ("q", ""))
    client.CoreV1Api(kube).delete_collection_namespaced_config_map(
        ns, field_selector="metadata.name=p")
    assert _configmaps(server, ns) == {"q"}


def test_discovery_lists_deletecollection_where_served(server: Server) -> None:
    doc = json.loads(server.kubectl("get", "--raw", "/api/v1").stdout)
    verbs = {r["name"]: r.get("verbs", []) for r in doc["resources"]}
    assert "deletecollection" in verbs["configmaps"]
    assert "deletecollection" not in verbs["namespaces"]  # as upstream
    out = server.kubectl("api-resources", "--verbs=deletecollection", "-o", "name").stdout
    assert "configmaps" in out.split() and "namespaces" not in out.split()


def test_a_namespace_is_emptied_with_deletecollections_each_object_recorded(
        server: Server) -> None:
    ns = "dc-" + uuid.uuid4().hex[:6]
    server.kubectl("create", "namespace", ns)
    _create(server, ns, *((f"cm{i}", "") for i in range(5)))
    server.kubectl("create", "secret", "generic", "s", "-n", ns, "--from-literal=a=b")
    server.kubectl("delete", "namespace", ns, "--wait=true", "--timeout=60s")
    eventually(lambda: server.kubectl("get", "namespace", ns, check=False).returncode != 0,
               what="the namespace gone")
    for target in ("configmap/cm3", "secret/s"):
        report = why(server, target, ns)
        deletes = [(e["deleter"], e["reason"]) for e in report["entries"]
                   if e["source"] == "DeletionRecord"]
        assert deletes == [("namespace-controller", "NamespaceDeleted")], report
        assert "deleted by namespace-controller" in report["conclusion"]


def test_each_object_of_a_deleted_collection_has_its_own_watch_event(
        server: Server, ns: str) -> None:
    """A chunk of a collection is removed in one write batch (one commit), yet a watcher
    sees one DELETED per object, each with its own resourceVersion; an object a finalizer
    holds is updated (MODIFIED, deletionTimestamp set) and stays."""
    items = [{"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": f"b{i:02d}", "namespace": ns,
                           **({"finalizers": ["example.com/hold"]} if i == 7 else {})},
              "data": {"i": str(i)}} for i in range(30)]
    server.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                         "items": items}))
    rv = json.loads(server.kubectl("get", "--raw", f"/api/v1/namespaces/{ns}/configmaps").stdout)[
        "metadata"]["resourceVersion"]
    server.kubectl("delete", "configmaps", "--all", "-n", ns, "--wait=false")
    stream = server.kubectl(
        "get", "--raw", f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={rv}"
        "&timeoutSeconds=2").stdout
    events = [json.loads(line) for line in stream.splitlines() if line.strip()]
    ours = [(e["type"], e["object"]["metadata"]) for e in events
            if e["object"]["metadata"]["name"].startswith("b")]
    deleted = [m for t, m in ours if t == "DELETED"]
    assert sorted(m["name"] for m in deleted) == [f"b{i:02d}" for i in range(30) if i != 7]
    revisions = [int(m["resourceVersion"]) for m in deleted]
    assert len(set(revisions)) == 29 and revisions == sorted(revisions)
    [(kind, held)] = [(t, m) for t, m in ours if m["name"] == "b07"]
    assert kind == "MODIFIED" and held["deletionTimestamp"]
    assert _configmaps(server, ns) == {"b07"}
    server.kubectl("patch", "configmap", "b07", "-n", ns, "--type=merge",
                   "-p", '{"metadata":{"finalizers":null}}')
