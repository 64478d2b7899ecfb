"""What every namespace of a cluster holds without anyone asking: the ``default``
ServiceAccount (upstream's ServiceAccountsController) and the ``kube-root-ca.crt``
ConfigMap with the CA that verifies the API server (upstream's root CA publisher) — both
put back when deleted or changed. Against ``kubegc serve`` (TLS) with the real kubectl."""

from __future__ import annotations

import json
import uuid

import pytest

from kubegc.controllers.certificates.rootcacertpublisher import DESCRIPTION

from .conftest import Server, eventually

pytestmark = pytest.mark.kubectl


def _get(server: Server, ns: str, what: str) -> dict | None:
    proc = server.kubectl("get", what, "-n", ns, "-o", "json", check=False)
    return json.loads(proc.stdout) if proc.returncode == 0 else None


def _uid(server: Server, ns: str, what: str) -> str | None:
    obj = _get(server, ns, what)
    return obj["metadata"]["uid"] if obj else None


def test_a_new_namespace_gets_the_default_service_account(server: Server, ns: str) -> None:
    # what kr8s' and the official client's test setups wait for
    server.kubectl("wait", "--for=create", "serviceaccount/default", "-n", ns, "--timeout=30s")


def test_the_default_service_account_is_recreated_when_deleted(server: Server, ns: str) -> None:
    first = eventually(lambda: _uid(server, ns, "serviceaccount/default"))
    server.kubectl("delete", "serviceaccount", "default", "-n", ns)
    second = eventually(lambda: _uid(server, ns, "serviceaccount/default"))
    assert second != first


def test_every_namespace_has_the_serving_ca(server: Server, ns: str) -> None:
    ca = server.ca_file.read_text()
    for namespace in (ns, "default", "kube-system", "kube-public", "kube-node-lease"):
        config_map = eventually(lambda n=namespace: _get(server, n, "configmap/kube-root-ca.crt"))
        assert config_map["data"] == {"ca.crt": ca}
        assert config_map["metadata"]["annotations"]["kubernetes.io/description"] == DESCRIPTION


def _ca_data(server: Server, ns: str) -> str | None:
    config_map = _get(server, ns, "configmap/kube-root-ca.crt")
    return config_map["data"].get("ca.crt") if config_map else None


def test_the_root_ca_config_map_is_recreated_and_repaired(server: Server, ns: str) -> None:
    ca = server.ca_file.read_text()
    first = eventually(lambda: _uid(server, ns, "configmap/kube-root-ca.crt"))
    server.kubectl("delete", "configmap", "kube-root-ca.crt", "-n", ns)
    eventually(lambda: _uid(server, ns, "configmap/kube-root-ca.crt") not in (None, first))

    server.kubectl("patch", "configmap", "kube-root-ca.crt", "-n", ns, "--type=merge", "-p",
                   json.dumps({"data": {"ca.crt": "forged", "extra": "x"},
                               "metadata": {"annotations": {
                                   "kubernetes.io/description": None, "mine": "kept"}}}))
    eventually(lambda: _ca_data(server, ns) == ca)
    config_map = _get(server, ns, "configmap/kube-root-ca.crt")
    assert config_map is not None
    assert config_map["data"] == {"ca.crt": ca}
    assert config_map["metadata"]["annotations"] == {
        "kubernetes.io/description": DESCRIPTION, "mine": "kept"}


def test_a_deleted_namespace_goes_with_them(server: Server) -> None:
    """Neither controller puts its object back into a terminating namespace."""
    name = f"defaults-{uuid.uuid4().hex[:6]}"
    server.kubectl("create", "namespace", name)
    eventually(lambda: _get(server, name, "serviceaccount/default")
               and _get(server, name, "configmap/kube-root-ca.crt"))
    server.kubectl("delete", "namespace", name, "--timeout=60s")
    proc = server.kubectl("get", "namespace", name, check=False)
    assert "NotFound" in proc.stderr
