"""The DELETE decision tables of upstream's registry/generic/registry/store_test.go
(TestStoreDeleteWithOrphanDependents, TestStoreDeletionPropagation, the per-resource
DefaultGarbageCollectionPolicy, TestGracefulStoreHandleFinalizers and the other delete
tests)."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api.clock import ManualClock
from kubegc.api.errors import StatusError
from kubegc.registry import Registry

from ..conftest import manifest, target

A = ["foo.com/x", "orphan", "bar.com/y"]
B = ["foo.com/x", "bar.com/y"]
C: list[str] = []
D = ["orphan"]
DELETED = None  # the object is gone

# TestStoreDeleteWithOrphanDependents: (options, strategy resource, existing finalizers, expected
# finalizers or DELETED). "configmaps" has the default strategy (DeleteDependents); v1
# "replicationcontrollers" the orphan-default strategy, as upstream's store tests use
# defaultDeleteStrategy and orphanDeleteStrategy.
ST01 = [
    ({"orphanDependents": True}, "configmaps", A, A),
    ({"orphanDependents": True}, "configmaps", B, ["foo.com/x", "bar.com/y", "orphan"]),
    ({"orphanDependents": True}, "configmaps", C, ["orphan"]),
    ({"orphanDependents": True}, "configmaps", D, ["orphan"]),
    ({"orphanDependents": False}, "replicationcontrollers", A, ["foo.com/x", "bar.com/y"]),
    ({"orphanDependents": False}, "replicationcontrollers", B, ["foo.com/x", "bar.com/y"]),
    ({"orphanDependents": False}, "replicationcontrollers", C, DELETED),
    ({"orphanDependents": False}, "replicationcontrollers", D, DELETED),
    ({}, "configmaps", A, A),
    ({}, "configmaps", B, B),
    ({}, "configmaps", C, DELETED),
    ({}, "configmaps", D, ["orphan"]),
    ({}, "replicationcontrollers", A, A),
    ({}, "replicationcontrollers", B, ["foo.com/x", "bar.com/y", "orphan"]),
    ({}, "replicationcontrollers", C, ["orphan"]),
    ({}, "replicationcontrollers", D, ["orphan"]),
    (None, "configmaps", A, A),
    (None, "configmaps", C, DELETED),
    (None, "replicationcontrollers", B, ["foo.com/x", "bar.com/y", "orphan"]),
    (None, "replicationcontrollers", C, ["orphan"]),
]


def _ids(table: list[tuple[Any, ...]]) -> list[str]:
    return [f"{opts}-{res}-{existing}" for opts, res, existing, _ in table]


async def _create(registry: Registry, resource: str, finalizers: list[str]) -> dict[str, Any]:
    meta: dict[str, Any] = {"finalizers": finalizers} if finalizers else {}
    return await registry.create(target(registry, resource), manifest(resource, "obj", **meta))


async def _after_delete(registry: Registry, resource: str, options: dict[str, Any] | None,
                        ) -> dict[str, Any] | None:
    t = target(registry, resource)
    await registry.delete(t, "obj", options)
    try:
        return await registry.get(t, "obj")
    except StatusError as e:
        assert e.code == 404
        return None


@pytest.mark.parametrize(("options", "resource", "existing", "expected"), ST01, ids=_ids(ST01))
async def test_st01_orphan_dependents_option(
    registry: Registry, options: dict[str, Any] | None, resource: str, existing: list[str],
    expected: list[str] | None,
) -> None:
    created = await _create(registry, resource, existing)
    left = await _after_delete(registry, resource, options)
    if expected is DELETED:
        assert left is None
        return
    assert left is not None
    assert left["metadata"].get("finalizers", []) == expected
    assert left["metadata"]["deletionTimestamp"]
    assert left["metadata"]["deletionGracePeriodSeconds"] == 0
    if "generation" in created["metadata"]:
        assert left["metadata"]["generation"] > created["metadata"]["generation"]


FG, BG, OR = "Foreground", "Background", "Orphan"
ST02 = [
    (FG, "configmaps", C, ["foregroundDeletion"]),
    (BG, "configmaps", C, DELETED),
    (OR, "configmaps", C, ["orphan"]),
    (None, "configmaps", C, DELETED),
    (None, "replicationcontrollers", C, ["orphan"]),
    (FG, "configmaps", ["orphan"], ["foregroundDeletion"]),
    (BG, "configmaps", ["orphan"], DELETED),
    (OR, "configmaps", ["orphan"], ["orphan"]),
    (None, "configmaps", ["orphan"], ["orphan"]),
    (None, "replicationcontrollers", ["orphan"], ["orphan"]),
    (FG, "configmaps", ["foregroundDeletion"], ["foregroundDeletion"]),
    (BG, "configmaps", ["foregroundDeletion"], DELETED),
    (OR, "configmaps", ["foregroundDeletion"], ["orphan"]),
    (None, "configmaps", ["foregroundDeletion"], ["foregroundDeletion"]),
    (None, "replicationcontrollers", ["foregroundDeletion"], ["foregroundDeletion"]),
    (FG, "replicationcontrollers", C, ["foregroundDeletion"]),
    (BG, "replicationcontrollers", ["orphan"], DELETED),
    (OR, "replicationcontrollers", ["foregroundDeletion"], ["orphan"]),
]


@pytest.mark.parametrize(("policy", "resource", "existing", "expected"), ST02, ids=_ids(ST02))
async def test_st02_propagation_policy(
    registry: Registry, policy: str | None, resource: str, existing: list[str],
    expected: list[str] | None,
) -> None:
    await _create(registry, resource, existing)
    options = {"propagationPolicy": policy} if policy else {}
    left = await _after_delete(registry, resource, options)
    if expected is DELETED:
        assert left is None
    else:
        assert left is not None and left["metadata"]["finalizers"] == expected


# DefaultGarbageCollectionPolicy: what a DELETE without options adds, per resource (default GC
# policy).
DEFAULT_POLICY = [
    ("replicationcontrollers", ["orphan"]),
    ("jobs", ["orphan"]),
    ("cronjobs", DELETED),
    ("deployments", DELETED),
    ("replicasets", DELETED),
    ("statefulsets", DELETED),
    ("daemonsets", DELETED),
    ("configmaps", DELETED),
    ("secrets", DELETED),
]


@pytest.mark.parametrize(("resource", "expected"), DEFAULT_POLICY,
                         ids=[r for r, _ in DEFAULT_POLICY])
async def test_default_gc_policy(registry: Registry, resource: str,
                                 expected: list[str] | None) -> None:
    await _create(registry, resource, [])
    left = await _after_delete(registry, resource, {})
    if expected is DELETED:
        assert left is None
    else:
        assert left is not None and left["metadata"]["finalizers"] == expected


@pytest.mark.parametrize("options", [{"propagationPolicy": "Foreground"},
                                     {"propagationPolicy": "Orphan"}, {"orphanDependents": True}],
                         ids=["foreground", "orphan", "orphanDependents"])
async def test_events_never_get_gc_finalizers(registry: Registry,
                                              options: dict[str, Any]) -> None:
    await _create(registry, "events", ["foo.com/x"])
    left = await _after_delete(registry, "events", options)
    assert left is not None and left["metadata"]["finalizers"] == ["foo.com/x"]


async def test_st03_update_emptying_finalizers_removes_deleting_object(
        registry: Registry) -> None:
    t = target(registry, "configmaps")
    await _create(registry, "configmaps", ["foo.com/x"])
    await registry.delete(t, "obj", {})
    kept = await registry.get(t, "obj")
    assert kept["metadata"]["deletionTimestamp"]
    kept["metadata"]["labels"] = {"still": "here"}
    updated, _ = await registry.update(t, "obj", kept)
    assert updated["metadata"]["finalizers"] == ["foo.com/x"]
    updated["metadata"]["finalizers"] = []
    await registry.update(t, "obj", updated)
    with pytest.raises(StatusError) as e:
        await registry.get(t, "obj")
    assert e.value.code == 404


async def test_no_new_finalizers_once_deleting(registry: Registry) -> None:
    t = target(registry, "configmaps")
    await _create(registry, "configmaps", ["foo.com/x"])
    await registry.delete(t, "obj", {})
    obj = await registry.get(t, "obj")
    obj["metadata"]["finalizers"] = ["foo.com/x", "new.io/y"]
    with pytest.raises(StatusError) as e:
        await registry.update(t, "obj", obj)
    assert e.value.code == 422
    assert "no new finalizers can be added if the object is being deleted, found new " \
           'finalizers []string{"new.io/y"}' in e.value.message  # Go's %#v


async def _scheduled_pod(registry: Registry, grace: int = 30) -> dict[str, Any]:
    body = manifest("pods", "obj")
    body["spec"]["nodeName"] = "node-1"
    body["spec"]["terminationGracePeriodSeconds"] = grace
    return await registry.create(target(registry, "pods"), body)


async def test_st04_graceful_pod_deletion_can_only_shorten(registry: Registry,
                                                          clock: ManualClock) -> None:
    t = target(registry, "pods")
    await _scheduled_pod(registry, grace=30)
    first, removed = await registry.delete(t, "obj", {})
    assert not removed
    assert first["metadata"]["deletionGracePeriodSeconds"] == 30
    # A longer or equal grace period is a no-op ("pending graceful").
    again, _ = await registry.delete(t, "obj", {"gracePeriodSeconds": 60})
    assert again["metadata"]["deletionGracePeriodSeconds"] == 30
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    # A shorter one moves deletionTimestamp earlier.
    shorter, _ = await registry.delete(t, "obj", {"gracePeriodSeconds": 10})
    assert shorter["metadata"]["deletionGracePeriodSeconds"] == 10
    assert shorter["metadata"]["deletionTimestamp"] < first["metadata"]["deletionTimestamp"]
    # Grace 0 with the right uid precondition (the kubelet's final delete) removes it.
    _, removed = await registry.delete(t, "obj", {
        "gracePeriodSeconds": 0, "preconditions": {"uid": first["metadata"]["uid"]}})
    assert removed


async def test_st04_gc_finalizers_cannot_change_while_graceful_pending(
        registry: Registry) -> None:
    t = target(registry, "pods")
    await _scheduled_pod(registry)
    await registry.delete(t, "obj", {})
    left, _ = await registry.delete(t, "obj", {"propagationPolicy": "Foreground"})
    assert "finalizers" not in left["metadata"]


async def test_unscheduled_pod_is_deleted_at_once(registry: Registry) -> None:
    t = target(registry, "pods")
    await registry.create(t, manifest("pods", "obj"))
    _, removed = await registry.delete(t, "obj", {})
    assert removed


async def test_st05_delete_missing_is_not_found(registry: Registry) -> None:
    with pytest.raises(StatusError) as e:
        await registry.delete(target(registry, "configmaps"), "nope", {})
    assert (e.value.code, e.value.message) == (404, 'configmaps "nope" not found')


async def test_st05_resource_version_precondition(registry: Registry) -> None:
    t = target(registry, "configmaps")
    created = await _create(registry, "configmaps", [])
    with pytest.raises(StatusError) as e:
        await registry.delete(t, "obj", {"preconditions": {"resourceVersion": "1"}})
    assert e.value.code == 409
    _, removed = await registry.delete(t, "obj", {
        "gracePeriodSeconds": 0,
        "preconditions": {"resourceVersion": created["metadata"]["resourceVersion"]}})
    assert removed


async def test_st06_uid_precondition_message(registry: Registry) -> None:
    created = await _create(registry, "configmaps", [])
    with pytest.raises(StatusError) as e:
        await registry.delete(target(registry, "configmaps"), "obj",
                              {"preconditions": {"uid": "other"}})
    assert e.value.code == 409 and e.value.reason == "Conflict"
    assert e.value.message == (
        'Operation cannot be fulfilled on ConfigMap "obj": the UID in the precondition (other) '
        f'does not match the UID in record ({created["metadata"]["uid"]}). The object might '
        "have been deleted and then recreated")


async def test_st06_create_while_deleting_is_already_exists_being_deleted(
        registry: Registry) -> None:
    t = target(registry, "configmaps")
    await _create(registry, "configmaps", ["foo.com/x"])
    await registry.delete(t, "obj", {})
    with pytest.raises(StatusError) as e:
        await registry.create(t, manifest("configmaps", "obj"))
    assert e.value.code == 409
    assert e.value.message == 'object is being deleted: configmaps "obj" already exists'


@pytest.mark.parametrize(("options", "message"), [
    ({"propagationPolicy": "Foreground", "orphanDependents": True},
     "orphanDependents and deletionPropagation cannot be both set"),
    ({"propagationPolicy": "Sideways"}, 'supported values: "Foreground", "Background", '
                                        '"Orphan", "nil"'),
], ids=["both-set", "bad-policy"])
async def test_invalid_delete_options(registry: Registry, options: dict[str, Any],
                                      message: str) -> None:
    await _create(registry, "configmaps", [])
    with pytest.raises(StatusError) as e:
        await registry.delete(target(registry, "configmaps"), "obj", options)
    assert e.value.code == 422 and message in e.value.message
    assert await registry.get(target(registry, "configmaps"), "obj")


@pytest.mark.parametrize("finalizers", [[], ["foo.com/x"]], ids=["removed", "kept"])
async def test_delete_decodes_the_stored_object_once(
        registry: Registry, monkeypatch: pytest.MonkeyPatch, finalizers: list[str]) -> None:
    """A DELETE edits a copy of the stored object's metadata, not a second decoding of it
    (issue 27: one decode less per GC deletion); the object answered and the one left
    stored are as before: the answer of a removal is the object as it was, untouched."""
    from kubegc.registry.generic import store as store_module

    t = target(registry, "configmaps")
    created = await registry.create(t, {**manifest("configmaps", "obj", finalizers=finalizers),
                                        "data": {"k": "v"}})
    decodes = 0
    decode = store_module.decode

    def counting(kv: Any, **kwargs: Any) -> Any:
        nonlocal decodes
        decodes += 1
        return decode(kv, **kwargs)

    monkeypatch.setattr(store_module, "decode", counting)
    answered, removed = await registry.delete(t, "obj", {"propagationPolicy": "Background"})
    assert decodes == 1
    assert removed == (not finalizers)
    if removed:
        assert answered == created  # as it was: no deletionTimestamp, no finalizers popped
    else:
        assert answered["metadata"]["deletionTimestamp"]
        assert answered["metadata"]["finalizers"] == finalizers
        assert answered["data"] == {"k": "v"}
        assert "deletionTimestamp" not in created["metadata"]
