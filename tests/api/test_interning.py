"""``SharedValues``: equal read-only parts of decoded objects held once (issue 27)."""

from __future__ import annotations

from kubegc.api.interning import SharedValues


def test_equal_labels_are_one_map_and_others_their_own() -> None:
    shared = SharedValues()
    first = {"app": "web", "tier": "front"}
    assert shared.flat_map(dict(first)) is shared.flat_map(first)
    reordered = {"tier": "front", "app": "web"}  # encodes to other bytes: kept apart
    assert shared.flat_map(reordered) is reordered
    other = {"app": "db", "tier": "front"}
    assert shared.flat_map(other) is other


def test_a_bool_never_stands_for_a_number() -> None:
    """``True == 1`` in Python: values other than strings, booleans and null are never
    shared, so an object decoded with 1 is never given an earlier object's true."""
    shared = SharedValues()
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u", "controller": True}
    assert shared.owner_references([ref]) == [ref]
    as_number = [{**ref, "controller": 1}]
    assert shared.owner_references(as_number) is as_number
    nested = [{**ref, "extra": {"x": "y"}}]
    assert shared.owner_references(nested) is nested
    assert shared.owner_references([dict(ref)])[0]["controller"] is True


def test_owner_references_are_shared_whole_and_in_order() -> None:
    shared = SharedValues()
    a = {"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "1"}
    b = {"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": "2"}
    first = [a, b]
    assert shared.owner_references([dict(a), dict(b)]) is shared.owner_references(first)
    assert shared.owner_references([b, a]) is not first


def test_the_table_starts_over_at_its_limit() -> None:
    shared = SharedValues(limit=2)
    kept = {"n": "0"}
    assert shared.flat_map(kept) is kept
    shared.flat_map({"n": "1"})
    shared.flat_map({"n": "2"})  # the table was full: it starts over with this one
    again = {"n": "0"}
    assert shared.flat_map(again) is again  # forgotten: remembered anew
    assert shared.flat_map({"n": "0"}) is again
