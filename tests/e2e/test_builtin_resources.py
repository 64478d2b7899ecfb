"""Every built-in resource of a v1.33 kube-apiserver, as kubectl sees them: discovery
(``kubectl api-resources``) matches a real cluster's (a v1.32 one's, plus what 1.33 serves
by default beyond it; ``--emulated-version`` 1.32 and older: tests/e2e/test_served_apis.py);
Helm-chart style manifests of every kind apply, read back with what was sent, re-apply,
print as tables, explain, and are garbage-collected as owners."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import KUBECTL, Server, eventually, write

_FOLDER = os.path.dirname(os.path.realpath(KUBECTL)) if KUBECTL else ""
BINARIES = [(v, os.path.join(_FOLDER, f"kubectl.{v}")) for v in ("1.27", "1.32", "1.33")
            if _FOLDER and os.path.exists(os.path.join(_FOLDER, f"kubectl.{v}"))]
pytestmark = pytest.mark.skipif(len(BINARIES) < 3, reason="versioned kubectl not found")
TESTDATA = Path(__file__).parent / "testdata"

#: What a v1.32 cluster lists and kubegc does not serve: nothing (the review APIs are
#: answered, not stored).
NOT_SERVED: set[str] = set()
#: What a v1.33 cluster serves by default beyond a v1.32 one's (KEP-1880 GA)
ADDED_IN_1_33 = [
    ("ipaddresses", "ip", "networking.k8s.io/v1", "false", "IPAddress",
     "create,delete,deletecollection,get,list,patch,update,watch", ""),
    ("servicecidrs", "", "networking.k8s.io/v1", "false", "ServiceCIDR",
     "create,delete,deletecollection,get,list,patch,update,watch", ""),
]
KUBEGC_OWN = [("deletionrecords", "dr", "kubegc.io/v1", "false", "DeletionRecord",
               "create,delete,deletecollection,get,list,patch,update,watch", "")]


def _upstream_rows() -> list[tuple[str, ...]]:
    rows = []
    for line in (TESTDATA / "api-resources-v1.32.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            rows.append(tuple(line.split("\t")))
    return rows


def _parse_table(text: str) -> list[tuple[str, ...]]:
    """kubectl's column output, cut at the header's column starts."""
    header, *lines = text.splitlines()
    starts = [i for i, ch in enumerate(header) if ch != " " and (i == 0 or header[i - 1] == " ")]
    bounds = list(zip(starts, [*starts[1:], None], strict=True))
    return [tuple(line[a:b].strip() for a, b in bounds) for line in lines]


@pytest.mark.parametrize(("version", "binary"), BINARIES, ids=[v for v, _ in BINARIES])
def test_api_resources_match_a_v1_33_cluster(server: Server, tmp_path: Path, version: str,
                                              binary: str) -> None:
    out = server.kubectl("api-resources", "-o", "wide", "--cache-dir", str(tmp_path),
                         binary=binary).stdout
    expected = ([r for r in _upstream_rows() if r[0] not in NOT_SERVED] + ADDED_IN_1_33
                + KUBEGC_OWN)
    assert sorted(_parse_table(out)) == sorted(expected)


def _chart(ns: str, suffix: str) -> str:
    return (TESTDATA / "chart.yaml").read_text().replace("NAMESPACE", ns).replace(
        "SUFFIX", suffix)


def _subset(sent: Any, live: Any, path: str = "") -> list[str]:
    """Paths where ``live`` lacks or differs from what ``sent`` set."""
    if isinstance(sent, dict):
        if not isinstance(live, dict):
            return [path]
        return [p for k, v in sent.items() for p in _subset(v, live.get(k), f"{path}.{k}")]
    if isinstance(sent, list):
        if not isinstance(live, list) or len(live) != len(sent):
            return [path]
        return [p for i, (a, b) in enumerate(zip(sent, live, strict=True))
                for p in _subset(a, b, f"{path}[{i}]")]
    return [] if str(sent) == str(live) else [f"{path}: {sent!r} != {live!r}"]


@pytest.mark.parametrize(("version", "binary"), [BINARIES[0], BINARIES[-1]],
                         ids=[BINARIES[0][0], BINARIES[-1][0]])
def test_a_chart_of_every_kind_applies_and_reads_back(server: Server, tmp_path: Path,
                                                      version: str, binary: str) -> None:
    ns, suffix = f"chart-{uuid.uuid4().hex[:6]}", uuid.uuid4().hex[:6]
    server.kubectl("create", "namespace", ns)
    text = _chart(ns, suffix)
    path = write(tmp_path, "chart.yaml", text)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    first = server.kubectl("apply", "-n", ns, "-f", path, *cache, binary=binary).stdout
    docs = [d for d in yaml.safe_load_all(text) if d]
    assert first.count(" created") == len(docs), first
    again = server.kubectl("apply", "-n", ns, "-f", path, *cache, binary=binary).stdout
    assert again.count(" unchanged") + again.count(" configured") == len(docs), again
    for doc in docs:
        kind = f"{doc['kind'].lower()}.{doc['apiVersion'].split('/')[0]}" if "/" in doc[
            "apiVersion"] else doc["kind"].lower()
        live = json.loads(server.kubectl("get", "-n", ns, kind, doc["metadata"]["name"], "-o",
                                         "json", *cache, binary=binary).stdout)
        sent = {k: v for k, v in doc.items() if k != "metadata"}
        assert _subset(sent, live) == [], doc["kind"]
        table = server.kubectl("get", "-n", ns, kind, doc["metadata"]["name"], *cache,
                               binary=binary).stdout
        assert table.startswith("NAME") and doc["metadata"]["name"] in table, table
    out = server.kubectl("delete", "-n", ns, "-f", path, "--wait=false", *cache,
                         binary=binary).stdout
    assert out.count(" deleted") == len(docs), out


def test_explain_documents_the_new_kinds(server: Server, tmp_path: Path) -> None:
    cache = ["--cache-dir", str(tmp_path)]
    for binary in (BINARIES[0][1], BINARIES[-1][1]):
        out = server.kubectl("explain", "ingress.spec.rules.http.paths.pathType", *cache,
                             binary=binary).stdout
        assert "FIELD:    pathType <string>" in out or "FIELD: pathType <string>" in out, out
        out = server.kubectl("explain", "hpa.spec", "--api-version=autoscaling/v1", *cache,
                             binary=binary).stdout
        assert "targetCPUUtilizationPercentage" in out, out
    out = server.kubectl("explain", "rolebindings.roleRef", "--output=plaintext-openapiv2",
                         *cache).stdout
    assert "apiGroup" in out and "RoleRef contains information" in out, out


def test_new_kinds_are_owners_the_garbage_collector_follows(server: Server,
                                                            tmp_path: Path) -> None:
    """A Role's RoleBinding (namespaced) and a ClusterRole's ClusterRoleBinding (cluster
    scoped) go with their owner: the GC monitors the new groups, with DeleteDependents."""
    ns, suffix = f"gc-{uuid.uuid4().hex[:6]}", uuid.uuid4().hex[:6]
    server.kubectl("create", "namespace", ns)
    role = json.loads(server.kubectl("create", "role", "reader", "--verb=get",
                                     "--resource=pods", "-n", ns, "-o", "json").stdout)
    cluster_role = json.loads(server.kubectl(
        "create", "clusterrole", f"reader-{suffix}", "--verb=get", "--resource=nodes",
        "-o", "json").stdout)
    bindings = [("RoleBinding", role, ["-n", ns]), ("ClusterRoleBinding", cluster_role, [])]
    for kind, owner, scope in bindings:
        binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
                   "metadata": {"name": f"b-{suffix}", "ownerReferences": [{
                       "apiVersion": "rbac.authorization.k8s.io/v1", "kind": owner["kind"],
                       "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"]}]},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": owner["kind"],
                               "name": owner["metadata"]["name"]},
                   "subjects": [{"kind": "User", "name": "jane"}]}
        server.kubectl("create", *scope, "-f", write(tmp_path, f"{kind}.json",
                                                     json.dumps(binding)))
    server.kubectl("delete", "role", "reader", "-n", ns)
    server.kubectl("delete", "clusterrole", f"reader-{suffix}", "--cascade=foreground")
    for kind, _, scope in bindings:
        eventually(lambda kind=kind, scope=scope: server.kubectl(
            "get", kind.lower(), f"b-{suffix}", *scope, check=False).returncode == 1)


def test_component_statuses_are_healthy_and_deprecated(server: Server) -> None:
    proc = server.kubectl("get", "componentstatuses")
    assert _parse_table(proc.stdout) == [("controller-manager", "Healthy", "ok", ""),
                                         ("scheduler", "Healthy", "ok", "")]
    assert "Warning: v1 ComponentStatus is deprecated in v1.19+" in proc.stderr


GENERATORS = [
    pytest.param(["role", "r", "--verb=get,list", "--resource=pods"], "role", {
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]},
                 id="role"),
    pytest.param(["rolebinding", "rb", "--role=r", "--user=jane",
                  "--serviceaccount=NAMESPACE:app"], "rolebinding", {
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "jane"},
                     {"kind": "ServiceAccount", "name": "app", "namespace": "NAMESPACE"}]},
                 id="rolebinding"),
    pytest.param(["ingress", "ing", "--rule=foo.com/bar*=svc:8080,tls=sec"], "ingress", {
        "spec": {"rules": [{"host": "foo.com", "http": {"paths": [{
            "backend": {"service": {"name": "svc", "port": {"number": 8080}}},
            "path": "/bar", "pathType": "Prefix"}]}}],
                 "tls": [{"hosts": ["foo.com"], "secretName": "sec"}]},
        "status": {"loadBalancer": {}}}, id="ingress"),
    pytest.param(["poddisruptionbudget", "pdb", "--selector=app=web", "--min-available=50%"],
                 "pdb", {"spec": {"minAvailable": "50%",
                                  "selector": {"matchLabels": {"app": "web"}}}}, id="pdb"),
    pytest.param(["quota", "q", "--hard=cpu=1,pods=2"], "quota", {
        "spec": {"hard": {"cpu": "1", "pods": "2"}}, "status": {}}, id="quota"),
]


@pytest.mark.parametrize(("args", "kind", "expected"), GENERATORS)
def test_kubectl_create_generators_send_protobuf_kubegc_decodes(
        server: Server, ns: str, args: list[str], kind: str, expected: dict[str, Any]) -> None:
    server.kubectl("create", *[a.replace("NAMESPACE", ns) for a in args], "-n", ns)
    live = json.loads(server.kubectl("get", kind, args[1], "-n", ns, "-o", "json").stdout)
    assert {k: live[k] for k in expected} == json.loads(
        json.dumps(expected).replace("NAMESPACE", ns))
