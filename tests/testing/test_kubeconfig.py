"""``default_kubeconfig``: the cluster's kubeconfig is the process's default one while in
use — for clients that read ``$KUBECONFIG`` when they connect and for the official client,
which read it when imported — and everything is put back afterwards."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import kubernetes.config
import pytest
from kubernetes.config import kube_config

from kubegc.testing import Cluster, default_kubeconfig


def test_the_fixtures_kubeconfig_is_the_default_one(kubegc_cluster: Cluster) -> None:
    assert os.environ["KUBECONFIG"] == str(kubegc_cluster.kubeconfig)
    # what kopf's default login does: load_kube_config() without a path
    configuration = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(client_configuration=configuration)
    assert configuration.host == kubegc_cluster.url
    api = kubernetes.client.ApiClient(configuration)
    try:
        names = {n.metadata.name for n in kubernetes.client.CoreV1Api(api).list_namespace().items}
    finally:
        api.close()
    assert "kube-system" in names


@pytest.mark.parametrize("env", [None, "/somewhere/else"])
def test_everything_is_put_back(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                env: str | None) -> None:
    if env is None:
        monkeypatch.delenv("KUBECONFIG", raising=False)
    else:
        monkeypatch.setenv("KUBECONFIG", env)
    before = kube_config.KUBE_CONFIG_DEFAULT_LOCATION
    path = str(tmp_path / "kubeconfig")
    with default_kubeconfig(path):
        defaults = (kube_config.KUBE_CONFIG_DEFAULT_LOCATION,
                    kubernetes.config.KUBE_CONFIG_DEFAULT_LOCATION)
        assert (os.environ["KUBECONFIG"], *defaults) == (path, path, path)
    after = kube_config.KUBE_CONFIG_DEFAULT_LOCATION
    assert (os.environ.get("KUBECONFIG"), after) == (env, before)


def test_a_client_imported_meanwhile_gets_what_its_import_would_read(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    late = types.ModuleType("kubernetes_asyncio.config.kube_config")
    with default_kubeconfig(tmp_path / "kubeconfig"):
        # an import now reads the environment, as kubernetes_asyncio's does
        late.KUBE_CONFIG_DEFAULT_LOCATION = os.environ["KUBECONFIG"]  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, late.__name__, late)
    assert late.KUBE_CONFIG_DEFAULT_LOCATION == "~/.kube/config"  # type: ignore[attr-defined]
