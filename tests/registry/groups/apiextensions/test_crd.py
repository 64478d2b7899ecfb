"""CustomResourceDefinitions at runtime: resources appear and disappear, several served
versions share one store, the status subresource, and a deleted CRD takes its instances."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubegc.api.auth import UserInfo, as_user, request_user
from kubegc.api.errors import StatusError
from kubegc.registry import Registry
from kubegc.registry.groups.apiextensions import finalizer as crd_finalizer

from ...conftest import target

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
             "versions": [
                 {"name": "v1", "served": True, "storage": True,
                  "subresources": {"status": {}},
                  "schema": {"openAPIV3Schema": {
                      "type": "object", "x-kubernetes-preserve-unknown-fields": True}}},
                 {"name": "v1beta1", "served": True, "storage": False,
                  "subresources": {"status": {}},
                  "schema": {"openAPIV3Schema": {
                      "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
}


def _widget(name: str, version: str = "v1") -> dict[str, Any]:
    return {"apiVersion": f"example.com/{version}", "kind": "Widget",
            "metadata": {"name": name}, "spec": {"size": 1}, "status": {"ready": True}}


async def test_crd_serves_its_versions_from_one_store(registry: Registry) -> None:
    crds = target(registry, "customresourcedefinitions", "")
    created = await registry.create(crds, CRD)
    conditions = {c["type"]: c["status"] for c in created["status"]["conditions"]}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    v1 = registry.target("example.com", "v1", "widgets", "default")
    beta = registry.target("example.com", "v1beta1", "widgets", "default")
    made = await registry.create(beta, _widget("w1", "v1beta1"))
    assert made["apiVersion"] == "example.com/v1beta1"
    assert "status" not in made  # status is a subresource: dropped on create
    as_v1 = await registry.get(v1, "w1")
    assert as_v1["apiVersion"] == "example.com/v1"
    assert as_v1["metadata"]["uid"] == made["metadata"]["uid"]
    with_status, _ = await registry.update(v1, "w1", _widget("w1"), subresource="status")
    assert with_status["status"] == {"ready": True}
    assert with_status["metadata"]["generation"] == 1  # status changes do not bump it
    spec_changed, _ = await registry.update(v1, "w1", dict(_widget("w1"), spec={"size": 2}))
    assert spec_changed["metadata"]["generation"] == 2


async def test_strategic_merge_patch_on_custom_resource_is_415(registry: Registry) -> None:
    await registry.create(target(registry, "customresourcedefinitions", ""), CRD)
    v1 = registry.target("example.com", "v1", "widgets", "default")
    await registry.create(v1, _widget("w1"))
    with pytest.raises(StatusError) as e:
        await registry.patch(v1, "w1", "application/strategic-merge-patch+json", b"{}")
    assert e.value.code == 415
    assert e.value.message == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, "
        "application/apply-patch+yaml")


async def test_deleting_a_crd_deletes_its_instances_then_the_resource(
        registry: Registry) -> None:
    crds = target(registry, "customresourcedefinitions", "")
    await registry.create(crds, CRD)
    v1 = registry.target("example.com", "v1", "widgets", "default")
    for i in range(3):
        await registry.create(v1, _widget(f"w{i}"))
    await registry.delete(crds, "widgets.example.com", {})

    async def gone() -> None:
        while registry.catalog.get("example.com", "widgets") is not None:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(gone(), 10)
    with pytest.raises(StatusError) as e:
        await registry.get(crds, "widgets.example.com")
    assert e.value.code == 404
    with pytest.raises(StatusError) as e:
        registry.target("example.com", "v1", "widgets", "default")
    assert e.value.code == 404
    listed = await registry.kv.range("/registry/example.com/widgets/", prefix=True)
    assert listed.kvs == []


async def test_no_new_instances_while_the_crd_terminates(registry: Registry) -> None:
    crds = target(registry, "customresourcedefinitions", "")
    await registry.create(crds, CRD)
    v1 = registry.target("example.com", "v1", "widgets", "default")
    held = _widget("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await registry.create(v1, held)
    await registry.delete(crds, "widgets.example.com", {})  # waits for "held" to go
    with pytest.raises(StatusError) as e:
        await registry.create(v1, _widget("late"))
    assert (e.value.code, e.value.message) == (
        405, "create not allowed while custom resource definition is terminating")


async def test_a_crd_cleanup_runs_as_the_apiserver_not_as_the_user_who_deleted_it(
        registry: Registry, monkeypatch: pytest.MonkeyPatch) -> None:
    """The instances of a deleted CRD are deleted by the apiserver itself: its cleanup task
    does not inherit the deleting request's user (admission would judge jane's rights)."""
    crds = target(registry, "customresourcedefinitions", "")
    await registry.create(crds, CRD)
    v1 = registry.target("example.com", "v1", "widgets", "default")
    await registry.create(v1, _widget("w0"))
    users: list[UserInfo | None] = []
    finalize = crd_finalizer.finalize

    async def recording(*args: Any, **kwargs: Any) -> Any:
        users.append(request_user())
        return await finalize(*args, **kwargs)

    monkeypatch.setattr(crd_finalizer, "finalize", recording)
    with as_user(UserInfo("jane", groups=("system:authenticated",))):
        await registry.delete(crds, "widgets.example.com", {})

    async def gone() -> None:
        while registry.catalog.get("example.com", "widgets") is not None:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(gone(), 10)
    assert users == [None]
