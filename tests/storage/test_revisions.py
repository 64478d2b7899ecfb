"""``Revisions``: the bookkeeping the backends share (each backend's behaviour is in
test_kv_contract.py; here the rules themselves, on a bare store)."""

from __future__ import annotations

import pytest

from kubegc.storage.errors import CompactedError, FutureRevisionError
from kubegc.storage.revisions import Revisions


def store(current: int, compact: int) -> Revisions:
    revisions = Revisions()
    revisions._rev, revisions._compact_rev = current, compact
    return revisions


def test_a_new_store_is_at_revision_zero() -> None:
    assert (Revisions().current_revision, Revisions().compact_revision) == (0, 0)


@pytest.mark.parametrize(("asked", "seen"), [
    pytest.param(0, 10, id="latest"),
    pytest.param(-1, 10, id="negative-is-latest"),
    pytest.param(4, 4, id="the-compact-revision"),
    pytest.param(10, 10, id="the-current-revision"),
])
def test_a_read_sees(asked: int, seen: int) -> None:
    assert store(10, 4)._read_revision(asked) == seen


@pytest.mark.parametrize(("asked", "error"), [
    pytest.param(3, CompactedError, id="below-the-compact-revision"),
    pytest.param(11, FutureRevisionError, id="past-the-current-revision"),
])
def test_a_read_fails(asked: int, error: type[Exception]) -> None:
    with pytest.raises(error):
        store(10, 4)._read_revision(asked)


@pytest.mark.parametrize(("asked", "error"), [
    pytest.param(4, CompactedError, id="the-compact-revision-again"),
    pytest.param(2, CompactedError, id="an-older-revision"),
    pytest.param(11, FutureRevisionError, id="past-the-current-revision"),
])
def test_a_compaction_fails_and_changes_nothing(asked: int, error: type[Exception]) -> None:
    revisions = store(10, 4)
    with pytest.raises(error):
        revisions._update_compact_rev(asked)
    assert revisions.compact_revision == 4


def test_a_compaction_up_to_the_current_revision() -> None:
    revisions = store(10, 4)
    revisions._update_compact_rev(10)
    assert revisions.compact_revision == 10


def test_what_is_observed_only_moves_the_revisions_forward() -> None:
    revisions = store(10, 4)
    revisions._observe_revision(7)
    revisions._observe_compaction(2)
    assert (revisions.current_revision, revisions.compact_revision) == (10, 4)
    revisions._observe_revision(12)
    revisions._observe_compaction(6)
    assert (revisions.current_revision, revisions.compact_revision) == (12, 6)
