"""The volume controllers in an in-process kubegc, as their ServiceAccounts under the
bootstrap RBAC and with OwnerReferencesPermissionEnforcement on: the ephemeral-volume
controller may set blockOwnerDeletion on the pod (its role's ``pods/finalizers``), the
garbage collector deletes the claim with the pod, and pvc-protection releases it once the
pod is gone."""

from __future__ import annotations

from typing import Any

from kubegc.api.errors import StatusError
from kubegc.api.pod import PODS
from kubegc.api.volumes import PVCS
from kubegc.testing import Cluster

from .helpers import pod


async def _claim(cluster: Cluster, name: str) -> dict[str, Any] | None:
    try:
        found: dict[str, Any] = await cluster.client.get(PVCS, name, namespace="default")
    except StatusError:
        return None
    return found


async def test_an_ephemeral_claim_lives_and_dies_with_its_pod() -> None:
    async with Cluster(controllers=["*", "-scheduler"],
                       enable_admission_plugins=["OwnerReferencesPermissionEnforcement"]
                       ) as cluster:
        web = pod("web", node="kubegc-node-1", ephemeral="scratch")
        web["metadata"] = {"name": "web"}
        created = await cluster.client.create(PODS, web, namespace="default")
        await cluster.asettle()
        claim = await _claim(cluster, "web-scratch")
        assert claim is not None
        assert claim["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
        assert claim["metadata"]["ownerReferences"][0]["uid"] == created["metadata"]["uid"]
        await cluster.client.delete(PODS, "web", namespace="default")
        await cluster.asettle()
        assert await _claim(cluster, "web-scratch") is None
