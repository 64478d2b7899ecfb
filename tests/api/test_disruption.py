"""The eviction's decision on one budget (``checkAndDecrement``, ``canIgnorePDB``) and the
conditions it writes, as the eviction subresource, the doctor and the planner ask them."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api.disruption import (
    can_ignore_pdb,
    check_and_decrement,
    selects,
    unhealthy_evictable,
    update_pod_condition,
)
from kubegc.api.errors import StatusError

NOW = "2026-01-01T00:00:00Z"


def pdb(generation: int = 1, **status: Any) -> dict[str, Any]:
    return {"metadata": {"name": "web", "namespace": "ns", "generation": generation},
            "spec": {"selector": {"matchLabels": {"app": "web"}}},
            "status": {"observedGeneration": 1, "currentHealthy": 2, "desiredHealthy": 2,
                       **status}}


def pod(phase: str = "Running", **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": "ns", "labels": {"app": "web"}, **meta},
            "status": {"phase": phase}}


@pytest.mark.parametrize(("budget", "code", "text"), [
    pytest.param(pdb(generation=2, disruptionsAllowed=1), 429,
                 "The disruption budget web is still being processed by the server.",
                 id="not-observed"),
    pytest.param(pdb(disruptionsAllowed=0), 429,
                 "The disruption budget web needs 2 healthy pods and has 2 currently",
                 id="no-disruption-allowed"),
    pytest.param(pdb(disruptionsAllowed=-1), 403, "pdb disruptions allowed is negative",
                 id="negative"),
    pytest.param(pdb(disruptionsAllowed=1, disruptedPods={str(i): NOW for i in range(2001)}),
                 403, "DisruptedPods map too big", id="too-many-unconfirmed"),
])
def test_refusals(budget: dict[str, Any], code: int, text: str) -> None:
    with pytest.raises(StatusError) as e:
        check_and_decrement(budget, "p", NOW, dry_run=False)
    assert e.value.code == code
    said = e.value.message + " ".join(c.message for c in e.value.details.causes)
    assert text in said
    if code == 429:
        assert e.value.message == ("Cannot evict pod as it would violate the pod's disruption "
                                   "budget.")


def test_not_observed_asks_to_retry_after_ten_seconds() -> None:
    with pytest.raises(StatusError) as e:
        check_and_decrement(pdb(generation=2), "p", NOW, dry_run=False)
    assert e.value.details.retry_after_seconds == 10


def test_decrement_records_the_pod_and_the_condition() -> None:
    budget = pdb(disruptionsAllowed=1)
    check_and_decrement(budget, "p", NOW, dry_run=False)
    status = budget["status"]
    assert status["disruptionsAllowed"] == 0
    assert status["disruptedPods"] == {"p": NOW}
    assert status["conditions"] == [{"type": "DisruptionAllowed", "status": "False",
                                     "observedGeneration": 1, "lastTransitionTime": NOW,
                                     "reason": "InsufficientPods", "message": ""}]


def test_dry_run_records_no_pod() -> None:
    budget = pdb(disruptionsAllowed=2)
    check_and_decrement(budget, "p", NOW, dry_run=True)
    assert "disruptedPods" not in budget["status"]


@pytest.mark.parametrize(("obj", "ignorable"), [
    (pod("Pending"), True), (pod("Succeeded"), True), (pod("Failed"), True),
    (pod("Running", deletionTimestamp=NOW), True), (pod("Running"), False)])
def test_can_ignore_pdb(obj: dict[str, Any], ignorable: bool) -> None:
    assert can_ignore_pdb(obj) is ignorable


def test_unhealthy_pod_eviction_policy() -> None:
    assert unhealthy_evictable(pdb())  # IfHealthyBudget: 2 healthy of 2 desired
    assert not unhealthy_evictable(pdb(currentHealthy=1))
    always = pdb(currentHealthy=0)
    always["spec"]["unhealthyPodEvictionPolicy"] = "AlwaysAllow"
    assert unhealthy_evictable(always)


def test_empty_selector_matches_nothing_for_the_eviction_everything_for_the_controller() -> None:
    budget = pdb()
    budget["spec"]["selector"] = {}
    assert not selects(budget, pod())
    assert selects(budget, pod(), empty_matches_all=True)
    other = pod()
    other["metadata"]["namespace"] = "elsewhere"
    assert not selects(pdb(), other)


def test_update_pod_condition_keeps_the_transition_time() -> None:
    obj = pod()
    assert update_pod_condition(obj, {"type": "DisruptionTarget", "status": "True",
                                      "reason": "EvictionByEvictionAPI",
                                      "message": "Eviction API: evicting"}, NOW)
    assert not update_pod_condition(obj, {"type": "DisruptionTarget", "status": "True",
                                          "reason": "EvictionByEvictionAPI",
                                          "message": "Eviction API: evicting"}, "later")
    assert obj["status"]["conditions"][0]["lastTransitionTime"] == NOW
