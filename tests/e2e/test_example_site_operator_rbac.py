"""examples/site-operator-rbac/README.md, every step: a real ``kubegc serve`` with
OwnerReferencesPermissionEnforcement, the kopf Site operator run by ``kopf run`` as its
ServiceAccount (a ``kubectl create token`` token), the chart's ClusterRole without
``sites/finalizers`` (the operator's children are refused with upstream's 403), the doctor
naming the missing rule, the rule added, and a foreground cascade deleting the children
and the outside state."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Server, eventually, start_server, stop_server

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "site-operator-rbac"
SA = "system:serviceaccount:labhub-system:site-operator"
REFUSED = ('configmaps "alpha-config" is forbidden: cannot set blockOwnerDeletion if an '
           "ownerReference refers to a resource you can't set finalizers on: , <nil>")
FIX = ('[{"op":"add","path":"/rules/-","value":{"apiGroups":["own.labhub.io"],'
       '"resources":["sites/finalizers"],"verbs":["update"]}}]')

pytest.importorskip("kopf")


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Server]:
    s = start_server(tmp_path / "kubegc", "--enable-admission-plugins",
                     "OwnerReferencesPermissionEnforcement")
    yield s
    stop_server(s)


@pytest.fixture
def operator(cluster: Server, tmp_path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Steps 1 and 2: the CRD and the chart's RBAC, a kubeconfig with the ServiceAccount's
    token, ``kopf run`` with it."""
    cluster.kubectl("apply", "-f", str(ROOT / "examples" / "site-crd.yaml"),
                    "-f", str(EXAMPLE / "rbac.yaml"))
    kubeconfig = tmp_path / "operator.kubeconfig"
    shutil.copy(cluster.kubeconfig, kubeconfig)
    token = cluster.kubectl("create", "token", "site-operator", "-n", "labhub-system",
                            "--duration", "1h").stdout.strip()
    cluster.kubectl("--kubeconfig", str(kubeconfig), "config", "set-credentials", "kubegc",
                    "--token", token)
    whoami = cluster.kubectl("--kubeconfig", str(kubeconfig), "auth", "whoami", "-o", "json")
    assert json.loads(whoami.stdout)["status"]["userInfo"]["username"] == SA
    log = (tmp_path / "operator.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "kopf", "run", "--standalone", "-A",
         str(ROOT / "examples" / "site_operator.py")],
        stdout=log, stderr=subprocess.STDOUT,
        env={**os.environ, "KUBECONFIG": str(kubeconfig)})
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def _get(cluster: Server, *args: str) -> dict[str, object]:
    proc = cluster.kubectl("get", *args, "-o", "json", check=False)
    return json.loads(proc.stdout) if proc.returncode == 0 else {}


def _names(cluster: Server, ns: str) -> set[str]:
    listed = _get(cluster, "configmaps,services,secrets", "-n", ns)
    items = listed.get("items") or []
    assert isinstance(items, list)
    return {f"{i['kind']}/{i['metadata']['name']}" for i in items} - {
        "ConfigMap/kube-root-ca.crt"}


def test_the_example(cluster: Server, operator: subprocess.Popen[bytes],
                     tmp_path: Path) -> None:
    # 3. the 403, as kopf records it on the Site
    cluster.kubectl("create", "namespace", "lab")
    cluster.kubectl("apply", "-f", str(ROOT / "examples" / "lab" / "site-alpha.yaml"))

    def failure() -> dict[str, object] | None:
        """The Status the API server answered the operator, from kopf's record of the
        handler's failure (its message ends with the HTTP response body)."""
        site = _get(cluster, "site", "alpha", "-n", "lab")
        meta = site.get("metadata") or {}
        assert isinstance(meta, dict)
        record = (meta.get("annotations") or {}).get("own.labhub.io/create_site")
        if not record:
            return None
        message = str(json.loads(record).get("message") or "")
        _, found, body = message.partition("HTTP response body: ")
        return json.loads(body) if found else None

    status = eventually(failure, timeout=60, what="the operator's 403 recorded on the Site")
    assert (status["code"], status["reason"], status["message"]) == (403, "Forbidden", REFUSED)
    assert _names(cluster, "lab") == set()
    # 4. the doctor names the missing rule
    uid = _get(cluster, "site", "alpha", "-n", "lab")["metadata"]["uid"]  # type: ignore[index]
    child = (EXAMPLE / "child.yaml").read_text().replace("SITE_UID", str(uid))
    proc = subprocess.run(
        [sys.executable, "-m", "kubegc.cli", "doctor", "--kubeconfig", str(cluster.kubeconfig),
         "-f", "-", "--as", SA], input=child, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert ("✖ ownerReferences[0] Site/alpha (own.labhub.io/v1; blockOwnerDeletion true): "
            "setting\n    blockOwnerDeletion: true is refused\n    missing   update on "
            'sites/finalizers "alpha" (group own.labhub.io) in namespace lab\n') in proc.stdout
    assert ("              - apiGroups: [own.labhub.io]\n                resources: "
            "[sites/finalizers]\n                verbs: [update]\n") in proc.stdout
    assert "✔ changing ownerReferences" in proc.stdout
    # 5. the fix, and the cascade
    cluster.kubectl("patch", "clusterrole", "site-operator", "--type=json", "-p", FIX)
    cluster.kubectl("apply", "-f", "-", input=json.dumps({
        "apiVersion": "own.labhub.io/v1", "kind": "Site",
        "metadata": {"name": "beta", "namespace": "lab"}, "spec": {"tier": "web"}}))
    children = {"ConfigMap/beta-config", "ConfigMap/beta-content", "Service/beta",
                "Secret/beta-credentials"}
    eventually(lambda: _names(cluster, "lab") == children, timeout=60, what="beta's children")
    assert _get(cluster, "configmap", "lab.beta", "-n", "labhub-outside")
    for name in children:
        obj = _get(cluster, name.lower(), "-n", "lab")
        ref = obj["metadata"]["ownerReferences"][0]  # type: ignore[index]
        assert (ref["kind"], ref["name"], ref["blockOwnerDeletion"]) == ("Site", "beta", True)
    cluster.kubectl("delete", "site", "beta", "-n", "lab", "--cascade=foreground",
                    "--timeout=60s")
    assert _names(cluster, "lab") == set()
    assert not _get(cluster, "configmap", "lab.beta", "-n", "labhub-outside")
