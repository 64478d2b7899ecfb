"""The PV protection controller against ``FakeClient`` (cf. upstream's
pv_protection_controller_test.go): a volume being deleted keeps its finalizer while Bound."""

from __future__ import annotations

from kubegc.api.volumes import PVS
from kubegc.client.fake import FakeClient
from kubegc.controllers.volume.pvprotection import PVProtectionController

from ..workload_harness import event_messages, eventually, quiet, running
from .helpers import pv

FINALIZER = "kubernetes.io/pv-protection"


def finalizers(client: FakeClient) -> list[str]:
    stored = client.stored(PVS, "vol")
    return list(stored["metadata"].get("finalizers") or []) if stored else ["(gone)"]


async def test_a_bound_volume_keeps_it_until_released() -> None:
    client = FakeClient()
    client.add_object(PVS, pv(deleting=True))
    async with running(PVProtectionController, client) as controller:
        await quiet(controller)
        assert finalizers(client) == [FINALIZER]
        released = client.stored(PVS, "vol")
        assert released is not None
        released["status"]["phase"] = "Released"
        client.update_object(PVS, released)
        await eventually(lambda: finalizers(client) in ([], ["(gone)"]))


async def test_an_available_volume_is_released_at_once() -> None:
    client = FakeClient()
    client.add_object(PVS, pv(phase="Available", deleting=True))
    async with running(PVProtectionController, client):
        await eventually(lambda: finalizers(client) in ([], ["(gone)"]))


async def test_a_volume_without_the_finalizer_gets_it() -> None:
    client = FakeClient()
    client.add_object(PVS, pv(finalizers=()))
    async with running(PVProtectionController, client):
        await eventually(lambda: finalizers(client) == [FINALIZER])


async def test_a_status_it_cannot_read_keeps_the_finalizer() -> None:
    client = FakeClient()
    bad = pv(deleting=True)
    bad["status"] = "Bound"
    client.add_object(PVS, bad)
    async with running(PVProtectionController, client) as controller:
        await eventually(lambda: event_messages(client, "FailedSync") != [])
        await quiet(controller)
    assert finalizers(client) == [FINALIZER]
