"""StorageObjectInUseProtection (kube-apiserver's admission plugin, on by default): a
created claim gets ``kubernetes.io/pvc-protection``, a created volume
``kubernetes.io/pv-protection``; on create only, so removing the finalizer (the protection
controllers' release) sticks (cf. storageobjectinuseprotection/admission_test.go)."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.registry import Registry
from kubegc.registry.admission import STORAGE_OBJECT_IN_USE_PROTECTION, enabled_plugins


def _pvc(finalizers: list[str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "data"}
    if finalizers is not None:
        meta["finalizers"] = finalizers
    return {"metadata": meta, "spec": {"accessModes": ["ReadWriteOnce"],
                                       "resources": {"requests": {"storage": "1Gi"}}}}


def _pv() -> dict[str, Any]:
    return {"metadata": {"name": "vol"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     "hostPath": {"path": "/tmp/vol"}}}


@pytest.mark.parametrize(("given", "expected"), [
    pytest.param(None, ["kubernetes.io/pvc-protection"], id="none"),
    pytest.param(["example.com/keep"], ["example.com/keep", "kubernetes.io/pvc-protection"],
                 id="others-kept"),
    pytest.param(["kubernetes.io/pvc-protection"], ["kubernetes.io/pvc-protection"],
                 id="already-there"),
])
async def test_created_claim_gets_the_finalizer(registry: Registry, given: list[str] | None,
                                                expected: list[str]) -> None:
    t = registry.target("", "v1", "persistentvolumeclaims", "default")
    created = await registry.create(t, _pvc(given))
    assert created["metadata"]["finalizers"] == expected


async def test_created_volume_gets_the_finalizer(registry: Registry) -> None:
    t = registry.target("", "v1", "persistentvolumes", "")
    created = await registry.create(t, _pv())
    assert created["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]


async def test_an_update_that_removes_it_is_kept(registry: Registry) -> None:
    t = registry.target("", "v1", "persistentvolumeclaims", "default")
    created = await registry.create(t, _pvc())
    created["metadata"]["finalizers"] = []
    updated, _ = await registry.update(t, "data", created)
    assert not updated["metadata"].get("finalizers")


async def test_other_kinds_are_left_alone(registry: Registry) -> None:
    t = registry.target("", "v1", "configmaps", "default")
    created = await registry.create(t, {"metadata": {"name": "c"}})
    assert not created["metadata"].get("finalizers")


async def test_disabled_it_adds_nothing(registry: Registry) -> None:
    registry.admission.enabled = enabled_plugins(disable=[STORAGE_OBJECT_IN_USE_PROTECTION])
    t = registry.target("", "v1", "persistentvolumeclaims", "default")
    created = await registry.create(t, _pvc())
    assert not created["metadata"].get("finalizers")
