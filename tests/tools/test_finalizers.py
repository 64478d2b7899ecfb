"""Who removes a finalizer, and the evidence that it is alive (tools/finalizers.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.tools.finalizers import Alive, ControllerMap, who_removes

from .conftest import inventory_of

SITE = {"apiVersion": "own.labhub.io/v1", "kind": "Site",
        "metadata": {"name": "s", "namespace": "lab", "uid": "s"}}


def lease(ns: str, name: str, *, holder: str | None = "me", renewed: str | None,
          seconds: int = 15) -> dict[str, Any]:
    spec: dict[str, Any] = {"holderIdentity": holder, "leaseDurationSeconds": seconds}
    if renewed:
        spec["renewTime"] = renewed
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "namespace": ns, "uid": f"lease-{name}"}, "spec": spec}


def deployment(ns: str, name: str, *, replicas: int, ready: int) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "uid": f"deploy-{name}"},
            "spec": {"replicas": replicas}, "status": {"readyReplicas": ready}}


@pytest.mark.parametrize(("extra", "alive", "fact"), [
    pytest.param([lease("ops", "x.own.labhub.io", renewed="2026-01-01T00:09:55.000000Z")],
                 Alive.YES, "renewed 5s ago", id="fresh-lease"),
    pytest.param([lease("ops", "x.own.labhub.io", renewed="2026-01-01T00:09:00.000000Z")],
                 Alive.NO, "renewed 1m ago", id="stale-lease"),
    pytest.param([lease("ops", "x.own.labhub.io", holder=None,
                        renewed="2026-01-01T00:09:59.000000Z")],
                 Alive.NO, "released", id="released-lease"),
    pytest.param([deployment("ops", "own-operator", replicas=1, ready=1)], Alive.YES,
                 "1/1 replicas ready", id="ready-deployment"),
    pytest.param([deployment("ops", "own-operator", replicas=0, ready=0)], Alive.NO,
                 "scaled to 0", id="scaled-down-deployment"),
    pytest.param([], Alive.UNKNOWN, "", id="no-evidence"),
])
async def test_custom_finalizer_evidence(extra: list[dict[str, Any]], alive: Alive,
                                         fact: str) -> None:
    inv = await inventory_of([SITE, *extra])
    remover = who_removes("own.labhub.io/cleanup", SITE, inv)
    assert remover.alive is alive
    assert fact in " ".join(e.fact for e in remover.evidence)


@pytest.mark.parametrize(("finalizer", "who"), [
    ("foregroundDeletion", "the garbage collector"),
    ("orphan", "the garbage collector"),
    ("kubernetes", "the namespace controller"),
    ("kubernetes.io/pvc-protection", "the pvc-protection controller"),
    ("customresourcecleanup.apiextensions.k8s.io", "the API server"),
])
async def test_builtin_finalizers(finalizer: str, who: str) -> None:
    inv = await inventory_of([SITE, lease("kube-system", "kube-controller-manager",
                                          renewed="2026-01-01T00:09:58.000000Z")])
    remover = who_removes(finalizer, SITE, inv)
    assert remover.who.startswith(who)
    assert remover.found_by == "built-in"
    assert remover.alive is Alive.YES


async def test_mapping_file(tmp_path: Any) -> None:
    path = tmp_path / "controllers.yaml"
    path.write_text("finalizers:\n- finalizer: '*.labhub.io/*'\n  controller: ops\n"
                    "  deployments: [ops/op]\n  cleanup: the bill\n")
    inv = await inventory_of([SITE, deployment("ops", "op", replicas=1, ready=0)])
    remover = who_removes("own.labhub.io/cleanup", SITE, inv, ControllerMap.load(path))
    assert (remover.who, remover.skips, remover.alive) == ("ops", "the bill", Alive.NO)
