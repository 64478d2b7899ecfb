"""Who removes a finalizer, and the evidence that it is alive (tools/finalizers.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.tools.finalizers import Alive, ControllerMap, who_removes

from .conftest import inventory_of

SITE = {"apiVersion": "own.labhub.io/v1", "kind": "Site",
        "metadata": {"name": "s", "namespace": "lab", "uid": "s"}}


PUBLISHED = {"kubegc.io/removes-finalizers": "other.io/x, own.labhub.io/cleanup"}


def lease(ns: str, name: str, *, holder: str | None = "me", renewed: str | None,
          seconds: int = 15, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"holderIdentity": holder, "leaseDurationSeconds": seconds}
    if renewed:
        spec["renewTime"] = renewed
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "namespace": ns, "uid": f"lease-{name}",
                         "annotations": annotations or {}}, "spec": spec}


def deployment(ns: str, name: str, *, replicas: int, ready: int,
               annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "uid": f"deploy-{name}",
                         "annotations": annotations or {}},
            "spec": {"replicas": replicas}, "status": {"readyReplicas": ready}}


@pytest.mark.parametrize(("extra", "alive", "fact"), [
    pytest.param([lease("ops", "op", renewed="2026-01-01T00:09:55.000000Z",
                        annotations=PUBLISHED)], Alive.YES,
                 "renewed at 2026-01-01T00:09:55Z, 5s before the reading", id="fresh-lease"),
    pytest.param([lease("ops", "op", renewed="2026-01-01T00:09:00.000000Z",
                        annotations=PUBLISHED)], Alive.NO, "1m before the reading",
                 id="stale-lease"),
    pytest.param([lease("ops", "op", holder=None, renewed="2026-01-01T00:09:59.000000Z",
                        annotations=PUBLISHED)], Alive.NO, "released", id="released-lease"),
    pytest.param([deployment("ops", "op", replicas=1, ready=1, annotations=PUBLISHED)],
                 Alive.YES, "1/1 replicas ready", id="ready-deployment"),
    pytest.param([deployment("ops", "op", replicas=0, ready=0, annotations=PUBLISHED)],
                 Alive.NO, "scaled to 0", id="scaled-down-deployment"),
    pytest.param([lease("ops", "op", renewed="2026-01-01T00:09:55.000000Z",
                        annotations={"kubegc.io/removes-finalizers": "*.labhub.io/*"})],
                 Alive.YES, "5s before the reading", id="published-as-a-glob"),
    pytest.param([], Alive.UNKNOWN, "", id="no-evidence"),
    # names alone are no evidence (issue: a Lease named 8f2a1c.backup.example.com was taken
    # as the remover of example.com/hold by its domain suffix)
    pytest.param([lease("ops", "x.own.labhub.io", renewed="2026-01-01T00:09:55.000000Z")],
                 Alive.UNKNOWN, "", id="lease-named-after-the-domain-is-no-evidence"),
    pytest.param([deployment("ops", "own-operator", replicas=1, ready=1)], Alive.UNKNOWN, "",
                 id="deployment-named-after-the-domain-is-no-evidence"),
    pytest.param([{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                   "metadata": {"name": "sites.own.labhub.io", "uid": "crd"},
                   "spec": {"group": "own.labhub.io"}}], Alive.UNKNOWN, "",
                 id="crd-of-that-group-is-no-evidence"),
])
async def test_custom_finalizer_evidence(extra: list[dict[str, Any]], alive: Alive,
                                         fact: str) -> None:
    inv = await inventory_of([SITE, *extra])
    remover = who_removes("own.labhub.io/cleanup", SITE, inv)
    assert remover.alive is alive
    assert fact in " ".join(e.fact for e in remover.evidence)
    if not extra or alive is Alive.UNKNOWN:
        assert remover.who == "an unknown controller" and remover.evidence == ()
    else:
        assert remover.found_by.startswith("kubegc.io/removes-finalizers on ")


async def test_a_fresh_lease_in_the_finalizers_domain_is_not_its_remover() -> None:
    """The issue's case: ``example.com/hold`` and an unrelated, fresh Lease
    ``8f2a1c.backup.example.com``: the remover is unknown, never "alive"."""
    inv = await inventory_of([SITE, lease("backup-system", "8f2a1c.backup.example.com",
                                          renewed="2026-01-01T00:09:59.000000Z")])
    remover = who_removes("example.com/hold", SITE, inv)
    assert remover.alive is Alive.UNKNOWN
    assert remover.found_by == "nothing names its controller"


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
