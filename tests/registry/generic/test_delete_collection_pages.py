"""DeleteCollection lists in pages (upstream's ``deleteCollectionPageSize``), every page at
the first page's revision, each page deleted before the next is listed; an in-process
caller that does not keep the answer (``each_page``, ``Client.delete_collection_each``:
the namespace controller) gets the pages one at a time and the server never holds the
whole collection."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from kubegc.api.clock import ManualClock
from kubegc.api.meta import DeleteOptions
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.local import LocalClient
from kubegc.registry import Registry, Target
from kubegc.registry.generic import collection, listing
from kubegc.registry.generic.rest import CollectionDeleter, ListOptions
from kubegc.storage.sqlite import SqliteKV
from tests.registry.conftest import manifest, target

PAGE = 7


@pytest.fixture(autouse=True)
def _small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collection, "DELETE_COLLECTION_PAGE", PAGE)
    monkeypatch.setattr(collection, "DELETE_COLLECTION_EACH_PAGE", PAGE)


async def _filled(tmp_path: Path, n: int) -> tuple[SqliteKV, Registry, Target]:
    kv = SqliteKV(tmp_path / "db.sqlite")
    reg = Registry(kv, clock=ManualClock())
    await reg.start()
    t = target(reg, "configmaps")
    for i in range(n):
        await reg.create(t, manifest("configmaps", f"cm{i:03d}"))
    return kv, reg, t


def _before_the_second_page(monkeypatch: pytest.MonkeyPatch,
                            meanwhile: Callable[[], Awaitable[None]]) -> None:
    """``meanwhile`` runs once the first page is deleted, before the second is listed."""
    select = listing.select
    calls = 0

    async def selecting(*args: Any, **kwargs: Any) -> listing.Page:
        nonlocal calls
        calls += 1
        if calls == 2:
            await meanwhile()
        return await select(*args, **kwargs)

    monkeypatch.setattr(collection, "select", selecting)


def _names(items: list[Obj]) -> list[str]:
    return [i["metadata"]["name"] for i in items]


async def test_each_page_is_deleted_before_the_next_is_handed_over(tmp_path: Path) -> None:
    kv, reg, t = await _filled(tmp_path, 30)
    try:
        start = kv.current_revision
        pages: list[tuple[list[str], int]] = []
        answer = await reg.delete_collection(
            t, DeleteOptions(), each_page=lambda items: pages.append(
                (_names(items), kv.current_revision - start)))
        assert [len(names) for names, _ in pages] == [7, 7, 7, 7, 2]
        assert pages[0][0] == [f"cm{i:03d}" for i in range(7)]
        assert [deleted for _, deleted in pages] == [7, 14, 21, 28, 30]  # one revision each
        assert answer["items"] == []  # the pages were handed over, not kept
        assert answer["metadata"]["resourceVersion"] == str(start)
        assert (await reg.list(t))["items"] == []
    finally:
        await reg.stop()
        await kv.close()


async def test_the_answer_is_every_page_as_listed(tmp_path: Path) -> None:
    """Without ``each_page`` (HTTP), the answer is upstream's: every item, with the first
    page's list metadata."""
    kv, reg, t = await _filled(tmp_path, 30)
    try:
        start = kv.current_revision
        answer = await reg.delete_collection(t, DeleteOptions())
        assert _names(answer["items"]) == [f"cm{i:03d}" for i in range(30)]
        assert all(i["kind"] == "ConfigMap" for i in answer["items"])
        assert answer["metadata"]["resourceVersion"] == str(start)
        assert kv.current_revision == start + 30
    finally:
        await reg.stop()
        await kv.close()


async def test_the_pages_are_one_snapshot(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Written between two pages: an object created after the first page's revision is
    not deleted (as upstream's continue at that revision); an object changed since is
    decided again on its current state (deleted), answered as listed."""
    kv, reg, t = await _filled(tmp_path, 20)

    async def meanwhile() -> None:
        await reg.create(t, manifest("configmaps", "cm999"))
        current = await reg.get(t, "cm015")
        current["metadata"]["labels"] = {"changed": "yes"}
        await reg.update(t, "cm015", current)

    _before_the_second_page(monkeypatch, meanwhile)
    try:
        answer = await reg.delete_collection(t, DeleteOptions())
        listed = {i["metadata"]["name"]: i for i in answer["items"]}
        assert sorted(listed) == [f"cm{i:03d}" for i in range(20)]
        assert "labels" not in listed["cm015"]["metadata"]
        assert _names((await reg.list(t))["items"]) == ["cm999"]
    finally:
        await reg.stop()
        await kv.close()


async def test_a_limit_of_the_request_is_its_one_page(tmp_path: Path) -> None:
    kv, reg, t = await _filled(tmp_path, 10)
    try:
        storage = reg._serving(t, CollectionDeleter)
        answer = await storage.delete_collection(t, DeleteOptions(), ListOptions(limit=4))
        assert _names(answer["items"]) == [f"cm{i:03d}" for i in range(4)]
        assert answer["metadata"].get("continue")
        assert len((await reg.list(t))["items"]) == 6
    finally:
        await reg.stop()
        await kv.close()


async def test_the_local_client_hands_over_pages(tmp_path: Path) -> None:
    kv, reg, t = await _filled(tmp_path, 16)
    try:
        client = LocalClient(reg)
        pages: list[list[Obj]] = []
        await client.delete_collection_each(
            GroupVersionResource("", "v1", "configmaps"), pages.append, namespace="default")
        assert [len(p) for p in pages] == [7, 7, 2]
        assert all(i["kind"] == "ConfigMap" and i["apiVersion"] == "v1"
                   for p in pages for i in p)
        assert (await reg.list(t))["items"] == []
    finally:
        await reg.stop()
        await kv.close()


@pytest.mark.parametrize("each", [False, True])
async def test_a_compacted_snapshot_goes_on_at_the_current_revision(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, each: bool) -> None:
    """The pages' revision compacted between two pages (kubegc's compactor keeps
    ``--compact-min-retain`` revisions, which a large deletion passes): no 410, the rest
    is listed at the current revision, so an object created meanwhile goes too."""
    kv, reg, t = await _filled(tmp_path, 20)

    async def meanwhile() -> None:
        await reg.create(t, manifest("configmaps", "cm999"))
        await kv.compact(kv.current_revision)

    _before_the_second_page(monkeypatch, meanwhile)
    pages: list[list[Obj]] = []
    try:
        answer = await reg.delete_collection(t, DeleteOptions(),
                                             each_page=pages.append if each else None)
        names = _names([i for p in pages for i in p] if each else answer["items"])
        assert names == [f"cm{i:03d}" for i in range(20)] + ["cm999"]
        assert (await reg.list(t))["items"] == []
    finally:
        await reg.stop()
        await kv.close()
