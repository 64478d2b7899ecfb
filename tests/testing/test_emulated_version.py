"""``kubegc.testing.Cluster(emulated_version=..., feature_gates=...)``: a test cluster with
the behaviour of the Kubernetes version production runs (docs/versions.md)."""

from __future__ import annotations

import asyncio

import pytest

from kubegc.api.errors import StatusError, is_not_found
from kubegc.api.pod import PODS
from kubegc.api.resources import GroupVersionResource
from kubegc.testing import Cluster

NAMESPACES = GroupVersionResource("", "v1", "namespaces")
CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")


async def _configmap_deleted_beside_a_held_pod(cluster: Cluster) -> bool:
    """Whether the namespace controller deletes a ConfigMap while a pod it deleted stays."""
    client = cluster.client
    await client.create(NAMESPACES, {"metadata": {"name": "app"}})
    await client.create(PODS, {"metadata": {"name": "p", "finalizers": ["example.com/x"]},
                               "spec": {"containers": [{"name": "c", "image": "i"}]}},
                        namespace="app")
    await client.create(CONFIGMAPS, {"metadata": {"name": "cm"}}, namespace="app")
    await client.delete(NAMESPACES, "app")
    await asyncio.wait_for(cluster.asettle(), 30)
    pod = await client.get(PODS, "p", namespace="app")
    assert pod["metadata"].get("deletionTimestamp")
    try:
        await client.get(CONFIGMAPS, "cm", namespace="app")
    except StatusError as e:
        assert is_not_found(e)
        return True
    return False


@pytest.mark.parametrize("version,gates,unordered", [
    (None, None, False),
    ("1.32", None, True),
    ("1.33", {"OrderedNamespaceDeletion": False}, True),
], ids=["default-1.33", "1.32", "1.33-gate-off"])
async def test_the_namespace_order_follows_the_emulated_version(
        version: str | None, gates: dict[str, bool] | None, unordered: bool) -> None:
    async with Cluster(controllers=["namespace"], emulated_version=version,
                       feature_gates=gates) as cluster:
        assert await _configmap_deleted_beside_a_held_pod(cluster) is unordered


def test_what_cannot_be_emulated_is_refused() -> None:
    with pytest.raises(ValueError, match=r"emulation version 1.29 is not between"):
        Cluster(emulated_version="1.29")
    with pytest.raises(ValueError, match="unrecognized feature gate: Nope"):
        Cluster(feature_gates={"Nope": True})
