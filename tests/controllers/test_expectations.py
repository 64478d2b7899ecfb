"""Controller expectations: met by observations, or expired; deletions counted once."""

from __future__ import annotations

from kubegc.api.clock import ManualClock
from kubegc.controllers.expectations import (
    ControllerExpectations,
    UIDTrackingControllerExpectations,
)


def test_expectations_are_met_by_observations_or_expire() -> None:
    clock = ManualClock()
    exp = ControllerExpectations(clock, timeout=300)
    assert exp.satisfied_expectations("ns/a")  # nothing expected
    exp.expect_creations("ns/a", 2)
    exp.creation_observed("ns/a")
    assert not exp.satisfied_expectations("ns/a")
    exp.creation_observed("ns/a")
    assert exp.satisfied_expectations("ns/a")
    exp.expect_deletions("ns/a", 1)
    assert not exp.satisfied_expectations("ns/a")
    clock.advance(301)
    assert exp.satisfied_expectations("ns/a")  # expired


def test_uid_tracking_counts_a_deletion_once() -> None:
    exp = UIDTrackingControllerExpectations(ManualClock())
    exp.set_expectations("ns/ds", add=1, deleted_keys=["ns/p1", "ns/p2"])
    exp.deletion_observed("ns/ds", "ns/p1")
    exp.deletion_observed("ns/ds", "ns/p1")  # terminating, then gone: still one
    exp.deletion_observed("ns/ds", "ns/other")
    exp.creation_observed("ns/ds")
    assert not exp.satisfied_expectations("ns/ds")
    exp.deletion_observed("ns/ds", "ns/p2")
    assert exp.satisfied_expectations("ns/ds")
