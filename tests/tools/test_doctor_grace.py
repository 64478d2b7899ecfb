"""The doctor on pods in graceful termination, by where they are in it (issue 24): inside
the grace period with the kubelet alive, "wait: ends by T"; past it with the kubelet
alive, the kubelet kills them now; with the kubelet gone, bring it back or force."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.tools.doctor import DoctorOptions, diagnose

from .conftest import inventory_of


def _objects(deletion_timestamp: str, ready: str) -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "uid": "n1"},
         "status": {"conditions": [{"type": "Ready", "status": ready}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "p", "namespace": "default", "uid": "p",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "deletionTimestamp": deletion_timestamp, "deletionGracePeriodSeconds": 300},
         "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x"}]}}]


@pytest.mark.parametrize(("stamp", "ready", "fix", "not_said"), [
    # NOW is 00:10: inside the grace period (ends 00:12), the kubelet alive
    ("2026-01-01T00:12:00Z", "True", "wait: ends by 2026-01-01T00:12:00Z", "force"),
    # past it (ended 00:09), the kubelet alive: it kills them now
    ("2026-01-01T00:09:00Z", "True", "wait a few seconds; if it stays, read the logs of the "
     "kubelet on node n1", "bring"),
    # the kubelet not Ready: bring it back (or force)
    ("2026-01-01T00:12:00Z", "False", "bring the kubelet on node n1 back", "wait"),
])
async def test_graceful_termination_by_its_phase(stamp: str, ready: str, fix: str,
                                                 not_said: str) -> None:
    report = diagnose(await inventory_of(_objects(stamp, ready)),
                      DoctorOptions(stuck_after=0))
    (cause,) = report.root_causes
    assert cause.detail.fix[0].startswith(fix), cause.detail.fix
    assert not_said not in cause.detail.fix[0], cause.detail.fix
