"""controller_utils: slow-start batches, the pod-template-hash, pod creation from a
template, status merge patches."""

from __future__ import annotations

import asyncio

import pytest

from kubegc.controllers.controller_utils import (
    compute_hash,
    fnv32a,
    get_pod_from_template,
    new_controller_ref,
    safe_encode_string,
    slow_start_batch,
    status_merge_patch,
)

TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


@pytest.mark.parametrize(("count", "fail_at", "batches", "successes"), [
    pytest.param(0, None, [], 0, id="nothing"),
    pytest.param(10, None, [1, 2, 4, 3], 10, id="doubling"),
    pytest.param(10, 2, [1, 2], 2, id="stops-after-failing-batch"),
])
async def test_slow_start_batch(count: int, fail_at: int | None, batches: list[int],
                                successes: int) -> None:
    started: list[int] = []
    seen_at_end: list[int] = []  # how many calls had started when each call finished

    async def fn() -> None:
        index = len(started)
        started.append(index)
        await asyncio.sleep(0)  # every call of a batch starts before any finishes
        seen_at_end.append(len(started))
        if index == fail_at:
            raise RuntimeError("quota")

    got, err = await slow_start_batch(count, 1, fn)
    sizes = [seen_at_end.count(n) for n in sorted(set(seen_at_end))]
    assert sizes == batches
    assert got == successes and (err is None) == (fail_at is None)


def test_fnv32a_and_safe_encoding_match_go() -> None:
    assert fnv32a(b"") == 0x811C9DC5
    assert fnv32a(b"a") == 0xE40C292C
    assert safe_encode_string("0123456789") == "456789bcdf"


@pytest.mark.parametrize(("other", "collisions", "same"), [
    pytest.param(TEMPLATE, None, True, id="stable"),
    pytest.param({**TEMPLATE, "spec": {"containers": [{"name": "c", "image": "nginx:2"}]}},
                 None, False, id="template-change"),
    pytest.param(TEMPLATE, 1, False, id="collision-count"),
])
def test_compute_hash(other: dict[str, object], collisions: int | None, same: bool) -> None:
    value = compute_hash(TEMPLATE, None)
    assert set(value) <= set("bcdfghjklmnpqrstvwxz2456789") and 1 <= len(value) <= 10
    assert (compute_hash(other, collisions) == value) is same


def test_pod_from_template() -> None:
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
             "metadata": {"name": "web-abc", "uid": "u1"}}
    template = {"metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"},
                             "finalizers": ["f/x"]}, "spec": TEMPLATE["spec"]}
    ref = new_controller_ref(owner, "apps/v1", "ReplicaSet")
    pod = get_pod_from_template(template, owner, ref)
    assert pod == {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "generateName": "web-abc-", "labels": {"app": "web"}, "annotations": {"a": "b"},
        "finalizers": ["f/x"], "ownerReferences": [{
            "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc", "uid": "u1",
            "controller": True, "blockOwnerDeletion": True}]}, "spec": TEMPLATE["spec"]}
    pod["spec"]["containers"][0]["image"] = "changed"
    assert TEMPLATE["spec"]["containers"][0]["image"] == "nginx"  # type: ignore[index]


@pytest.mark.parametrize(("old", "new", "patch"), [
    pytest.param({"replicas": 1}, {"replicas": 1}, {}, id="unchanged"),
    pytest.param({"replicas": 1, "readyReplicas": 1}, {"replicas": 2},
                 {"replicas": 2, "readyReplicas": None}, id="removed-becomes-null"),
    pytest.param({"uncounted": {"succeeded": ["a"]}}, {"uncounted": {}},
                 {"uncounted": {"succeeded": None}}, id="nested-map"),
    pytest.param({"conditions": [{"type": "A"}]}, {"conditions": []},
                 {"conditions": []}, id="lists-replaced"),
])
def test_status_merge_patch(old: dict[str, object], new: dict[str, object],
                            patch: dict[str, object]) -> None:
    assert status_merge_patch(old, new) == patch
