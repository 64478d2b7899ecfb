"""What holds a claim or a volume being deleted, as the doctor, why and plan say it
(tools/volumes.py through ``finalizers.who_removes``), and the plan's scope around claims."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.tools.finalizers import who_removes
from kubegc.tools.plan.scope import cascade_scope

from .conftest import inventory_of

DELETING = "2026-01-01T00:09:00Z"


def claim(name: str = "data") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": "shop", "uid": f"pvc-{name}",
                         "deletionTimestamp": DELETING,
                         "finalizers": ["kubernetes.io/pvc-protection"]}}


def pod(name: str, claim_name: str = "data", *, node: str = "n1") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}], "volumes": [
        {"name": "v", "persistentVolumeClaim": {"claimName": claim_name}}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "shop", "uid": f"pod-{name}"},
            "spec": spec}


def volume(phase: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "vol", "uid": "vol", "deletionTimestamp": DELETING,
                         "finalizers": ["kubernetes.io/pv-protection"]},
            "spec": {"claimRef": {"namespace": "shop", "name": "data"}},
            "status": {"phase": phase}}


@pytest.mark.parametrize(("pods", "when"), [
    pytest.param([pod("db")], "once no pod uses the claim: pod/db uses it, so it goes when "
                 "that pod goes", id="one-pod"),
    pytest.param([pod("a"), pod("b")], "once no pod uses the claim: pod/a, pod/b use it, so "
                 "it goes when they go", id="two-pods"),
    pytest.param([pod("pending", node="")], "once no pod uses the claim: no scheduled pod "
                 "uses it now, so it is released at once", id="unscheduled-pod-does-not-hold"),
    pytest.param([pod("other", "else")], "once no pod uses the claim: no scheduled pod uses "
                 "it now, so it is released at once", id="another-claim"),
])
async def test_a_claim_names_the_pods_that_hold_it(pods: list[dict[str, Any]],
                                                   when: str) -> None:
    pvc = claim()
    inv = await inventory_of([pvc, *pods])
    assert who_removes("kubernetes.io/pvc-protection", pvc, inv).removes_when == when


@pytest.mark.parametrize(("phase", "when"), [
    pytest.param("Bound", "once the PersistentVolume is no longer Bound: it is Bound to claim "
                 "shop/data, so it goes once that claim is gone and the volume released "
                 "(status.phase no longer Bound)", id="bound"),
    pytest.param("Released", "once the PersistentVolume is no longer Bound: it is Released, "
                 "so it is released at once", id="released"),
])
async def test_a_volume_names_its_claim(phase: str, when: str) -> None:
    pv = volume(phase)
    inv = await inventory_of([pv])
    assert who_removes("kubernetes.io/pv-protection", pv, inv).removes_when == when


async def test_the_plan_loads_a_claims_pods_and_a_pods_claims() -> None:
    objects = [claim(), claim("other"), pod("db"), pod("web", "other"), pod("idle", "none")]
    inv = await inventory_of(objects)
    scope = {o["metadata"]["name"] for o in cascade_scope(inv, objects[0])}
    assert scope == {"data", "db"}
    scope = {o["metadata"]["name"] for o in cascade_scope(inv, objects[3])}
    assert scope == {"web", "other"}
