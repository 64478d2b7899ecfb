"""Namespace conformance behaviours (upstream's test/e2e/apimachinery/namespace.go) through
the official Python client and kubectl, against ``kubegc serve`` with all controllers."""

from __future__ import annotations

import uuid
from typing import Any

from kubernetes import client
from kubernetes.client.rest import ApiException

from .conftest import Server, eventually


def _gone(read: Any) -> bool:
    try:
        read()
    except ApiException as e:
        return bool(e.status == 404)
    return False


def test_ns01_pods_removed_when_namespace_deleted(kube: Any, server: Server) -> None:
    core = client.CoreV1Api(kube)
    name = f"nsdeletetest-{uuid.uuid4().hex[:6]}"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    core.create_namespaced_pod(name, client.V1Pod(
        metadata=client.V1ObjectMeta(name="test-pod"),
        spec=client.V1PodSpec(containers=[client.V1Container(name="nginx", image="nginx")])))
    eventually(lambda: core.read_namespaced_pod("test-pod", name).status.phase == "Running")
    core.delete_namespace(name)
    eventually(lambda: _gone(lambda: core.read_namespace(name)), timeout=60)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    assert core.list_namespaced_pod(name).items == []


def test_ns02_services_removed_when_namespace_deleted(kube: Any) -> None:
    core = client.CoreV1Api(kube)
    name = f"nsdeletetest-{uuid.uuid4().hex[:6]}"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    core.create_namespaced_service(name, client.V1Service(
        metadata=client.V1ObjectMeta(name="test-service"),
        spec=client.V1ServiceSpec(selector={"foo": "bar"},
                                  ports=[client.V1ServicePort(port=80, target_port=80)])))
    core.delete_namespace(name)
    eventually(lambda: _gone(lambda: core.read_namespace(name)), timeout=60)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    assert core.list_namespaced_service(name).items == []


def test_ns04_patch_a_namespace(kube: Any) -> None:
    core = client.CoreV1Api(kube)
    name = f"nspatchtest-{uuid.uuid4().hex[:6]}"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    core.patch_namespace(name, {"metadata": {"labels": {"testLabel": "testValue"}}})
    assert core.read_namespace(name).metadata.labels["testLabel"] == "testValue"


def test_ns05_namespace_status(kube: Any) -> None:
    core = client.CoreV1Api(kube)
    name = f"nsstatustest-{uuid.uuid4().hex[:6]}"
    created = core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    assert created.status.phase == "Active"
    condition = {"type": "StatusPatch", "status": "True", "reason": "E2E",
                 "message": "Patched by an e2e test"}
    patched = core.patch_namespace_status(name, {
        "metadata": {"annotations": {"e2e-patched": "true"}},
        "status": {"conditions": [condition]}})
    assert patched.status.conditions[0].type == "StatusPatch"
    current = core.read_namespace_status(name)
    current.status.conditions.append(client.V1NamespaceCondition(
        type="StatusUpdate", status="True", reason="E2E", message="Updated by an e2e test"))
    updated = core.replace_namespace_status(name, current)
    assert [c.type for c in updated.status.conditions] == ["StatusPatch", "StatusUpdate"]


def test_ns06_finalize_subresource(kube: Any) -> None:
    core = client.CoreV1Api(kube)
    name = f"nsfinalizetest-{uuid.uuid4().hex[:6]}"
    ns = core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    ns.spec.finalizers = [*ns.spec.finalizers, "e2e.example.com/fakeFinalizer"]
    finalized = core.replace_namespace_finalize(name, ns)
    assert "e2e.example.com/fakeFinalizer" in finalized.spec.finalizers
    finalized.spec.finalizers = [f for f in finalized.spec.finalizers
                                 if f != "e2e.example.com/fakeFinalizer"]
    after = core.replace_namespace_finalize(name, finalized)
    assert after.spec.finalizers == ["kubernetes"]
    ns = core.read_namespace(name)
    ns.metadata.labels = {**(ns.metadata.labels or {}), "updated": "yes"}
    assert core.replace_namespace(name, ns).metadata.labels["updated"] == "yes"
