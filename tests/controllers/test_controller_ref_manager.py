"""ControllerRefManager: the adopt/release/ignore table of ``claimObject``, the patches it
sends, and the once-only ``can_adopt`` check."""

from __future__ import annotations

import pytest

from kubegc.api import errors
from kubegc.api.labels import selector_from_set
from kubegc.api.types import Obj
from kubegc.client.fake import FakeClient
from kubegc.controllers.controller_ref_manager import (
    PodControllerRefManager,
    recheck_deletion_timestamp,
)

from .workload_harness import PODS

OWNER: Obj = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
              "metadata": {"name": "web", "namespace": "ns", "uid": "rs-uid"}}
DELETING_OWNER: Obj = {**OWNER, "metadata": {**OWNER["metadata"],
                                             "deletionTimestamp": "2026-01-01T00:00:00Z"}}
MINE = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "rs-uid",
        "controller": True, "blockOwnerDeletion": True}
OTHER = {**MINE, "name": "other", "uid": "other-uid"}


def pod(labels: dict[str, str], refs: list[Obj] | None = None, *, deleting: bool = False,
        ) -> Obj:
    meta: Obj = {"name": "p", "namespace": "ns", "uid": "pod-uid", "labels": labels}
    if refs:
        meta["ownerReferences"] = refs
    if deleting:
        meta.update(deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["x/y"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {}}


MATCH, NO_MATCH = {"app": "web"}, {"app": "db"}


@pytest.mark.parametrize(("owner", "candidate", "claimed", "patch"), [
    pytest.param(OWNER, pod(MATCH, [MINE]), True, None, id="ours-and-matching"),
    pytest.param(OWNER, pod(NO_MATCH, [MINE]), False,
                 {"metadata": {"ownerReferences": [{"$patch": "delete", "uid": "rs-uid"}],
                               "uid": "pod-uid"}}, id="ours-not-matching-released"),
    pytest.param(DELETING_OWNER, pod(NO_MATCH, [MINE]), False, None,
                 id="deleting-owner-does-not-release"),
    pytest.param(DELETING_OWNER, pod(MATCH, [MINE]), True, None,
                 id="deleting-owner-keeps-what-it-has"),
    pytest.param(OWNER, pod(MATCH, [OTHER]), False, None, id="someone-elses"),
    pytest.param(OWNER, pod(MATCH), True,
                 {"metadata": {"ownerReferences": [MINE], "uid": "pod-uid"}},
                 id="orphan-adopted"),
    pytest.param(OWNER, pod(NO_MATCH), False, None, id="orphan-not-matching"),
    pytest.param(OWNER, pod(MATCH, deleting=True), False, None, id="orphan-being-deleted"),
    pytest.param(DELETING_OWNER, pod(MATCH), False, None, id="deleting-owner-adopts-nothing"),
])
async def test_claim(owner: Obj, candidate: Obj, claimed: bool, patch: Obj | None) -> None:
    client = FakeClient()
    client.add_object(PODS, candidate, namespace="ns")
    manager = PodControllerRefManager(client, owner, selector_from_set(MATCH),
                                      controller_api_version="apps/v1",
                                      controller_kind="ReplicaSet")
    got = await manager.claim_pods([candidate])
    assert (got == [candidate]) is claimed
    patches = [a for a in client.action_log if a.verb == "patch"]
    assert [a.body for a in patches] == ([patch] if patch else [])
    if patches:
        assert patches[0].patch_type.name == "STRATEGIC"  # type: ignore[union-attr]


async def test_can_adopt_runs_once_and_its_failure_blocks_adoption() -> None:
    client = FakeClient()
    calls: list[int] = []

    async def get() -> Obj:
        calls.append(1)
        return DELETING_OWNER

    candidates = [pod(MATCH), {**pod(MATCH), "metadata": {**pod(MATCH)["metadata"],
                                                           "name": "q", "uid": "q-uid"}}]
    manager = PodControllerRefManager(client, OWNER, selector_from_set(MATCH),
                                      controller_api_version="apps/v1",
                                      controller_kind="ReplicaSet",
                                      can_adopt=recheck_deletion_timestamp(get))
    with pytest.raises(Exception) as raised:
        await manager.claim_pods(candidates)
    assert len(calls) == 1
    assert "can't adopt Pod ns/p (pod-uid): ns/web has just been deleted at" in str(raised.value)


async def test_release_of_a_vanished_pod_is_not_an_error() -> None:
    client = FakeClient()
    client.fail_next("patch", errors.not_found(errors.GroupResource("", "pods"), "p"), gvr=PODS)
    manager = PodControllerRefManager(client, OWNER, selector_from_set(MATCH),
                                      controller_api_version="apps/v1",
                                      controller_kind="ReplicaSet")
    assert await manager.claim_pods([pod(NO_MATCH, [MINE])]) == []
