"""The ephemeral-volume controller against ``FakeClient`` (cf. upstream's
ephemeral/controller_test.go): the claim ``<pod>-<volume>`` owned by the pod, made anew when
deleted, and a namesake the pod does not own left alone with upstream's event."""

from __future__ import annotations

from kubegc.api.pod import PODS
from kubegc.api.volumes import PVCS
from kubegc.client.fake import FakeClient
from kubegc.controllers.volume.ephemeral import EphemeralController

from ..workload_harness import event_messages, eventually, quiet, running
from .helpers import pod, pvc


def claims(client: FakeClient) -> list[str]:
    return sorted(o["metadata"]["name"] for o in client.objects(PVCS))


async def test_the_claim_is_created_owned_by_the_pod() -> None:
    client = FakeClient()
    client.add_object(PODS, pod("web", ephemeral="scratch", claim="shared"))
    async with running(EphemeralController, client):
        await eventually(lambda: claims(client) == ["web-scratch"])
        created = client.stored(PVCS, "web-scratch", namespace="ns")
        assert created is not None
        assert created["metadata"]["ownerReferences"] == [
            {"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": "uid-web",
             "controller": True, "blockOwnerDeletion": True}]
        assert created["metadata"]["labels"] == {"app": "x"}
        assert created["spec"]["resources"] == {"requests": {"storage": "1Gi"}}
        client.remove_object(PVCS, "web-scratch", namespace="ns")
        await eventually(lambda: claims(client) == ["web-scratch"])


async def test_a_pod_being_deleted_gets_none() -> None:
    client = FakeClient()
    client.add_object(PODS, pod("web", ephemeral="scratch",
                                deletionTimestamp="2026-01-01T00:00:00Z"))
    async with running(EphemeralController, client) as controller:
        await quiet(controller)
    assert claims(client) == []


async def test_a_namesake_not_owned_by_the_pod_is_not_taken_over() -> None:
    client = FakeClient()
    client.add_object(PVCS, pvc("web-scratch"))
    client.add_object(PODS, pod("web", ephemeral="scratch"))
    async with running(EphemeralController, client):
        await eventually(lambda: event_messages(client, "FailedBinding") != [])
    assert event_messages(client, "FailedBinding")[0] == (
        "ephemeral volume scratch: PVC ns/web-scratch was not created for pod ns/web "
        "(pod is not owner)")
    stored = client.stored(PVCS, "web-scratch", namespace="ns")
    assert stored is not None and "ownerReferences" not in stored["metadata"]


async def test_a_template_it_cannot_read_is_a_failed_sync_not_a_loop() -> None:
    client = FakeClient()
    bad = pod("web", ephemeral="scratch")
    bad["spec"]["volumes"][0]["ephemeral"]["volumeClaimTemplate"] = "nope"
    client.add_object(PODS, bad)
    client.add_object(PODS, pod("good", ephemeral="scratch"))
    async with running(EphemeralController, client):
        await eventually(lambda: event_messages(client, "FailedSync") != [])
        await eventually(lambda: claims(client) == ["good-scratch"])
    [message] = set(event_messages(client, "FailedSync"))
    assert "spec.volumes[0].ephemeral.volumeClaimTemplate" in message, message
