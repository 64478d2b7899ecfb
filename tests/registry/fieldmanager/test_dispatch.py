"""``kubegc.registry.fieldmanager.apply_patch``: body decoding and dispatch on the PATCH
content type."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api.errors import StatusError
from kubegc.api.resources import BUILTIN_RESOURCES
from kubegc.registry.fieldmanager import (
    APPLY_PATCH,
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    apply_patch,
    has_strategic_schema,
)

DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
          "spec": {"replicas": 1, "template": {"spec": {"containers": [
              {"name": "nginx", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}]}}}}
WIDGET = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
          "spec": {"size": 1, "items": [{"name": "a"}]}}


def patch_deploy(patch_type: str, body: bytes, **kw: Any) -> Any:
    return apply_patch(patch_type, DEPLOY, body, group="apps", kind="Deployment", **kw)


@pytest.mark.parametrize(("patch_type", "body"), [
    pytest.param(JSON_PATCH, b'[{"op":"replace","path":"/spec/replicas","value":3}]', id="json"),
    pytest.param(MERGE_PATCH, b'{"spec":{"replicas":3}}', id="merge"),
    pytest.param(STRATEGIC_MERGE_PATCH, b'{"spec":{"replicas":3}}', id="strategic"),
    pytest.param(MERGE_PATCH + "; charset=utf-8", b'{"spec":{"replicas":3}}',
                 id="content-type-parameters"),
])
def test_each_type_patches(patch_type: str, body: bytes) -> None:
    assert patch_deploy(patch_type, body)["spec"]["replicas"] == 3


def test_strategic_merges_containers_where_merge_patch_replaces() -> None:
    body = b'{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"x"}]}}}}'
    strategic = patch_deploy(STRATEGIC_MERGE_PATCH, body)["spec"]["template"]["spec"]
    merge = patch_deploy(MERGE_PATCH, body)["spec"]["template"]["spec"]
    assert strategic["containers"][0]["ports"] == [{"containerPort": 80}]
    assert merge["containers"] == [{"name": "nginx", "image": "x"}]


def test_strategic_on_custom_resource_is_415() -> None:
    with pytest.raises(StatusError) as caught:
        apply_patch(STRATEGIC_MERGE_PATCH, WIDGET, b"{}", group="example.com", kind="Widget")
    assert caught.value.to_status() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "the body of the request was in an unknown format - accepted media types "
                   "include: application/json-patch+json, application/merge-patch+json, "
                   "application/apply-patch+yaml",
        "reason": "UnsupportedMediaType", "code": 415,
    }


def test_unknown_type_on_builtin_lists_strategic_too() -> None:
    with pytest.raises(StatusError) as caught:
        patch_deploy("application/yaml", b"{}")
    assert caught.value.code == 415
    assert caught.value.message.endswith(
        "application/json-patch+json, application/merge-patch+json, "
        "application/strategic-merge-patch+json, application/apply-patch+yaml")


def test_merge_patch_on_custom_resource() -> None:
    result = apply_patch(MERGE_PATCH, WIDGET, b'{"spec":{"size":3}}', group="example.com",
                         kind="Widget")
    assert result["spec"] == {"size": 3, "items": [{"name": "a"}]}


@pytest.mark.parametrize(("body", "message"), [
    pytest.param(b"[]", "json: cannot unmarshal array into Go value of type "
                 "map[string]interface {}", id="array"),
    pytest.param(b"{", "unexpected end of JSON input", id="truncated"),
    pytest.param(b'{"a" 1}', "invalid character '1' after object key", id="missing-colon"),
    pytest.param(b'{"a":1,}', "invalid character '}' looking for beginning of object key string",
                 id="trailing-comma"),
])
def test_undecodable_strategic_body_is_400(body: bytes, message: str) -> None:
    with pytest.raises(StatusError) as caught:
        patch_deploy(STRATEGIC_MERGE_PATCH, body)
    assert (caught.value.code, caught.value.reason, caught.value.message) == (
        400, "BadRequest", message)


def test_null_strategic_body_changes_nothing() -> None:
    assert patch_deploy(STRATEGIC_MERGE_PATCH, b"null") == DEPLOY


APPLY_BODIES = [
    pytest.param(b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
                 b"spec:\n  replicas: 3\n", id="yaml"),
    pytest.param(b'{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},'
                 b'"spec":{"replicas":3}}', id="json"),
    pytest.param(b"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n"
                 b"spec: {replicas: 3}\n---\nkind: Ignored\n", id="first-yaml-document"),
]


@pytest.mark.parametrize("body", APPLY_BODIES)
def test_apply_body_yaml_or_json(body: bytes) -> None:
    created = apply_patch(APPLY_PATCH, None, body, group="apps", kind="Deployment",
                          manager="kubectl", now="2024-01-01T00:00:00Z")
    assert created["spec"] == {"replicas": 3}
    assert created["metadata"]["managedFields"][0]["manager"] == "kubectl"


def test_apply_keeps_timestamps_as_strings() -> None:
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {when: 2024-01-01}\n"
    created = apply_patch(APPLY_PATCH, None, body, group="", kind="ConfigMap", manager="me",
                          now="2024-01-01T00:00:00Z")
    assert created["data"] == {"when": "2024-01-01"}


APPLY_ERRORS = [
    pytest.param(b"kind: [\n", "kubectl", "", 400,
                 "error decoding YAML: error converting YAML to JSON: yaml: line 2:",
                 id="yaml-syntax"),
    pytest.param(b"- a\n", "kubectl", "", 400,
                 "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: "
                 "cannot unmarshal array into Go value of type map[string]interface {}",
                 id="not-a-map"),
    pytest.param(b"apiVersion: apps/v1\nkind: Deployment\n", "", "", 422,
                 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
                 "is required for apply patch", id="no-field-manager"),
    pytest.param(b"apiVersion: apps/v2\nkind: Deployment\n", "kubectl", "apps/v1", 400,
                 "Incorrect version specified in apply patch. Specified patch version: "
                 "apps/v2, expected: apps/v1", id="wrong-version"),
]


@pytest.mark.parametrize(("body", "manager", "api_version", "code", "message"), APPLY_ERRORS)
def test_apply_errors(body: bytes, manager: str, api_version: str, code: int,
                      message: str) -> None:
    with pytest.raises(StatusError) as caught:
        apply_patch(APPLY_PATCH, DEPLOY, body, group="apps", kind="Deployment",
                    manager=manager, api_version=api_version, now="2024-01-01T00:00:00Z")
    assert caught.value.code == code
    assert caught.value.message.startswith(message)


def test_every_builtin_kind_has_strategic_metadata() -> None:
    assert all(has_strategic_schema(info.group, info.kind) for info in BUILTIN_RESOURCES)
    assert not has_strategic_schema("example.com", "Widget")


def test_non_apply_patch_needs_an_object() -> None:
    with pytest.raises(ValueError, match="needs an existing object"):
        apply_patch(MERGE_PATCH, None, b"{}", group="apps", kind="Deployment")
