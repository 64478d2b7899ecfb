"""The PVC protection controller against ``FakeClient`` (cf. upstream's
pvc_protection_controller_test.go): which pods hold a claim being deleted, the live list
that backs the informer, and the finalizer put back on a claim created without it.
tests/e2e/test_volumes.py drives it through kubectl."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api.pod import PODS
from kubegc.api.types import Obj
from kubegc.api.volumes import PVCS
from kubegc.client.fake import FakeClient
from kubegc.controllers.volume.pvcprotection import PVCProtectionController, pod_uses_pvc

from ..workload_harness import eventually, quiet, running
from .helpers import pod, pvc

FINALIZER = "kubernetes.io/pvc-protection"


def finalizers(client: FakeClient, name: str = "data") -> list[str]:
    stored = client.stored(PVCS, name, namespace="ns")
    return list(stored["metadata"].get("finalizers") or []) if stored else ["(gone)"]


def shut_down(p: Obj) -> Obj:
    p["metadata"].update(deletionTimestamp="2026-01-01T00:00:00Z",
                         deletionGracePeriodSeconds=0)
    return p


def _owned(p: Obj) -> Obj:
    return pvc("p-scratch", owner=p)


@pytest.mark.parametrize(("the_pod", "claim", "uses"), [
    pytest.param(pod(claim="data"), pvc(), True, id="scheduled-pod-names-it"),
    pytest.param(pod(claim="data", node=""), pvc(), False, id="not-scheduled"),
    pytest.param(pod(claim="other"), pvc(), False, id="another-claim"),
    pytest.param(pod(ephemeral="scratch"), _owned(pod(ephemeral="scratch")), True,
                 id="ephemeral-claim-made-for-it"),
    pytest.param(pod(ephemeral="scratch"), pvc("p-scratch"), False,
                 id="ephemeral-namesake-not-its-own"),
    pytest.param(shut_down(pod(ephemeral="scratch")), _owned(pod(ephemeral="scratch")), False,
                 id="ephemeral-pod-shut-down"),
    pytest.param(shut_down(pod(claim="data")), pvc(), True, id="shut-down-pod-keeps-plain"),
    pytest.param({**pod(claim="data"), "status": {"phase": "Succeeded"}}, pvc(), True,
                 id="terminated-pod-still-names-it"),
])
def test_pod_uses_pvc(the_pod: Obj, claim: Obj, uses: bool) -> None:
    assert pod_uses_pvc(the_pod, claim) is uses


async def test_a_claim_in_use_keeps_its_finalizer_until_the_pod_goes() -> None:
    client = FakeClient()
    client.add_object(PODS, pod(claim="data"))
    client.add_object(PVCS, pvc(deleting=True))
    async with running(PVCProtectionController, client) as controller:
        await quiet(controller)
        assert finalizers(client) == [FINALIZER]
        client.remove_object(PODS, "p", namespace="ns")
        await eventually(lambda: finalizers(client) in ([], ["(gone)"]))


async def test_an_unused_claim_is_released_at_once() -> None:
    client = FakeClient()
    client.add_object(PODS, pod(claim="other"))
    client.add_object(PVCS, pvc(deleting=True, finalizers=(FINALIZER, "example.com/keep")))
    async with running(PVCProtectionController, client):
        await eventually(lambda: finalizers(client) == ["example.com/keep"])


async def test_a_pod_only_the_live_list_shows_holds_it() -> None:
    """The informer has not seen the pod yet: the live LIST of the namespace has it."""
    client = FakeClient()
    client.add_object(PVCS, pvc(deleting=True))
    live: dict[str, Any] = {"apiVersion": "v1", "kind": "PodList", "metadata": {},
                            "items": [pod(claim="data")]}
    # the informer lists every namespace; the controller's live list asks for "ns"
    client.prepend_reactor("list", lambda action: live if action.namespace == "ns" else None,
                           gvr=PODS)
    async with running(PVCProtectionController, client) as controller:
        await quiet(controller)
        assert finalizers(client) == [FINALIZER]
    assert "list v1 pods ns" in [str(a) for a in client.actions]


async def test_a_claim_without_the_finalizer_gets_it() -> None:
    client = FakeClient()
    client.add_object(PVCS, pvc(finalizers=()))
    async with running(PVCProtectionController, client):
        await eventually(lambda: finalizers(client) == [FINALIZER])


async def test_a_burst_of_claims_shares_one_live_list() -> None:
    """Many claims of a namespace deleted at once (a namespace deletion): the pods are listed
    once for the burst and once more for its last claim, not once per claim
    (upstream's LazyLivePodList)."""
    client = FakeClient()
    for i in range(30):
        client.add_object(PVCS, pvc(f"c{i}", deleting=True))
    async with running(PVCProtectionController, client):
        await eventually(lambda: all(finalizers(client, f"c{i}") in ([], ["(gone)"])
                                     for i in range(30)))
    assert [str(a) for a in client.actions].count("list v1 pods ns") <= 2
