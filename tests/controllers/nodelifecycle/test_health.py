"""``tryUpdateNodeHealth`` and ``ComputeZoneState`` as pure functions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from kubegc.controllers.nodelifecycle.health import (
    ZoneState,
    compute_zone_state,
    is_overdue,
    mark_unknown,
    observe,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def node(heartbeat: str) -> dict[str, object]:
    return {"metadata": {"name": "n", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "status": {"conditions": [{"type": "Ready", "status": "True",
                                       "reason": "KubeletReady",
                                       "lastHeartbeatTime": heartbeat,
                                       "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}


def lease(renew: str) -> dict[str, object]:
    return {"spec": {"renewTime": renew}}


def test_a_renewed_lease_is_a_heartbeat_and_silence_past_the_grace_period_is_not() -> None:
    health = observe(node("2026-01-01T00:00:00Z"), lease("2026-01-01T00:00:00.000000Z"),
                     None, T0)
    later = T0 + timedelta(seconds=40)
    health = observe(node("2026-01-01T00:00:00Z"), lease("2026-01-01T00:00:40.000000Z"),
                     health, later)
    assert health.probe_timestamp == later
    silent = later + timedelta(seconds=51)
    health = observe(node("2026-01-01T00:00:00Z"), lease("2026-01-01T00:00:40.000000Z"),
                     health, silent)
    assert is_overdue(health, 50, silent)
    assert not is_overdue(health, 50, later + timedelta(seconds=49))


def test_mark_unknown_sets_upstreams_reason_and_adds_missing_conditions() -> None:
    updated = mark_unknown(node("2026-01-01T00:00:00Z"), T0)
    conditions = {c["type"]: c for c in updated["status"]["conditions"]}  # type: ignore[index]
    assert (conditions["Ready"]["status"], conditions["Ready"]["reason"],
            conditions["Ready"]["message"]) == (
        "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
    assert conditions["DiskPressure"]["reason"] == "NodeStatusNeverUpdated"


def test_zone_states() -> None:
    ready, not_ready = {"status": "True"}, {"status": "Unknown"}
    assert compute_zone_state([not_ready], 0.55) == (1, ZoneState.FULL_DISRUPTION)
    assert compute_zone_state([ready, not_ready], 0.55) == (1, ZoneState.NORMAL)
    assert compute_zone_state([ready, not_ready, not_ready, not_ready], 0.55) == (
        3, ZoneState.PARTIAL_DISRUPTION)
