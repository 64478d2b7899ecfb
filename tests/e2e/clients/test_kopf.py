"""A kopf operator (``kopf_operator.py``, kopf's default login) against kubegc: kopf's
finalizers on an owner and on its adopted dependent, its deletion handlers, and the
garbage collector's cascade under each propagation policy.

The operator runs as ``kopf run`` in a process of its own whose ``$KUBECONFIG`` names
this module's server: kopf's default login asks the ``kubernetes`` client, which reads
``$KUBECONFIG`` when it is imported. (``kubegc.testing``'s fixture does not set it for an
in-process operator: that is another piece of work.)"""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from ..conftest import Server, free_port
from . import kopf_operator as op
from .story import eventually

KOPF_FINALIZER = "kopf.zalando.org/KopfFinalizerMarker"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": f"{op.PLURAL}.{op.GROUP}"},
    "spec": {"group": op.GROUP, "scope": "Namespaced",
             "names": {"plural": op.PLURAL, "singular": "parent", "kind": "Parent"},
             "versions": [{"name": op.VERSION, "served": True, "storage": True,
                           "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {
                               "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
}


@pytest.fixture(scope="module")
def operator(server: Server, api: client.ApiClient, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[str]:
    """The namespace the operator serves, once it is live (its liveness endpoint)."""
    client.ApiextensionsV1Api(api).create_custom_resource_definition(CRD)
    namespace = "story-kopf"
    client.CoreV1Api(api).create_namespace({"metadata": {"name": namespace}})
    port = free_port()
    log = tmp_path_factory.mktemp("kopf") / "kopf.log"
    env = {**os.environ, "KUBECONFIG": str(server.kubeconfig)}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kopf", "run", "--standalone", "--namespace", namespace,
             f"--liveness=http://127.0.0.1:{port}/healthz", op.__file__],
            env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        eventually(lambda: proc.poll() is not None or _live(port), timeout=60,
                   what="kopf's liveness endpoint answers")
        assert proc.poll() is None, log.read_text()
        yield namespace
    finally:
        proc.terminate()
        proc.wait(30)
    text = log.read_text()  # e.g. "Patching failed with inconsistencies" is a WARNING
    assert not any(word in text for word in ("Traceback", "ERROR", "WARNING")), text


def _live(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
            return bool(r.status == 200)
    except OSError:
        return False


class Cluster:
    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        self.core = client.CoreV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.ns = namespace

    def parent(self, name: str) -> dict[str, Any] | None:
        return _or_none(lambda: self.custom.get_namespaced_custom_object(
            op.GROUP, op.VERSION, self.ns, op.PLURAL, name))

    def configmap(self, name: str) -> Any:
        return _or_none(lambda: self.core.read_namespaced_config_map(name, self.ns))

    def create_parent(self, name: str) -> dict[str, Any]:
        created: dict[str, Any] = self.custom.create_namespaced_custom_object(
            op.GROUP, op.VERSION, self.ns, op.PLURAL,
            {"apiVersion": f"{op.GROUP}/{op.VERSION}", "kind": "Parent",
             "metadata": {"name": name}})
        return created

    def delete_parent(self, name: str, policy: str) -> None:
        self.custom.delete_namespaced_custom_object(
            op.GROUP, op.VERSION, self.ns, op.PLURAL, name, propagation_policy=policy)


def _or_none(read: Any) -> Any:
    try:
        return read()
    except ApiException as e:
        if e.status == 404:
            return None
        raise


@pytest.fixture
def cluster(api: client.ApiClient, operator: str) -> Cluster:
    return Cluster(api, operator)


def _handled(c: Cluster, name: str) -> Any:
    """The Parent and its child once kopf created the child, recorded it in the Parent's
    status and holds its finalizer on both."""
    parent, child = c.parent(name), c.configmap(f"{name}-child")
    if parent is None or child is None:
        return None
    done = parent.get("status", {}).get("create_child") == {"child": f"{name}-child"}
    held = KOPF_FINALIZER in parent["metadata"].get("finalizers", []) and \
        KOPF_FINALIZER in (child.metadata.finalizers or [])
    return (parent, child) if done and held else None


@pytest.mark.parametrize("policy", ["Background", "Foreground", "Orphan"])
def test_operator_finalizers_and_the_cascade(cluster: Cluster, policy: str) -> None:
    name = f"p-{policy.lower()}"
    created = cluster.create_parent(name)
    _, child = eventually(lambda: _handled(cluster, name),
                          what="kopf creates the child and holds its finalizers")
    (ref,) = child.metadata.owner_references
    assert (ref.kind, ref.name, ref.uid) == ("Parent", name, created["metadata"]["uid"])
    assert ref.controller and ref.block_owner_deletion

    cluster.delete_parent(name, policy)
    eventually(lambda: cluster.parent(name) is None, what=f"{name} is gone")
    assert cluster.configmap(f"deleted-{name}") is not None  # kopf's handler ran first
    if policy == "Orphan":
        kept = cluster.configmap(f"{name}-child")
        assert kept is not None and not kept.metadata.owner_references
        assert kept.metadata.deletion_timestamp is None
        assert cluster.configmap(f"deleted-{name}-child") is None
        return
    if policy == "Foreground":  # the parent waited for its blocking dependent
        assert cluster.configmap(f"{name}-child") is None
    eventually(lambda: cluster.configmap(f"{name}-child") is None,
               what="the GC deletes the child and kopf releases it")
    assert cluster.configmap(f"deleted-{name}-child") is not None
