"""The GC's pure decision core, case by case as upstream's ``TestAttemptToDeleteItem`` /
``TestClassifyReferences`` tables read: an item's state, its owners as looked up, and
what ``attemptToDeleteItem`` does with it."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api.meta import DeletionPropagation
from kubegc.controllers.garbagecollector import decision as d
from kubegc.controllers.garbagecollector.graph import OwnerRef

A = OwnerRef("v1", "ReplicationController", "a", "uid-a")
B = OwnerRef("v1", "ReplicationController", "b", "uid-b", block_owner_deletion=True)
C = OwnerRef("example.com/v1", "Widget", "c", "uid-c")

ABSENT = d.OwnerLookup.absent("NotFound")
SOLID = d.OwnerLookup.found({"metadata": {"uid": "x"}})
WAITING = d.OwnerLookup.found({"metadata": {"uid": "x", "deletionTimestamp": "2026-01-01T00:00:00Z",
                                            "finalizers": ["foregroundDeletion"]}})
UNMAPPABLE = d.OwnerLookup.failed(d.LookupOutcome.UNMAPPABLE, LookupError("no mapping"))
INVALID = d.OwnerLookup.failed(d.LookupOutcome.INVALID_SCOPE, LookupError("invalid"))
FAILED = d.OwnerLookup.failed(d.LookupOutcome.FAILED, LookupError("timeout"))

ITEM = d.ItemState(being_deleted=False, deleting_dependents=False)


def state(**kw: Any) -> d.ItemState:
    return d.ItemState(**{"being_deleted": False, "deleting_dependents": False, **kw})


@pytest.mark.parametrize(("item", "refs", "action"), [
    pytest.param(state(being_deleted=True), [(A, ABSENT)], d.Action.WAIT_FOR_DELETION,
                 id="being-deleted-waits-for-its-deletion"),
    pytest.param(state(being_deleted=True, deleting_dependents=True), [(A, ABSENT)],
                 d.Action.PROCESS_DELETING_DEPENDENTS, id="deleting-dependents-is-processed"),
    pytest.param(ITEM, [], d.Action.NONE, id="no-owner-references"),
])
def test_decided_before_any_lookup(item: d.ItemState, refs: list[tuple[OwnerRef, d.OwnerLookup]],
                                   action: d.Action) -> None:
    made = d.decide(item, refs)
    assert made.action is action
    assert made.classified is None  # no owner was looked up
    assert (d.before_lookup(item, has_references=bool(refs)) or made).action is action


@pytest.mark.parametrize(("item", "refs", "action", "policy", "removed"), [
    pytest.param(ITEM, [(A, ABSENT)], d.Action.DELETE, "Background", (),
                 id="1-owner-absent-background"),
    pytest.param(state(finalizers=("orphan",)), [(A, ABSENT)], d.Action.DELETE, "Orphan", (),
                 id="own-orphan-finalizer"),
    pytest.param(state(finalizers=("orphan", "foregroundDeletion")), [(A, ABSENT)],
                 d.Action.DELETE, "Foreground", (), id="foreground-finalizer-wins-over-orphan"),
    pytest.param(ITEM, [(A, SOLID)], d.Action.NONE, None, (), id="1-owner-solid"),
    pytest.param(ITEM, [(A, ABSENT), (B, SOLID)], d.Action.REMOVE_REFERENCES, None, ("uid-a",),
                 id="solid-keeps-dangling-removed"),
    pytest.param(ITEM, [(A, WAITING), (B, SOLID)], d.Action.REMOVE_REFERENCES, None,
                 ("uid-a",), id="solid-keeps-waiting-removed"),
    pytest.param(state(dependents=2), [(A, WAITING)], d.Action.DELETE, "Foreground", (),
                 id="waiting-owner-with-dependents-foreground"),
    pytest.param(ITEM, [(A, WAITING)], d.Action.DELETE, "Background", (),
                 id="waiting-owner-no-dependents-own-policy"),
    pytest.param(state(dependents=1), [(A, ABSENT), (B, WAITING)], d.Action.DELETE,
                 "Foreground", (), id="dangling-and-waiting-foreground"),
    pytest.param(state(dependents=1), [(A, ABSENT)], d.Action.DELETE, "Background", (),
                 id="dangling-only-with-dependents-background"),
])
def test_attempt_to_delete_item(item: d.ItemState, refs: list[tuple[OwnerRef, d.OwnerLookup]],
                                action: d.Action, policy: str | None,
                                removed: tuple[str, ...]) -> None:
    made = d.decide(item, refs)
    assert made.action is action
    assert made.policy == (DeletionPropagation(policy) if policy else None)
    assert made.remove_uids == removed
    assert not made.unblock_owner_references


def test_a_dependent_deleting_its_dependents_unblocks_the_item_first() -> None:
    item = state(dependents=3, dependent_deleting_dependents=True)
    made = d.decide(item, [(A, WAITING)])
    assert (made.action, made.policy, made.unblock_owner_references) == (
        d.Action.DELETE, DeletionPropagation.FOREGROUND, True)


@pytest.mark.parametrize(("refs", "action", "classified_owners"), [
    pytest.param([(A, UNMAPPABLE), (B, ABSENT)], d.Action.RETRY, 0, id="unmappable-first"),
    pytest.param([(B, SOLID), (A, ABSENT), (C, UNMAPPABLE)], d.Action.RETRY, 2,
                 id="solid-and-dangling-then-unmappable-patches-nothing"),
    pytest.param([(A, ABSENT), (C, FAILED)], d.Action.RETRY, 1, id="failed-lookup"),
    pytest.param([(A, ABSENT), (B, INVALID)], d.Action.NEVER, 1, id="invalid-scope-never"),
    pytest.param([(A, INVALID), (C, UNMAPPABLE)], d.Action.NEVER, 0,
                 id="first-failure-decides"),
])
def test_a_failed_lookup_stops_the_classification(
    refs: list[tuple[OwnerRef, d.OwnerLookup]], action: d.Action, classified_owners: int,
) -> None:
    made = d.decide(ITEM, refs)
    assert made.action is action
    assert made.classified is not None
    assert len(made.classified.owners) == classified_owners
    assert made.classified.stopped_at == refs[classified_owners][0]
    assert made.remove_uids == ()


def test_classification_splits_owners_three_ways_with_their_details() -> None:
    c = d.classify_references([(A, ABSENT), (B, WAITING), (C, SOLID)])
    assert (c.dangling, c.waiting_for_dependents_deletion, c.solid) == ((A,), (B,), (C,))
    assert [(o.uid, o.classification.value, o.detail) for o in c.owners] == [
        ("uid-a", "dangling", "NotFound"), ("uid-b", "waitingForDependentsDeletion", "Foreground"),
        ("uid-c", "solid", "Exists")]


def test_no_lookup_is_added_once_the_classification_stopped() -> None:
    builder = d.ReferenceClassification()
    assert not builder.add(A, FAILED)
    with pytest.raises(ValueError, match="already stopped"):
        builder.add(B, ABSENT)


def test_an_owner_deleting_without_foreground_is_solid() -> None:
    deleting = d.OwnerLookup.found({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z",
                                                 "finalizers": ["orphan"]}})
    assert d.classify_references([(A, deleting)]).solid == (A,)


def test_blocking_dependents_are_those_blocking_that_owner() -> None:
    to_a_blocking = (OwnerRef("v1", "RC", "a", "uid-a", block_owner_deletion=True),)
    to_a_not = (OwnerRef("v1", "RC", "a", "uid-a", block_owner_deletion=False),)
    to_b_blocking = (B,)
    deps = [("x", to_a_blocking), ("y", to_a_not), ("z", to_b_blocking)]
    assert d.blocking_dependents("uid-a", deps) == ["x"]
