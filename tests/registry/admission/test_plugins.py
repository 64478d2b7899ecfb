"""The enabled set of admission plugins decides which run (kube-apiserver's
``--enable-admission-plugins`` / ``--disable-admission-plugins`` over its default set)."""

from __future__ import annotations

import pytest

from kubegc.api.errors import StatusError
from kubegc.registry import Registry
from kubegc.registry.admission import enabled_plugins, overlapping
from tests.registry.conftest import manifest, target


def test_the_default_set_and_the_flags() -> None:
    webhooks = {"MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"}
    assert enabled_plugins() == {"NamespaceLifecycle", "DefaultTolerationSeconds",
                                 "StorageObjectInUseProtection", *webhooks}
    assert enabled_plugins(["OwnerReferencesPermissionEnforcement"],
                           ["DefaultTolerationSeconds", "ResourceQuota"]) == {
        "NamespaceLifecycle", "OwnerReferencesPermissionEnforcement",
        "StorageObjectInUseProtection", *webhooks}
    assert overlapping(["A", "B"], ["B", "A", "C"]) == (
        "[A B] in enable-admission-plugins and disable-admission-plugins overlapped")
    assert overlapping(["A"], ["B"]) is None


async def test_default_toleration_seconds_disabled(registry: Registry) -> None:
    registry.admission.enabled = enabled_plugins(disable=["DefaultTolerationSeconds"])
    pods = target(registry, "pods")
    created = await registry.create(pods, manifest("pods", "p"))
    assert "tolerations" not in created["spec"]
    created["metadata"]["labels"] = {"a": "b"}
    updated, _ = await registry.update(pods, "p", created)
    assert "tolerations" not in updated["spec"]


async def test_namespace_lifecycle_disabled(registry: Registry) -> None:
    namespaces = target(registry, "namespaces", "")
    with pytest.raises(StatusError) as e:
        await registry.delete(namespaces, "kube-public")
    assert e.value.message == ('namespaces "kube-public" is forbidden: this namespace may not '
                               "be deleted")
    with pytest.raises(StatusError) as e:
        await registry.create(target(registry, "configmaps", "nowhere"),
                              manifest("configmaps", "c"))
    assert e.value.code == 404
    registry.admission.enabled = enabled_plugins(disable=["NamespaceLifecycle"])
    created = await registry.create(target(registry, "configmaps", "nowhere"),
                                    manifest("configmaps", "c"))
    assert created["metadata"]["namespace"] == "nowhere"
    deleted, _ = await registry.delete(namespaces, "kube-public")
    assert deleted["metadata"]["deletionTimestamp"]
