from __future__ import annotations

from kubegc.api.memo import Memo


def test_keeps_at_most_size_entries_dropping_the_oldest() -> None:
    memo = Memo(size=2)
    memo.put("a", b"1")
    memo.put("b", b"2")
    memo.put("c", b"3")
    assert (memo.get("a"), memo.get("b"), memo.get("c")) == (None, b"2", b"3")
    assert len(memo) == 2


def test_replacing_a_key_evicts_nothing() -> None:
    memo = Memo(size=2)
    memo.put("a", b"1")
    memo.put("b", b"2")
    memo.put("a", b"9")
    assert (memo.get("a"), memo.get("b")) == (b"9", b"2")


def test_counts_hits_and_misses() -> None:
    memo = Memo()
    memo.get("x")
    memo.put("x", b"")
    memo.get("x")
    assert (memo.hits, memo.misses) == (1, 1)
