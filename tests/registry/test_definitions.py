"""Built-in OpenAPI schemas and the required-field check (the official Python client cannot
read objects that lack fields the schema marks required)."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from kubegc.api.resources import BUILTIN_RESOURCES
from kubegc.registry.definitions import (
    definition_name,
    definitions,
    field_schema,
    missing_required,
    missing_required_in,
    required_fields,
    unknown_fields,
)

REPO = Path(__file__).resolve().parents[2]
DATA_FILE = REPO / "src" / "kubegc" / "registry" / "openapi_data" / "schemas.json.gz"

POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
    "spec": {"containers": [{"name": "nginx", "image": "nginx", "ports": [{"containerPort": 80}]}]},
}
DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": copy.deepcopy(POD["spec"])},
    },
}


def edited(obj: dict[str, Any], path: str, value: Any = ..., *, delete: bool = False
           ) -> dict[str, Any]:
    """A copy of ``obj`` with ``path`` (dots, ``[i]`` for list items) set or deleted."""
    out = copy.deepcopy(obj)
    parent: Any = out
    steps = [int(s[:-1]) if s.endswith("]") else s for s in path.replace("[", ".").split(".")]
    for step in steps[:-1]:
        parent = parent[step]
    if delete:
        del parent[steps[-1]]
    else:
        parent[steps[-1]] = value
    return out


CASES = [
    pytest.param(POD, "Pod", [], id="valid-pod"),
    pytest.param(edited(POD, "spec.containers", delete=True), "Pod", ["spec.containers"],
                 id="pod-without-containers"),
    pytest.param(edited(POD, "spec.containers", None), "Pod", ["spec.containers"],
                 id="pod-null-containers"),
    pytest.param(edited(POD, "spec.containers[0].name", delete=True), "Pod",
                 ["spec.containers[0].name"], id="container-without-name"),
    pytest.param(edited(POD, "spec.containers[0].ports[0].containerPort", delete=True), "Pod",
                 ["spec.containers[0].ports[0].containerPort"], id="port-without-number"),
    pytest.param(edited(POD, "metadata.ownerReferences",
                        [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs"}]),
                 "Pod", ["metadata.ownerReferences[0].uid"], id="owner-reference-without-uid"),
    pytest.param(edited(POD, "status", {"conditions": [{"type": "Ready"}]}), "Pod",
                 ["status.conditions[0].status"], id="status-condition-without-status"),
    pytest.param(DEPLOYMENT, "Deployment", [], id="valid-deployment"),
    pytest.param(edited(DEPLOYMENT, "spec", {}), "Deployment",
                 ["spec.selector", "spec.template"], id="deployment-empty-spec"),
    pytest.param(edited(DEPLOYMENT, "spec.template.spec", {}), "Deployment",
                 ["spec.template.spec.containers"], id="deployment-template-without-containers"),
]


@pytest.mark.parametrize(("obj", "kind", "missing"), CASES)
def test_missing_required(obj: dict[str, Any], kind: str, missing: list[str]) -> None:
    group = "apps" if kind == "Deployment" else ""
    assert missing_required(obj, group, "v1", kind) == missing


@pytest.mark.parametrize(("obj", "kind", "missing"), CASES)
def test_python_client_reads_exactly_the_objects_that_pass(
    obj: dict[str, Any], kind: str, missing: list[str],
) -> None:
    client = pytest.importorskip("kubernetes.client")
    model = getattr(client, f"V1{kind}")
    if missing:
        with pytest.raises(ValueError, match="validation error"):
            model.from_dict(obj)
    else:
        model.from_dict(obj)


@pytest.mark.parametrize(("group", "version", "kind"), [
    ("example.com", "v1", "Widget"), ("apps", "v1beta1", "Deployment"), ("", "v1", "Nope"),
])
def test_kinds_without_schema_have_no_required_fields(group: str, version: str, kind: str) -> None:
    assert missing_required({"spec": {}}, group, version, kind) == []
    assert required_fields(group, version, kind) == ()


def test_missing_required_in_a_crd_schema() -> None:
    crd_schema = {"type": "object", "properties": {"spec": {
        "type": "object", "required": ["size"],
        "properties": {"parts": {"type": "array", "items": {
            "type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}},
    }}}
    assert missing_required_in({"spec": {"size": 1}}, crd_schema) == []
    assert missing_required_in({"spec": {"parts": [{"name": "a"}, {}]}}, crd_schema) == [
        "spec.size", "spec.parts[1].name"]


def test_every_upstream_builtin_kind_and_list_has_a_schema_with_its_gvk() -> None:
    upstream = [info for info in BUILTIN_RESOURCES if not info.group.endswith("kubegc.io")]
    assert len(upstream) >= 50
    for info in upstream:
        kinds = (info.kind, info.list_kind_name) if info.supports("list") else (info.kind,)
        for version in info.versions:  # every served version (autoscaling: v2 and v1)
            for kind in kinds:
                name = definition_name(info.group, version, kind)
                assert name is not None, (kind, version)
                assert {"group": info.group, "kind": kind, "version": version} in (
                    definitions()[name]["x-kubernetes-group-version-kind"])


@pytest.mark.parametrize(("group", "kind", "name"), [
    ("", "Pod", "io.k8s.api.core.v1.Pod"),
    ("", "Event", "io.k8s.api.core.v1.Event"),
    ("events.k8s.io", "Event", "io.k8s.api.events.v1.Event"),
    ("apps", "Deployment", "io.k8s.api.apps.v1.Deployment"),
    ("apiextensions.k8s.io", "CustomResourceDefinition",
     "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"),
    ("autoscaling", "Scale", "io.k8s.api.autoscaling.v1.Scale"),
    ("", "Status", "io.k8s.apimachinery.pkg.apis.meta.v1.Status"),
])
def test_definitions_use_upstream_names(group: str, kind: str, name: str) -> None:
    assert definition_name(group, "v1", kind) == name


def test_required_fields_top_level() -> None:
    assert required_fields("events.k8s.io", "v1", "Event") == ("eventTime",)
    assert required_fields("", "v1", "Pod") == ()


@pytest.mark.parametrize(("kind", "path", "strategy", "merge_key"), [
    pytest.param("Pod", ("spec", "containers"), "merge", "name", id="containers"),
    pytest.param("Pod", ("spec", "containers", "env"), "merge", "name", id="env"),
    pytest.param("Pod", ("spec", "containers", "ports"), "merge", "containerPort", id="ports"),
    pytest.param("Pod", ("spec", "volumes"), "merge,retainKeys", "name", id="volumes"),
    pytest.param("Pod", ("metadata", "ownerReferences"), "merge", "uid", id="owner-refs"),
    pytest.param("Pod", ("metadata", "finalizers"), "merge", None, id="finalizers"),
    pytest.param("Deployment", ("spec", "strategy"), "retainKeys", None, id="strategy"),
    pytest.param("Deployment", ("spec", "template", "spec", "initContainers"), "merge", "name",
                 id="template-init-containers"),
    pytest.param("Pod", ("spec", "tolerations"), None, None, id="atomic-tolerations"),
])
def test_strategic_merge_patch_metadata(kind: str, path: tuple[str, ...], strategy: str | None,
                                        merge_key: str | None) -> None:
    group = "apps" if kind == "Deployment" else ""
    found = field_schema(group, "v1", kind, path)
    assert found is not None
    assert found.get("x-kubernetes-patch-strategy") == strategy
    assert found.get("x-kubernetes-patch-merge-key") == merge_key


def test_field_schema_unknown_field_or_kind() -> None:
    assert field_schema("", "v1", "Pod", ("spec", "nope")) is None
    assert field_schema("example.com", "v1", "Widget", ("spec",)) is None
    labels = field_schema("", "v1", "Pod", ("metadata", "labels", "app"))
    assert labels == {"type": "string"}


def test_data_file_stays_small() -> None:
    assert DATA_FILE.stat().st_size < 300_000


def test_data_file_is_what_the_generator_produces() -> None:
    pytest.importorskip("kubernetes")
    spec = importlib.util.spec_from_file_location("gen_openapi",
                                                  REPO / "scripts" / "gen_openapi.py")
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    assert generator.generate()["definitions"] == definitions()


def test_clean_specs_are_remembered_but_unknown_fields_are_always_found() -> None:
    def deployment(extra: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                "spec": {"replicas": 2, **extra}}

    for _ in range(2):  # the second time, from the memo
        assert unknown_fields(deployment({}), "apps", "v1", "Deployment", prune=True) == []
    for _ in range(2):  # never remembered: reported and pruned every time
        bad = deployment({"replicas2": 3})
        assert unknown_fields(bad, "apps", "v1", "Deployment", prune=True) == [
            "spec.replicas2"]
        assert bad["spec"] == {"replicas": 2}
