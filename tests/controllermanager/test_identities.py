"""Each component acts as its upstream identity (kube-controller-manager with
``--use-service-account-credentials``): its kube-system ServiceAccount exists, its client is
that user, and RBAC refuses what its bootstrap role does not grant."""

from __future__ import annotations

import pytest

from kubegc.api.auth import KUBE_CONTROLLER_MANAGER, KUBE_SCHEDULER
from kubegc.api.clock import ManualClock
from kubegc.api.errors import StatusError
from kubegc.api.resources import GroupVersionResource
from kubegc.controllermanager.descriptors import CONTROLLERS
from kubegc.registry.groups.rbac.bootstrappolicy import CONTROLLER_ROLES, KUBELET_USER
from kubegc.testing import Cluster

SERVICEACCOUNTS = GroupVersionResource("", "v1", "serviceaccounts")
SECRETS = GroupVersionResource("", "v1", "secrets")


def test_every_service_account_identity_has_a_bootstrap_role() -> None:
    accounts = {d.service_account for d in CONTROLLERS.values() if d.service_account}
    assert accounts <= set(CONTROLLER_ROLES)
    assert CONTROLLERS["kubelet"].user is not None
    assert CONTROLLERS["kubelet"].user.name == KUBELET_USER


async def test_the_components_act_as_themselves() -> None:
    async with Cluster(controllers=["garbagecollector", "scheduler", "replicaset"],
                       clock=ManualClock()) as cluster:
        await cluster.asettle()
        listed = await cluster.client.list(SERVICEACCOUNTS, namespace="kube-system")
        names = {sa["metadata"]["name"] for sa in listed["items"]}
        assert {"generic-garbage-collector", "replicaset-controller"} <= names
        manager = cluster.cluster.controller_manager
        assert manager is not None
        assert manager.client.user.name == KUBE_CONTROLLER_MANAGER  # type: ignore[attr-defined]
        gc = manager.get("garbagecollector")
        scheduler = manager.get("scheduler")
        assert gc is not None and scheduler is not None
        gc_client = gc.gc._client  # type: ignore[attr-defined]
        assert gc_client.user.name == (
            "system:serviceaccount:kube-system:generic-garbage-collector")
        sa = next(s for s in listed["items"]
                  if s["metadata"]["name"] == "generic-garbage-collector")
        assert gc_client.user.uid == sa["metadata"]["uid"]
        assert scheduler.client.user.name == KUBE_SCHEDULER  # type: ignore[attr-defined]
        # the garbage collector may delete anything, but create nothing of its own
        with pytest.raises(StatusError) as refused:
            await gc_client.create(SECRETS, {"metadata": {"name": "s"}}, namespace="default")
        assert refused.value.message == (
            'secrets is forbidden: User "system:serviceaccount:kube-system:'
            'generic-garbage-collector" cannot create resource "secrets" in API group "" in '
            'the namespace "default"')
