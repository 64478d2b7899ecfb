"""What the planner loads into its simulation: what the delete can touch, in any namespace."""

from __future__ import annotations

from typing import Any

from kubegc.tools.plan.scope import cascade_scope

from .conftest import inventory_of


def ns(name: str, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "uid": name,
                                                                   **meta}}


def cm(name: str, namespace: str, *owners: str, uid: str = "", **meta: Any) -> dict[str, Any]:
    refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": o, "uid": o,
             "blockOwnerDeletion": True} for o in owners]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": name, "namespace": namespace, "uid": uid or name, "ownerReferences": refs,
        **meta}}


def pv(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name,
                                                                          "uid": name}}


async def names(objects: list[dict[str, Any]], target: str) -> set[str]:
    inv = await inventory_of(objects)
    start = next(o for o in objects if o["metadata"]["name"] == target)
    return {o["metadata"]["name"] for o in cascade_scope(inv, start)}


async def test_owners_and_dependents_both_ways_in_any_namespace() -> None:
    objects = [ns("shop"), ns("other"), ns("unrelated"),
               cm("root", "shop"), cm("child", "shop", "root", "co-owner"),
               cm("co-owner", "shop"), cm("co-owned", "shop", "co-owner"),
               cm("across", "other", "root"),  # an invalid cross-namespace reference
               cm("lonely", "shop"), cm("far", "unrelated"), pv("volume")]
    assert await names(objects, "root") == {"shop", "other", "root", "child", "co-owner",
                                            "co-owned", "across"}


async def test_a_cluster_scoped_owner_brings_its_dependents_everywhere() -> None:
    owner = pv("volume")
    objects = [ns("a"), ns("b"), owner,
               {**cm("claim-a", "a"), "metadata": {
                   **cm("claim-a", "a")["metadata"], "ownerReferences": [{
                       "apiVersion": "v1", "kind": "PersistentVolume", "name": "volume",
                       "uid": "volume"}]}},
               cm("unrelated", "b")]
    assert await names(objects, "volume") == {"volume", "claim-a", "a"}


async def test_a_reference_by_name_finds_the_namesake_of_another_uid() -> None:
    objects = [ns("shop"), cm("root", "shop", uid="new-root"), cm("child", "shop", "root")]
    assert await names(objects, "child") == {"shop", "child", "root"}


async def test_a_terminating_namespace_brings_its_whole_content() -> None:
    objects = [ns("shop"), ns("gone", deletionTimestamp="2026-01-01T00:00:00Z"),
               cm("root", "shop"), cm("child", "gone", "root"), cm("neighbour", "gone"),
               cm("bystander", "shop")]
    assert await names(objects, "root") == {"shop", "gone", "root", "child", "neighbour"}


async def test_a_namespace_target_brings_its_content() -> None:
    objects = [ns("shop"), ns("other"), cm("a", "shop"), cm("b", "shop"), cm("c", "other")]
    assert await names(objects, "shop") == {"shop", "a", "b"}
