"""``kubegc.testing`` running code as a user or a ServiceAccount: kubeconfigs with client
certificates (``kubeconfig_for``, ``kubeconfig_for_service_account``) for kubectl and the
official client, the in-process client as a user (``client_for``), and the
``kubegc_tls_cluster`` fixture. What each identity may do is RBAC's to say."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from kubegc.api.errors import StatusError
from kubegc.api.resources import GroupVersionResource
from kubegc.testing import Cluster

CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")


def kubectl(kubeconfig: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory() as cache:
        return subprocess.run(["kubectl", "--kubeconfig", str(kubeconfig), "--cache-dir", cache,
                               *args], capture_output=True, text=True, check=check, timeout=60)


def whoami(kubeconfig: Path) -> Any:
    return json.loads(kubectl(kubeconfig, "auth", "whoami", "-o", "json").stdout)["status"][
        "userInfo"]


def test_kubectl_runs_as_a_user_and_as_a_service_account(kubegc_tls_cluster: Cluster) -> None:
    cluster = kubegc_tls_cluster
    jane = cluster.kubeconfig_for("jane", ["dev"])
    assert (whoami(jane)["username"], whoami(jane)["groups"]) == (
        "jane", ["dev", "system:authenticated"])
    op = cluster.kubeconfig_for_service_account("default", "operator")
    assert whoami(op)["groups"] == ["system:serviceaccounts", "system:serviceaccounts:default",
                                    "system:authenticated"]
    refused = kubectl(op, "get", "configmaps", check=False)
    assert refused.stderr.strip() == (
        'Error from server (Forbidden): configmaps is forbidden: User '
        '"system:serviceaccount:default:operator" cannot list resource "configmaps" in API '
        'group "" in the namespace "default"')
    admin = cluster.kubeconfig
    kubectl(admin, "create", "role", "reader", "--verb", "list", "--resource", "configmaps")
    kubectl(admin, "create", "rolebinding", "operator-reads", "--role", "reader",
            "--serviceaccount", "default:operator")
    assert "kube-root-ca.crt" in kubectl(op, "get", "configmaps", "-o", "name").stdout


def test_the_official_client_as_a_user(kubegc_tls_cluster: Cluster) -> None:
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    api = kubegc_tls_cluster.kubernetes_client(kubegc_tls_cluster.kubeconfig_for("jane"))
    try:
        review = client.AuthenticationV1Api(api).create_self_subject_review(
            client.V1SelfSubjectReview())
        assert review.status.user_info.username == "jane"
        with pytest.raises(ApiException) as refused:
            client.CoreV1Api(api).list_namespaced_secret("default")
        assert refused.value.status == 403
    finally:
        api.close()


async def test_the_in_process_client_as_a_user() -> None:
    async with Cluster(controllers=[]) as cluster:  # plain HTTP is fine in-process
        jane = cluster.client_for("jane", ["dev"])
        with pytest.raises(StatusError) as refused:
            await jane.list(CONFIGMAPS, namespace="default")
        assert refused.value.message == (
            'configmaps is forbidden: User "jane" cannot list resource "configmaps" in API '
            'group "" in the namespace "default"')
        op = cluster.client_for_service_account("default", "op")
        with pytest.raises(StatusError) as refused:
            await op.create(CONFIGMAPS, {"metadata": {"name": "x"}}, namespace="default")
        assert 'User "system:serviceaccount:default:op" cannot create' in refused.value.message
        with pytest.raises(ValueError, match="cannot name a ServiceAccount"):
            cluster.client_for_service_account("Default", "op")


async def test_a_users_kubeconfig_needs_tls() -> None:
    async with Cluster(controllers=[]) as cluster:
        with pytest.raises(RuntimeError, match=r"needs a cluster serving TLS.*Cluster\(tls=True\)"):
            cluster.kubeconfig_for("jane")


async def test_names_a_certificate_cannot_carry_are_refused() -> None:
    async with Cluster(controllers=[], tls=True) as cluster:
        with pytest.raises(ValueError, match="at most 64"):
            cluster.kubeconfig_for("j" * 65)
        with pytest.raises(ValueError, match="must not be empty"):
            cluster.kubeconfig_for("jane", [""])


async def test_an_operators_service_account_under_owner_references_enforcement() -> None:
    """``Cluster(enable_admission_plugins=[...])``: the in-process client as a ServiceAccount
    meets OwnerReferencesPermissionEnforcement as a hardened cluster's API server enforces
    it — blockOwnerDeletion needs its owner's finalizers."""
    async with Cluster(controllers=(), enable_admission_plugins=[
            "OwnerReferencesPermissionEnforcement"]) as cluster:
        admin = cluster.client
        rbac = "rbac.authorization.k8s.io"
        await admin.create(GroupVersionResource(rbac, "v1", "roles"), {
            "metadata": {"name": "op"}, "rules": [
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}]},
            namespace="default")
        await admin.create(GroupVersionResource(rbac, "v1", "rolebindings"), {
            "metadata": {"name": "op"}, "roleRef": {"apiGroup": rbac, "kind": "Role",
                                                   "name": "op"},
            "subjects": [{"kind": "ServiceAccount", "name": "op", "namespace": "default"}]},
            namespace="default")
        owner = await admin.create(CONFIGMAPS, {"metadata": {"name": "owner"}},
                                   namespace="default")
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
               "uid": owner["metadata"]["uid"], "blockOwnerDeletion": True}
        op = cluster.client_for_service_account("default", "op")
        with pytest.raises(StatusError) as e:
            await op.create(CONFIGMAPS, {"metadata": {"name": "child", "ownerReferences": [ref]}},
                            namespace="default")
        assert e.value.message == (
            'configmaps "child" is forbidden: cannot set blockOwnerDeletion if an '
            "ownerReference refers to a resource you can't set finalizers on: , <nil>")
        await op.create(CONFIGMAPS, {"metadata": {"name": "child", "ownerReferences": [
            {**ref, "blockOwnerDeletion": False}]}}, namespace="default")
