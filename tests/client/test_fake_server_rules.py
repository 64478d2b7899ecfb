"""FakeClient: the API-server rules the garbage collector relies on (GC finalizers on
DELETE, uid/omitempty on writes) and the controls upstream-style GC tests use."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api import errors
from kubegc.api.clock import ManualClock
from kubegc.api.resources import GroupVersionResource
from kubegc.client.fake import FakeClient, client_go_string
from kubegc.client.interface import DeleteOptions, PatchType

PODS = GroupVersionResource("", "v1", "pods")
ROLES_V1 = GroupVersionResource("rbac.authorization.k8s.io", "v1", "roles")
ROLES_V1BETA1 = GroupVersionResource("rbac.authorization.k8s.io", "v1beta1", "roles")


def pod(name: str, **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns1", "uid": f"uid-{name}", **meta}}


@pytest.mark.parametrize(
    ("options", "existing", "want"),
    [
        pytest.param(DeleteOptions(propagation_policy="Foreground"), ["x/y"],
                     ["x/y", "foregroundDeletion"], id="foreground"),
        pytest.param(DeleteOptions(propagation_policy="Orphan"), ["foregroundDeletion"],
                     ["orphan"], id="orphan-replaces-foreground"),
        pytest.param(DeleteOptions(orphan_dependents=True), [], ["orphan"],
                     id="orphanDependents"),
        pytest.param(DeleteOptions(), ["orphan", "x/y"], ["orphan", "x/y"],
                     id="no-policy-keeps-gc-finalizer"),
        pytest.param(DeleteOptions(propagation_policy="Background"), ["orphan", "x/y"],
                     ["x/y"], id="background-drops-gc-finalizers"),
    ],
)
async def test_delete_sets_gc_finalizers(
    options: DeleteOptions, existing: list[str], want: list[str],
) -> None:
    client = FakeClient(clock=ManualClock())
    client.add_object(PODS, pod("a", finalizers=existing))
    marked = await client.delete(PODS, "a", namespace="ns1", options=options)
    assert marked["metadata"]["finalizers"] == want
    assert marked["metadata"]["deletionTimestamp"] == "2026-01-01T00:00:00Z"
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 0


async def test_background_delete_of_an_object_with_only_gc_finalizers_removes_it() -> None:
    client = FakeClient()
    client.add_object(PODS, pod("a", finalizers=["foregroundDeletion"]))
    status = await client.delete(PODS, "a", namespace="ns1",
                                 options=DeleteOptions(propagation_policy="Background"))
    assert status["status"] == "Success"
    assert client.stored(PODS, "a", namespace="ns1") is None


async def test_patch_with_another_uid_is_a_precondition_conflict() -> None:
    client = FakeClient()
    client.add_object(PODS, pod("a"))
    with pytest.raises(errors.StatusError) as err:
        await client.patch(PODS, "a", {"metadata": {"uid": "other", "labels": {"k": "v"}}},
                           namespace="ns1", patch_type=PatchType.STRATEGIC)
    assert errors.is_conflict(err.value)
    assert err.value.message == ('Operation cannot be fulfilled on pods "a": Precondition '
                                 "failed: UID in precondition: other, UID in object meta: uid-a")
    assert "labels" not in (client.stored(PODS, "a", namespace="ns1") or {})["metadata"]


async def test_writes_drop_empty_metadata_lists() -> None:
    client = FakeClient()
    owner = {"apiVersion": "v1", "kind": "Pod", "name": "o", "uid": "uid-o"}
    client.add_object(PODS, pod("a", ownerReferences=[owner]))
    patched = await client.patch(
        PODS, "a", {"metadata": {"ownerReferences": [{"$patch": "delete", "uid": "uid-o"}]}},
        namespace="ns1", patch_type=PatchType.STRATEGIC)
    assert "ownerReferences" not in patched["metadata"]


async def test_resource_versions_are_stored_apart() -> None:
    client = FakeClient()
    client.add_object(ROLES_V1, pod("r"))
    assert client.stored(ROLES_V1BETA1, "r", namespace="ns1") is None


async def test_client_go_action_strings_take_actions_and_fail_matching() -> None:
    client = FakeClient(action_format=client_go_string)
    failures: dict[str, Exception] = {}
    client.fail_matching(failures)
    client.add_object(PODS, pod("a"))
    await client.get(PODS, "a", namespace="ns1")
    await client.list(ROLES_V1)
    failures["delete /v1, Resource=pods ns=ns1 name=a"] = errors.internal_error("boom")
    for _ in range(2):
        with pytest.raises(errors.StatusError, match="boom"):
            await client.delete(PODS, "a", namespace="ns1")
    assert client.take_actions() == [
        "get /v1, Resource=pods ns=ns1 name=a",
        "list rbac.authorization.k8s.io/v1, Resource=roles",
        "delete /v1, Resource=pods ns=ns1 name=a",
        "delete /v1, Resource=pods ns=ns1 name=a",
    ]
    assert client.actions == [] and client.action_log == []


async def test_update_and_remove_object_write_without_actions() -> None:
    client = FakeClient()
    created = client.add_object(PODS, pod("a"))
    stream = client.watch(PODS, namespace="ns1")
    assert (await stream.__anext__()).type == "ADDED"
    client.clear_actions()
    client.update_object(PODS, {**created, "status": {"phase": "Running"}})
    client.remove_object(PODS, "a", namespace="ns1")
    modified, deleted = await stream.__anext__(), await stream.__anext__()
    await stream.aclose()
    assert (modified.type, modified.object["status"]) == ("MODIFIED", {"phase": "Running"})
    assert deleted.type == "DELETED" and client.stored(PODS, "a", namespace="ns1") is None
    assert client.actions == []
