"""Namespace deletion in storage, as upstream's pkg/registry/core/namespace/storage/
storage_test.go (TestDeleteNamespaceWith*Finalizers, TestUpdateDeletingNamespaceWith*,
TestFinalizeDeletingNamespaceWith*, TestDeleteWithGCFinalizers)."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api.errors import StatusError
from kubegc.registry import Registry

from ...conftest import manifest, target


def _ns(registry: Registry) -> Any:
    return target(registry, "namespaces", "")


async def _gone(registry: Registry, name: str) -> bool:
    try:
        await registry.get(_ns(registry), name)
    except StatusError as e:
        return e.code == 404
    return False


async def test_first_delete_only_marks_terminating(registry: Registry) -> None:
    t = _ns(registry)
    created = await registry.create(t, {"metadata": {"name": "ns1"}})
    assert created["spec"]["finalizers"] == ["kubernetes"]
    assert created["status"]["phase"] == "Active"
    result, removed = await registry.delete(t, "ns1", {"propagationPolicy": "Background"})
    assert not removed
    assert result["status"]["phase"] == "Terminating"
    assert result["metadata"]["deletionTimestamp"]


async def test_ns08_delete_with_incomplete_spec_finalizers_returns_namespace(
        registry: Registry) -> None:
    t = _ns(registry)
    await registry.create(t, {"metadata": {"name": "ns1"}})
    await registry.delete(t, "ns1", {})
    again, removed = await registry.delete(t, "ns1", {})
    assert not removed and again["metadata"]["name"] == "ns1"
    assert not await _gone(registry, "ns1")


async def test_ns09_delete_with_complete_finalizers_removes(registry: Registry) -> None:
    t = _ns(registry)
    await registry.create(t, {"metadata": {"name": "ns1"}})
    await registry.delete(t, "ns1", {})
    await registry.update(t, "ns1", {"metadata": {"name": "ns1"}, "spec": {"finalizers": []}},
                          subresource="finalize")
    assert await _gone(registry, "ns1")


async def test_ns10_update_keeps_namespace_with_metadata_finalizers(registry: Registry) -> None:
    t = _ns(registry)
    await registry.create(t, {"metadata": {"name": "ns1", "finalizers": ["example.com/foo"]},
                              "spec": {"finalizers": ["kubernetes"]}})
    await registry.delete(t, "ns1", {})
    await registry.update(t, "ns1", {"metadata": {"name": "ns1"}, "spec": {}},
                          subresource="finalize")
    current = await registry.get(t, "ns1")
    await registry.update(t, "ns1", current)
    assert not await _gone(registry, "ns1")


async def test_ns11_update_keeps_namespace_with_spec_finalizers(registry: Registry) -> None:
    t = _ns(registry)
    await registry.create(t, {"metadata": {"name": "ns1"}})
    await registry.delete(t, "ns1", {})
    current = await registry.get(t, "ns1")
    current["spec"]["finalizers"] = []  # a plain update cannot change spec.finalizers
    updated, _ = await registry.update(t, "ns1", current)
    assert updated["spec"]["finalizers"] == ["kubernetes"]
    assert not await _gone(registry, "ns1")


async def test_ns12_update_clearing_metadata_finalizers_removes(registry: Registry) -> None:
    t = _ns(registry)
    await registry.create(t, {"metadata": {"name": "ns1", "finalizers": ["example.com/foo"]}})
    await registry.delete(t, "ns1", {})
    await registry.update(t, "ns1", {"metadata": {"name": "ns1"}, "spec": {}},
                          subresource="finalize")
    current = await registry.get(t, "ns1")
    current["metadata"]["finalizers"] = []
    await registry.update(t, "ns1", current)
    assert await _gone(registry, "ns1")


async def test_ns13_finalize_with_metadata_finalizers_left_keeps(registry: Registry) -> None:
    t = _ns(registry)
    await registry.create(t, {"metadata": {"name": "ns1", "finalizers": ["example.com/foo"]}})
    await registry.delete(t, "ns1", {})
    await registry.update(t, "ns1", {"metadata": {"name": "ns1"}, "spec": {"finalizers": []}},
                          subresource="finalize")
    assert not await _gone(registry, "ns1")


NS14 = [
    (None, ["orphan"], ["orphan"]),
    (None, ["foregroundDeletion"], ["foregroundDeletion"]),
    (None, [], []),
    ({"propagationPolicy": "Background"}, ["orphan"], []),
    ({"propagationPolicy": "Foreground"}, [], ["foregroundDeletion"]),
    ({"propagationPolicy": "Foreground"}, ["orphan"], ["foregroundDeletion"]),
    ({"propagationPolicy": "Orphan"}, ["foregroundDeletion"], ["orphan"]),
    ({"orphanDependents": True}, [], ["orphan"]),
    ({"orphanDependents": True}, ["foregroundDeletion"], ["orphan"]),
]


@pytest.mark.parametrize(("options", "existing", "expected"), NS14,
                         ids=[f"{o}-{e}" for o, e, _ in NS14])
async def test_ns14_delete_with_gc_finalizers(registry: Registry, options: dict[str, Any] | None,
                                              existing: list[str], expected: list[str]) -> None:
    t = _ns(registry)
    meta: dict[str, Any] = {"name": "ns1"}
    if existing:
        meta["finalizers"] = existing
    await registry.create(t, {"metadata": meta})
    result, _ = await registry.delete(t, "ns1", options)
    assert result["metadata"].get("finalizers", []) == expected


async def test_namespace_uid_precondition(registry: Registry) -> None:
    t = _ns(registry)
    created = await registry.create(t, {"metadata": {"name": "ns1"}})
    with pytest.raises(StatusError) as e:
        await registry.delete(t, "ns1", {"preconditions": {"uid": "x"}})
    assert e.value.code == 409
    assert e.value.message == (
        'Operation cannot be fulfilled on namespaces "ns1": Precondition failed: UID in '
        f'precondition: x, UID in object meta: {created["metadata"]["uid"]}')


async def test_create_in_terminating_namespace_is_forbidden(registry: Registry) -> None:
    t = _ns(registry)
    await registry.create(t, {"metadata": {"name": "ns1"}})
    await registry.delete(t, "ns1", {})
    with pytest.raises(StatusError) as e:
        await registry.create(target(registry, "configmaps", "ns1"), manifest("configmaps", "c"))
    assert e.value.code == 403
    assert e.value.message == ('configmaps "c" is forbidden: unable to create new content in '
                               "namespace ns1 because it is being terminated")


async def test_create_in_missing_namespace_is_not_found(registry: Registry) -> None:
    with pytest.raises(StatusError) as e:
        await registry.create(target(registry, "configmaps", "nope"), manifest("configmaps", "c"))
    assert (e.value.code, e.value.message) == (404, 'namespaces "nope" not found')


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
async def test_system_namespaces_cannot_be_deleted(registry: Registry, name: str) -> None:
    with pytest.raises(StatusError) as e:
        await registry.delete(_ns(registry), name, {})
    assert e.value.code == 403
    assert e.value.message == f'namespaces "{name}" is forbidden: this namespace may not be deleted'
