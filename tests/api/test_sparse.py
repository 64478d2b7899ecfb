"""``compacted``: a map or set that lost most of its entries is copied to a table sized
for what is left (CPython's never shrink on deletion)."""

from __future__ import annotations

import sys
from collections import OrderedDict

from kubegc.api.sparse import MIN_ROOM, compacted, is_sparse


def test_a_table_that_lost_most_of_its_entries_is_copied_small() -> None:
    table = {f"uid-{i}": i for i in range(100_000)}
    for i in range(99_990):
        del table[f"uid-{i}"]
    assert sys.getsizeof(table) > 1 << 20, "CPython kept its room"
    assert is_sparse(table)
    small = compacted(table)
    assert small == table and small is not table
    assert sys.getsizeof(small) < MIN_ROOM
    assert list(small) == [f"uid-{i}" for i in range(99_990, 100_000)], "order kept"


def test_sets_and_ordered_dicts_too() -> None:
    members = set(range(50_000))
    ordered = OrderedDict((i, None) for i in range(50_000))
    for i in range(49_000):
        members.discard(i)
        del ordered[i]
    for table in (members, ordered):
        small = compacted(table)
        assert type(small) is type(table) and small == table
        assert sys.getsizeof(small) < sys.getsizeof(table) / 8
        assert not is_sparse(small), "a fresh copy is not copied again"


def test_a_full_or_small_table_is_kept_as_it_is() -> None:
    full = {i: i for i in range(100_000)}
    assert compacted(full) is full
    empty: dict[int, int] = {}
    assert compacted(empty) is empty
    half = {i: i for i in range(100_000)}
    for i in range(50_000):
        del half[i]
    assert compacted(half) is half, "copied once it holds under an eighth of its room"
