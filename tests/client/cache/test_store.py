"""Indexer: keys, indexes, replace (cf. client-go tools/cache store_test.go, index_test.go)."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from kubegc.api.sparse import MIN_ROOM
from kubegc.client.cache import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Indexer,
    deletion_handling_meta_namespace_key,
    meta_namespace_index_func,
    meta_namespace_key,
    split_meta_namespace_key,
)

BY_OWNER = "by-owner"


def obj(name: str, namespace: str = "", *, owners: tuple[str, ...] = (), rv: str = "1",
        ) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "resourceVersion": rv,
                            "ownerReferences": [{"uid": u} for u in owners]}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta}


def owner_uids(o: dict[str, Any]) -> list[str]:
    return [r["uid"] for r in o["metadata"]["ownerReferences"]]


@pytest.mark.parametrize(
    ("o", "key"),
    [
        pytest.param(obj("p", "ns1"), "ns1/p", id="namespaced"),
        pytest.param(obj("n"), "n", id="cluster-scoped"),
        pytest.param({"metadata": {"name": "x", "namespace": None}}, "x", id="null-namespace"),
    ],
)
def test_meta_namespace_key(o: dict[str, Any], key: str) -> None:
    assert meta_namespace_key(o) == key
    assert deletion_handling_meta_namespace_key(o) == key
    assert deletion_handling_meta_namespace_key(DeletedFinalStateUnknown(key, o)) == key


@pytest.mark.parametrize(
    ("key", "want"),
    [("ns/name", ("ns", "name")), ("name", ("", "name")), ("/name", ("", "name"))],
)
def test_split_meta_namespace_key(key: str, want: tuple[str, str]) -> None:
    assert split_meta_namespace_key(key) == want


def test_split_meta_namespace_key_rejects_extra_slashes() -> None:
    with pytest.raises(ValueError):
        split_meta_namespace_key("a/b/c")


def test_add_update_delete_and_listing() -> None:
    store = Indexer()
    store.add(obj("a", "ns1"))
    store.add(obj("b"))
    store.update(obj("a", "ns1", rv="2"))
    assert sorted(store.list_keys()) == ["b", "ns1/a"]
    assert store.get_by_key("ns1/a") == obj("a", "ns1", rv="2")
    assert store.get(obj("b")) == obj("b")
    assert len(store) == 2
    store.delete(obj("a", "ns1"))
    store.delete(obj("never-there"))
    assert store.list() == [obj("b")]
    assert store.get_by_key("ns1/a") is None


def test_indexes_follow_updates_and_deletes() -> None:
    store = Indexer(indexers={BY_OWNER: owner_uids, NAMESPACE_INDEX: meta_namespace_index_func})
    store.add(obj("a", "ns1", owners=("u1", "u2")))
    store.add(obj("b", "ns2", owners=("u1",)))
    assert [o["metadata"]["name"] for o in store.by_index(BY_OWNER, "u1")] == ["a", "b"]
    assert store.index_keys(NAMESPACE_INDEX, "ns1") == ["ns1/a"]
    store.update(obj("a", "ns1", owners=("u3",)))
    assert store.index_keys(BY_OWNER, "u1") == ["ns2/b"]
    assert store.index_keys(BY_OWNER, "u2") == []
    assert store.list_index_values(BY_OWNER) == ["u1", "u3"], "empty values are dropped"
    store.delete(obj("b", "ns2"))
    assert store.list_index_values(BY_OWNER) == ["u3"]


def test_replace_swaps_content_and_rebuilds_indexes() -> None:
    store = Indexer(indexers={BY_OWNER: owner_uids})
    store.add(obj("old", owners=("u1",)))
    store.replace([obj("new1", owners=("u2",)), obj("new2")], "42")
    assert sorted(store.list_keys()) == ["new1", "new2"]
    assert store.by_index(BY_OWNER, "u1") == []
    assert store.index_keys(BY_OWNER, "u2") == ["new1"]
    assert store.resource_version == "42"


def test_add_indexers_indexes_existing_objects_and_rejects_duplicates() -> None:
    store = Indexer()
    store.add(obj("a", owners=("u1",)))
    store.add_indexers({BY_OWNER: owner_uids})
    assert store.index_keys(BY_OWNER, "u1") == ["a"]
    with pytest.raises(ValueError, match="indexer conflict"):
        store.add_indexers({BY_OWNER: owner_uids})


def test_unknown_index_is_an_error() -> None:
    with pytest.raises(KeyError, match="does not exist"):
        Indexer().by_index("nope", "x")


def test_deleted_final_state_unknown_is_a_frozen_value() -> None:
    tombstone = DeletedFinalStateUnknown("ns/a", obj("a", "ns"))
    assert tombstone == DeletedFinalStateUnknown("ns/a", obj("a", "ns"))
    with pytest.raises(AttributeError):
        tombstone.key = "other"  # type: ignore[misc]


def test_the_maps_give_their_room_back_once_the_objects_are_deleted() -> None:
    """Issue 27: an informer's store and its indexes shrink after a mass deletion (a
    namespace of 20,000 objects deleted), rather than keeping the room of the peak."""
    store = Indexer(indexers={BY_OWNER: owner_uids, NAMESPACE_INDEX: meta_namespace_index_func})
    objs = [obj(f"o-{i}", "big", owners=(f"u-{i}", "shared")) for i in range(20_000)]
    kept = [obj(f"k-{i}", "big", owners=("shared",)) for i in range(5)]
    for o in objs + kept:
        store.add(o)
    peak = sys.getsizeof(store._items)
    for o in objs:
        store.delete(o)
    assert len(store) == 5
    assert peak > 4 * MIN_ROOM
    assert sys.getsizeof(store._items) <= MIN_ROOM
    assert sys.getsizeof(store._indices[BY_OWNER]) <= MIN_ROOM
    assert sys.getsizeof(store._indices[NAMESPACE_INDEX]["big"]) <= MIN_ROOM
    assert store.index_keys(BY_OWNER, "shared") == sorted(f"big/k-{i}" for i in range(5))
    assert store.index_keys(NAMESPACE_INDEX, "big") == sorted(f"big/k-{i}" for i in range(5))
