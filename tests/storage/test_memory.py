"""MemoryKV's key index (sorted keys rebuilt lazily, deleted keys pruned in bulk) kept in
step with the data, across the thresholds where its strategy changes."""

from __future__ import annotations

import pytest

from kubegc.storage import MemoryKV


@pytest.mark.parametrize("new_keys", [
    pytest.param(3, id="few-new-keys-inserted-one-by-one"),
    pytest.param(500, id="many-new-keys-sorted-in-bulk"),
])
async def test_ranges_see_keys_created_between_reads(new_keys: int) -> None:
    kv = MemoryKV()
    for i in range(0, 1000, 2):
        await kv.create(f"/k/{i:04d}", b"")
    assert len((await kv.range("/k/", prefix=True)).kvs) == 500
    for i in range(1, 2 * new_keys, 2):
        await kv.create(f"/k/{i:04d}", b"")
    keys = [k.key for k in (await kv.range("/k/", prefix=True)).kvs]
    assert keys == sorted(keys) and len(keys) == 500 + new_keys


async def test_mass_deletion_then_recreation_keeps_ranges_right() -> None:
    kv = MemoryKV()
    revisions = {f"/k/{i:05d}": await kv.create(f"/k/{i:05d}", b"") for i in range(3000)}
    before_deletes = kv.current_revision
    for i in range(2500):  # crosses the prune threshold
        key = f"/k/{i:05d}"
        await kv.delete(key, expected_mod_revision=revisions[key])
    for i in range(0, 2500, 100):
        await kv.create(f"/k/{i:05d}", b"again")

    latest = [k.key for k in (await kv.range("/k/", prefix=True)).kvs]
    assert latest == sorted([f"/k/{i:05d}" for i in range(0, 2500, 100)]
                            + [f"/k/{i:05d}" for i in range(2500, 3000)])
    assert len(kv) == len(latest)
    past = await kv.range("/k/", prefix=True, revision=before_deletes)
    assert [k.key for k in past.kvs] == [f"/k/{i:05d}" for i in range(3000)]
    page = await kv.range("/k/", prefix=True, revision=before_deletes, limit=7)
    assert [k.key for k in page.kvs] == [f"/k/{i:05d}" for i in range(7)] and page.more
