"""The official ``kubernetes`` Python client (37.x) against ``kubegc serve``: typed APIs,
CustomObjectsApi, ``watch.Watch().stream`` and DynamicClient."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest
from kubernetes import client, dynamic, watch
from kubernetes.client.rest import ApiException

from .conftest import Server, eventually


def _ns(api: Any) -> str:
    name = f"py-{uuid.uuid4().hex[:8]}"
    client.CoreV1Api(api).create_namespace(client.V1Namespace(
        metadata=client.V1ObjectMeta(name=name)))
    return name


def _deployment(name: str, replicas: int = 2) -> client.V1Deployment:
    labels = {"app": name}
    return client.V1Deployment(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1DeploymentSpec(
            replicas=replicas, selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(containers=[client.V1Container(name="c",
                                                                     image="nginx")]))))


def test_typed_apis_crud(kube: Any) -> None:
    ns = _ns(kube)
    core, apps = client.CoreV1Api(kube), client.AppsV1Api(kube)
    cm = core.create_namespaced_config_map(ns, client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="c1", labels={"app": "x"}), data={"a": "b"}))
    assert cm.metadata.uid and cm.metadata.resource_version
    listed = core.list_namespaced_config_map(ns, label_selector="app=x")
    assert [i.metadata.name for i in listed.items] == ["c1"]
    created = apps.create_namespaced_deployment(ns, _deployment("pyd"))
    assert created.spec.replicas == 2
    # PUT with the object as read (timestamps go out with +00:00 offsets) and optimistic
    # concurrency; a ConfigMap, since the deployment controller keeps writing Deployments.
    cm.data = {"a": "c"}
    replaced = core.replace_namespaced_config_map("c1", ns, cm)
    assert replaced.data == {"a": "c"}
    assert replaced.metadata.resource_version != cm.metadata.resource_version
    cm.data = {"a": "d"}
    with pytest.raises(ApiException) as e:
        core.replace_namespaced_config_map("c1", ns, cm)  # stale resourceVersion
    assert e.value.status == 409
    patched = apps.patch_namespaced_deployment("pyd", ns, {"spec": {"replicas": 3}})
    assert patched.spec.replicas == 3 and patched.metadata.generation == 2
    with pytest.raises(ApiException) as e:
        core.read_namespaced_config_map("nope", ns)
    assert e.value.status == 404


def test_delete_options_in_body_and_query(kube: Any, server: Server) -> None:
    ns = _ns(kube)
    apps = client.AppsV1Api(kube)
    apps.create_namespaced_deployment(ns, _deployment("fg"))
    result = apps.delete_namespaced_deployment(
        "fg", ns, body=client.V1DeleteOptions(propagation_policy="Foreground"))
    assert isinstance(result, dict)
    eventually(lambda: _gone(lambda: apps.read_namespaced_deployment("fg", ns)))
    apps.create_namespaced_deployment(ns, _deployment("bg"))
    apps.delete_namespaced_deployment("bg", ns, propagation_policy="Background",
                                      grace_period_seconds=0)
    assert _gone(lambda: apps.read_namespaced_deployment("bg", ns))


def _gone(read: Any) -> bool:
    try:
        read()
    except ApiException as e:
        return bool(e.status == 404)
    return False


def test_server_side_apply(kube: Any) -> None:
    ns = _ns(kube)
    apps = client.AppsV1Api(kube)
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ssa"},
            "spec": _deployment("ssa").to_dict()["spec"]}
    body = kube.sanitize_for_serialization(client.V1Deployment(
        api_version="apps/v1", kind="Deployment", metadata=client.V1ObjectMeta(name="ssa"),
        spec=_deployment("ssa").spec))
    applied = apps.patch_namespaced_deployment("ssa", ns, body, field_manager="me",
                                               _content_type="application/apply-patch+yaml")
    assert applied.metadata.name == "ssa"
    managers = [m.manager for m in applied.metadata.managed_fields or []]
    assert "me" in managers


def test_watch_stream(kube: Any) -> None:
    ns = _ns(kube)
    core = client.CoreV1Api(kube)
    core.create_namespaced_config_map(ns, client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="first")))
    seen: list[tuple[str, str]] = []
    w = watch.Watch()

    def later() -> None:
        core.create_namespaced_config_map(ns, client.V1ConfigMap(
            metadata=client.V1ObjectMeta(name="second")))
        core.delete_namespaced_config_map("first", ns)

    timer = threading.Timer(0.5, later)
    timer.start()
    for event in w.stream(core.list_namespaced_config_map, ns, timeout_seconds=5):
        if event["object"].metadata.name == "kube-root-ca.crt":
            continue  # the root CA publisher's, in every namespace
        seen.append((event["type"], event["object"].metadata.name))
        if len(seen) == 3:
            w.stop()
    timer.join()
    assert seen == [("ADDED", "first"), ("ADDED", "second"), ("DELETED", "first")]


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                       "shortNames": ["wd"]},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                 "openAPIV3Schema": {"type": "object", "properties": {"spec": {
                     "type": "object", "properties": {"size": {"type": "integer"}}}}}}}]},
}


def _ensure_crd(kube: Any) -> None:
    ext = client.ApiextensionsV1Api(kube)
    try:
        ext.create_custom_resource_definition(CRD)
    except ApiException as e:
        if e.status != 409:
            raise


def test_custom_objects_api(kube: Any) -> None:
    _ensure_crd(kube)
    ns = _ns(kube)
    co = client.CustomObjectsApi(kube)
    body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "pyw"},
            "spec": {"size": 1}}
    eventually(lambda: _try(lambda: co.create_namespaced_custom_object(
        "example.com", "v1", ns, "widgets", body)))
    got = co.get_namespaced_custom_object("example.com", "v1", ns, "widgets", "pyw")
    assert got["spec"] == {"size": 1}
    patched = co.patch_namespaced_custom_object("example.com", "v1", ns, "widgets", "pyw",
                                                {"spec": {"size": 3}})
    assert patched["spec"]["size"] == 3
    listed = co.list_namespaced_custom_object("example.com", "v1", ns, "widgets")
    assert listed["kind"] == "WidgetList" and len(listed["items"]) == 1
    assert co.list_cluster_custom_object("example.com", "v1", "widgets")["items"]
    co.delete_namespaced_custom_object("example.com", "v1", ns, "widgets", "pyw",
                                       propagation_policy="Foreground")
    eventually(lambda: _gone(lambda: co.get_namespaced_custom_object(
        "example.com", "v1", ns, "widgets", "pyw")))


def _try(fn: Any) -> bool:
    try:
        fn()
    except ApiException as e:
        if e.status == 404:
            return False
        raise
    return True


def test_dynamic_client(kube: Any) -> None:
    _ensure_crd(kube)
    ns = _ns(kube)
    dyn = dynamic.DynamicClient(kube)
    cms = dyn.resources.get(api_version="v1", kind="ConfigMap")
    cms.create(body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dyn"}},
               namespace=ns)
    assert cms.get(name="dyn", namespace=ns).metadata.name == "dyn"
    widgets = dyn.resources.get(api_version="example.com/v1", kind="Widget")
    assert widgets.namespaced
    deployments = dyn.resources.get(api_version="apps/v1", kind="Deployment")
    assert deployments.namespaced and "deploy" in deployments.short_names
