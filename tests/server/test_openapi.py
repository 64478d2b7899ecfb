"""OpenAPI v3 documents as kubectl's validation, apply and explain read them (KEP-2896)."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from kubegc.api.deletionrecord import ACTION_EVICT
from kubegc.api.disruption import EVICTION_BY_EVICTION_API
from kubegc.api.meta import ObjectReference
from kubegc.api.resources import Catalog, ResourceInfo, Subresource
from kubegc.component.deletions import DELETION_REASONS, Deletion
from kubegc.controllers.deletionrecords import deletion_to_object, to_object
from kubegc.controllers.garbagecollector.records import (
    Classification,
    DecisionReason,
    DeletionRecord,
    OwnerClassification,
    RecordAction,
)
from kubegc.registry import builtin_catalog
from kubegc.registry.definitions import referenced
from kubegc.server.openapi import (
    custom_schema_name,
    document_hash,
    group_version_path,
    openapi_v3_group_version,
    openapi_v3_index,
    parse_group_version_path,
)

WIDGET = ResourceInfo(
    group="example.com", versions=("v1",), resource="widgets", kind="Widget", namespaced=True,
    short_names=("wd",), custom=True, subresources=(Subresource("status"),),
)
GADGET = ResourceInfo(group="example.com", versions=("v1",), resource="gadgets", kind="Gadget",
                      namespaced=False, custom=True)
WIDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A widget.",
    "properties": {"spec": {"type": "object", "required": ["size"],
                            "properties": {"size": {"type": "integer"}}}},
}
SMP = "application/strategic-merge-patch+json"
HASHED_URL = re.compile(r"^/openapi/v3/(api/v1|apis/[^/]+/[^/?]+)\?hash=[0-9A-F]{128}$")


def with_widgets(*extra: ResourceInfo) -> Catalog:
    catalog = builtin_catalog()
    for info in (WIDGET, *extra):
        catalog.add(info)
    return catalog


def document(catalog: Catalog, group: str, version: str = "v1",
             crd_schemas: Any = None) -> dict[str, Any]:
    doc = openapi_v3_group_version(catalog, group, version, crd_schemas)
    assert doc is not None
    return doc


def patch_operations(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, item in doc["paths"].items():
        if "patch" in item:
            yield path, item["patch"]


def kubectl_supports_field_validation(doc: dict[str, Any], gvk: dict[str, str]) -> bool:
    """kubectl 1.29+'s check before `create -f`/`apply -f` (cli-runtime's
    query_param_verifier_v3.go: a ``patch`` with ``fieldValidation``)."""
    return any(
        op.get("x-kubernetes-group-version-kind") == gvk
        and any(p["name"] == "fieldValidation" and p["in"] == "query" for p in op["parameters"])
        for _, op in patch_operations(doc)
    )


def kind_schema(doc: dict[str, Any], group: str, version: str, kind: str) -> dict[str, Any]:
    """What kubectl explain looks up: the schema carrying the GVK."""
    gvk = {"group": group, "kind": kind, "version": version}
    [found] = [s for s in doc["components"]["schemas"].values()
               if gvk in s.get("x-kubernetes-group-version-kind", [])]
    return dict(found)


def resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while True:
        target = schema.get("$ref") or (schema.get("allOf") or [{}])[0].get("$ref")
        if target is None:
            return schema
        schema = doc["components"]["schemas"][target.removeprefix("#/components/schemas/")]


def field(doc: dict[str, Any], schema: dict[str, Any], *path: str) -> dict[str, Any]:
    for name in path:
        schema = resolve(doc, schema)
        if schema.get("type") == "array":
            schema = resolve(doc, schema["items"])
        schema = schema["properties"][name]
    return schema


@pytest.mark.parametrize(("group", "version", "path"), [
    ("", "v1", "api/v1"), ("apps", "v1", "apis/apps/v1"),
    ("example.com", "v1beta1", "apis/example.com/v1beta1"),
])
def test_group_version_path_round_trips(group: str, version: str, path: str) -> None:
    assert group_version_path(group, version) == path
    assert parse_group_version_path(path) == (group, version)


@pytest.mark.parametrize("path", ["", "api", "apis/apps", "apis//v1", "api/v1/pods", "x/y/z"])
def test_parse_group_version_path_rejects(path: str) -> None:
    assert parse_group_version_path(path) is None


def test_index_links_every_group_version_with_its_content_hash() -> None:
    catalog = with_widgets()
    index = openapi_v3_index(catalog)
    assert set(index["paths"]) >= {
        "api/v1", "apis/apps/v1", "apis/batch/v1", "apis/coordination.k8s.io/v1",
        "apis/events.k8s.io/v1", "apis/apiextensions.k8s.io/v1", "apis/example.com/v1",
    }
    assert set(index["paths"]) == {
        group_version_path(g, v) for g, versions in catalog.groups() for v in versions}
    for key, entry in index["paths"].items():
        url = entry["serverRelativeURL"]
        assert HASHED_URL.match(url), url
        group, version = parse_group_version_path(key) or ("?", "?")
        assert url.endswith("?hash=" + document_hash(document(catalog, group, version)))


def test_index_hash_changes_only_for_the_group_version_whose_document_changed() -> None:
    catalog = with_widgets()
    before = openapi_v3_index(catalog)["paths"]
    catalog.add(GADGET)  # same group as widgets
    after = openapi_v3_index(catalog)["paths"]
    assert after["apis/example.com/v1"] != before["apis/example.com/v1"]
    assert {k: v for k, v in after.items() if k != "apis/example.com/v1"} == {
        k: v for k, v in before.items() if k != "apis/example.com/v1"}


def test_index_hash_changes_when_a_crd_schema_changes() -> None:
    catalog = with_widgets()
    key = ("example.com", "v1", "Widget")
    first = openapi_v3_index(catalog, {key: WIDGET_SCHEMA})["paths"]["apis/example.com/v1"]
    changed = copy.deepcopy(WIDGET_SCHEMA)
    changed["properties"]["spec"]["properties"]["color"] = {"type": "string"}
    second = openapi_v3_index(catalog, {key: changed})["paths"]["apis/example.com/v1"]
    assert first != second


def test_new_crd_group_appears_in_the_index() -> None:
    catalog = builtin_catalog()
    assert "apis/example.com/v1" not in openapi_v3_index(catalog)["paths"]
    catalog.add(WIDGET)
    assert "apis/example.com/v1" in openapi_v3_index(catalog)["paths"]


def test_unknown_group_version_has_no_document() -> None:
    assert openapi_v3_group_version(builtin_catalog(), "apps", "v1beta1") is None
    assert openapi_v3_group_version(builtin_catalog(), "example.com", "v1") is None


def test_every_kind_passes_kubectls_server_side_validation_check() -> None:
    catalog = with_widgets()
    for info in catalog:
        for version in info.versions:
            doc = document(catalog, info.group, version)
            gvk = {"group": info.group, "kind": info.kind, "version": version}
            # a read-only resource (componentstatuses) has no patch to validate with
            assert kubectl_supports_field_validation(doc, gvk) == info.supports("patch"), (
                info.resource, version)


def test_every_patch_operation_carries_gvk_and_field_validation() -> None:
    catalog = with_widgets()
    for group, versions in catalog.groups():
        for version in versions:
            for path, op in patch_operations(document(catalog, group, version)):
                assert set(op["x-kubernetes-group-version-kind"]) == {"group", "kind", "version"}
                assert "fieldValidation" in {p["name"] for p in op["parameters"]}, path


def test_patch_content_types_offer_strategic_merge_for_builtins_only() -> None:
    catalog = with_widgets()
    apps = document(catalog, "apps")
    deployment = apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]
    assert set(deployment["patch"]["requestBody"]["content"]) == {
        "application/json-patch+json", "application/merge-patch+json", SMP,
        "application/apply-patch+yaml"}
    widgets = document(catalog, "example.com")
    for _, op in patch_operations(widgets):
        assert set(op["requestBody"]["content"]) == {
            "application/json-patch+json", "application/merge-patch+json",
            "application/apply-patch+yaml"}


def test_paths_cover_collections_items_and_subresources() -> None:
    core = document(builtin_catalog(), "")
    paths = core["paths"]
    pods = "/api/v1/namespaces/{namespace}/pods"
    assert set(paths[pods]) >= {"get", "post", "delete", "parameters"}
    assert set(paths[pods + "/{name}"]) >= {"get", "put", "patch", "delete"}
    assert set(paths[pods + "/{name}/status"]) >= {"get", "put", "patch"}
    assert "get" in paths[pods + "/{name}/log"]
    assert "put" in paths["/api/v1/namespaces/{name}/finalize"]
    assert "get" in paths["/api/v1/pods"]  # all namespaces
    assert "get" in paths["/api/v1/nodes/{name}"]  # cluster-scoped
    scale = paths["/api/v1/namespaces/{namespace}/replicationcontrollers/{name}/scale"]["patch"]
    assert scale["x-kubernetes-group-version-kind"] == {
        "group": "autoscaling", "kind": "Scale", "version": "v1"}


def test_every_ref_resolves_inside_the_document() -> None:
    catalog = with_widgets()
    for group, versions in catalog.groups():
        for version in versions:
            doc = document(catalog, group, version, {("example.com", "v1", "Widget"):
                                                     WIDGET_SCHEMA})
            missing = set(referenced(doc)) - set(doc["components"]["schemas"])
            assert not missing, (group, version, missing)


def test_builtin_schemas_stay_in_their_group_version_document() -> None:
    apps = document(builtin_catalog(), "apps")["components"]["schemas"]
    assert "io.k8s.api.apps.v1.Deployment" in apps
    assert "io.k8s.api.core.v1.PodSpec" in apps  # via spec.template
    assert "io.k8s.api.autoscaling.v1.Scale" in apps
    assert "io.k8s.api.batch.v1.Job" not in apps


@pytest.mark.parametrize(("group", "kind", "path", "type_name"), [
    pytest.param("", "Pod", ("spec", "containers"), "array", id="pod.spec.containers"),
    pytest.param("", "Pod", ("spec", "containers", "image"), "string", id="container.image"),
    pytest.param("apps", "Deployment", ("spec", "template", "spec", "containers", "name"),
                 "string", id="deployment.spec.template"),
    pytest.param("apps", "Deployment", ("spec", "replicas"), "integer", id="replicas"),
    pytest.param("", "Pod", ("metadata", "creationTimestamp"), "string", id="metadata"),
])
def test_explain_finds_described_fields(group: str, kind: str, path: tuple[str, ...],
                                        type_name: str) -> None:
    doc = document(builtin_catalog(), group)
    root = kind_schema(doc, group, "v1", kind)
    assert root["description"]
    found = field(doc, root, *path)
    assert found["type"] == type_name
    assert found["description"]


def test_pod_spec_requires_containers_of_kind_container() -> None:
    doc = document(builtin_catalog(), "")
    pod_spec = resolve(doc, field(doc, kind_schema(doc, "", "v1", "Pod"), "spec"))
    assert "containers" in pod_spec["required"]
    containers = pod_spec["properties"]["containers"]
    assert containers["items"] == {"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"}
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert doc["components"]["schemas"]["io.k8s.api.core.v1.Container"]["description"] == (
        "A single application container that you want to run within a pod.")


def test_custom_resource_schema_is_published_with_gvk_and_object_fields() -> None:
    catalog = with_widgets()
    original = copy.deepcopy(WIDGET_SCHEMA)
    doc = document(catalog, "example.com", crd_schemas={("example.com", "v1", "Widget"):
                                                        WIDGET_SCHEMA})
    assert original == WIDGET_SCHEMA  # the CRD's schema is not modified
    name = custom_schema_name("example.com", "v1", "Widget")
    assert name == "com.example.v1.Widget"
    widget = doc["components"]["schemas"][name]
    assert widget == kind_schema(doc, "example.com", "v1", "Widget")
    assert widget["description"] == "A widget."
    assert widget["properties"]["spec"] == WIDGET_SCHEMA["properties"]["spec"]
    assert {"apiVersion", "kind", "metadata"} <= set(widget["properties"])
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in doc["components"]["schemas"]
    widget_list = kind_schema(doc, "example.com", "v1", "WidgetList")
    assert widget_list["properties"]["items"]["items"] == {"$ref": f"#/components/schemas/{name}"}


def test_builtin_kind_without_upstream_schema_is_explainable_and_merge_patched() -> None:
    record = ResourceInfo(group="records.kubegc.io", versions=("v1",), resource="records",
                          kind="Record", namespaced=False)
    catalog = builtin_catalog()
    catalog.add(record)
    doc = document(catalog, "records.kubegc.io")
    schema = kind_schema(doc, "records.kubegc.io", "v1", "Record")
    assert schema["x-kubernetes-preserve-unknown-fields"] is True
    [(_, op)] = patch_operations(doc)
    assert SMP not in op["requestBody"]["content"]
    assert kubectl_supports_field_validation(
        doc, {"group": "records.kubegc.io", "kind": "Record", "version": "v1"})


def test_custom_resource_without_schema_accepts_anything() -> None:
    doc = document(with_widgets(), "example.com")
    widget = kind_schema(doc, "example.com", "v1", "Widget")
    assert widget["x-kubernetes-preserve-unknown-fields"] is True


def test_document_is_openapi_3() -> None:
    doc = document(builtin_catalog(), "")
    assert doc["openapi"] == "3.0.0"
    assert doc["info"]["title"] == "Kubernetes"


def _undescribed(schema: dict[str, Any], path: str) -> Iterator[str]:
    for name, prop in (schema.get("properties") or {}).items():
        if not prop.get("description"):
            yield f"{path}.{name}"
        yield from _undescribed(prop, f"{path}.{name}")
        yield from _undescribed(prop.get("items") or {}, f"{path}.{name}[]")


def test_deletion_record_documents_every_field() -> None:
    """`kubectl explain deletionrecords` reads kubegc's own kind from here: every field of
    kubegc.controllers.deletionrecords.to_object is described."""
    doc = document(builtin_catalog(), "kubegc.io")
    record = kind_schema(doc, "kubegc.io", "v1", "DeletionRecord")
    assert record["description"].startswith("DeletionRecord is kubegc's durable record")
    assert list(_undescribed(record, "DeletionRecord")) == []
    written = to_object(DeletionRecord(
        datetime.now(UTC), RecordAction.DELETE, ObjectReference(
        "v1", "Pod", "p", "u", namespace="ns"),
        DecisionReason.OWNER_ABSENT, "m", "Background",
        (OwnerClassification("v1", "Pod", "o", "ou", Classification.DANGLING, "NotFound"),)), 1)
    other = deletion_to_object(Deletion(
        datetime.now(UTC), "taint-eviction-controller",
        ObjectReference("v1", "Pod", "p", "u", namespace="ns"), "TolerationExpired", "m",
        node="n", taint="k=v:NoExecute", toleration="k=v:NoExecute for 5s"), 2)
    # the eviction's records add who asked and the budget (kubegc.api.deletionrecord)
    assert set(written) | set(other) | {"user", "budget"} == set(record["properties"])
    assert set(written["object"]) == set(record["properties"]["object"]["properties"])
    owner = record["properties"]["owners"]["items"]
    assert set(written["owners"][0]) == set(owner["properties"])
    assert set(record["properties"]["action"]["enum"]) == {a.value for a in RecordAction} | {
        ACTION_EVICT}
    assert set(record["properties"]["reason"]["enum"]) == {r.value for r in DecisionReason} | {
        EVICTION_BY_EVICTION_API} | set(DELETION_REASONS)
    assert set(owner["properties"]["classification"]["enum"]) == {c.value for c in Classification}
    listed = kind_schema(doc, "kubegc.io", "v1", "DeletionRecordList")
    assert listed["properties"]["items"]["items"] == {
        "$ref": "#/components/schemas/io.kubegc.v1.DeletionRecord"}
