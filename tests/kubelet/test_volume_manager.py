"""The kubelet's wait for a pod's claims (kubelet/volume_manager.py): why each claim cannot
be used, in the desired-state-of-world populator's words, and which pods count as started.
tests/e2e/test_volumes.py drives it through kubectl."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.kubelet.volume_manager import claim_errors, failed_mount_message, is_started

POD: dict[str, Any] = {
    "metadata": {"name": "p", "namespace": "ns", "uid": "uid-p"},
    "spec": {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "db"}},
                         {"name": "tmp", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
                         {"name": "cfg", "configMap": {"name": "c"}}]}}


def claim(name: str, **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", **meta}}


OWNED = {"ownerReferences": [{"uid": "uid-p", "controller": True}]}


@pytest.mark.parametrize(("claims", "errors"), [
    pytest.param({"db": claim("db"), "p-tmp": claim("p-tmp", **OWNED)}, {}, id="all-there"),
    pytest.param({"p-tmp": claim("p-tmp", **OWNED)}, {
        "data": "error processing PVC ns/db: failed to fetch PVC from API server: "
                'persistentvolumeclaims "db" not found'}, id="missing"),
    pytest.param({"db": claim("db", deletionTimestamp="2026-01-01T00:00:00Z"),
                  "p-tmp": claim("p-tmp", **OWNED)},
                 {"data": "error processing PVC ns/db: PVC is being deleted"}, id="deleting"),
    pytest.param({"db": claim("db"), "p-tmp": claim("p-tmp")}, {
        "tmp": "PVC ns/p-tmp was not created for pod ns/p (pod is not owner)"},
                 id="ephemeral-namesake"),
])
def test_claim_errors(claims: dict[str, Any], errors: dict[str, str]) -> None:
    assert claim_errors(POD, claims.get) == errors


def test_failed_mount_message() -> None:
    assert failed_mount_message({"b": "no b", "a": "no a"}) == (
        "Unable to attach or mount volumes: unmounted volumes=[a b], unattached volumes=[a b], "
        "failed to process volumes=[a b]: no a; no b")


@pytest.mark.parametrize(("statuses", "started"), [
    pytest.param([], False, id="no-status"),
    pytest.param([{"state": {"waiting": {"reason": "ContainerCreating"}}}], False,
                 id="waiting-on-volumes"),
    pytest.param([{"state": {"running": {}}}], True, id="running"),
    pytest.param([{"state": {"waiting": {"reason": "CrashLoopBackOff"}}}], True,
                 id="crash-loop"),
])
def test_is_started(statuses: list[dict[str, Any]], started: bool) -> None:
    assert is_started({"status": {"containerStatuses": statuses}}) is started
