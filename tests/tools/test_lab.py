"""The lab of seed 001 (docs/lab.md), step by step, against a real kubegc server driven
with the real kubectl and the kopf Site operator of examples/.

Each test is one section of docs/lab.md, in order (later sections use what earlier ones
made, as the lab does: run the module as a whole); they share one kubegc (all controllers)
and start the operator when their section does."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubegc.testing import Cluster

from .lab import EXAMPLES, LAB, Kubectl, eventually, kubegc, kubegc_json, site_operator

pytestmark = pytest.mark.kubectl
CHILDREN = ("configmap/{0}-config", "configmap/{0}-content", "service/{0}",
            "secret/{0}-credentials")


class Lab:
    def __init__(self, cluster: Cluster, cache: Path) -> None:
        self.cluster = cluster
        self.kc = str(cluster.kubeconfig)
        self.kubectl = Kubectl(cluster.kubeconfig, cache)

    def gc(self, *args: str) -> dict[str, object]:
        """``kubegc ARGS -o json`` against the lab's kubegc."""
        return kubegc_json(*args, "--kubeconfig", self.kc)  # type: ignore[no-any-return]

    def children(self, site: str) -> list[str]:
        return [c.format(site) for c in CHILDREN]

    def wait_children(self, site: str) -> None:
        for child in self.children(site):
            def there(c: str = child) -> bool:
                return self.kubectl.exists(c, "-n", "lab")
            eventually(there, what=child)

    def outside(self, site: str) -> bool:
        return self.kubectl.exists("configmap", f"lab.{site}", "-n", "labhub-outside")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with Cluster() as cluster:
        lab = Lab(cluster, tmp_path_factory.mktemp("kubectl-cache"))
        lab.kubectl("apply", "-f", str(EXAMPLES / "site-crd.yaml"))
        lab.kubectl("apply", "-f", str(LAB / "namespace.yaml"))
        yield lab


def test_1_a_site_owns_two_configmaps_a_service_and_a_secret(lab: Lab) -> None:
    with site_operator(lab.cluster.kubeconfig):
        lab.kubectl("apply", "-f", str(LAB / "site-alpha.yaml"))
        lab.wait_children("alpha")
        uid = lab.kubectl.uid("site", "alpha", "-n", "lab")
        for child in lab.children("alpha"):
            (owner,) = lab.kubectl.json(child, "-n", "lab")["metadata"]["ownerReferences"]
            assert (owner["kind"], owner["name"], owner["uid"]) == ("Site", "alpha", uid)
            assert owner["controller"] and owner["blockOwnerDeletion"]
        assert eventually(lambda: lab.outside("alpha"), what="outside state")
        tree = lab.gc("tree", "site/alpha", "-n", "lab")
        assert sorted(c["object"]["name"] for c in tree["root"]["children"]) == [  # type: ignore[index]
            "alpha", "alpha-config", "alpha-content", "alpha-credentials"]
        code, text, _ = kubegc("tree", "site/alpha", "-n", "lab", "--kubeconfig", lab.kc)
        assert code == 0 and "├─ConfigMap/alpha-config" in text


def test_2_right_and_wrong_owner_uid(lab: Lab) -> None:
    uid = lab.kubectl.uid("site", "alpha", "-n", "lab")
    lab.kubectl.apply_file(LAB / "children-uid.yaml", SITE_UID=uid)
    lab.cluster.settle()
    assert lab.kubectl.exists("configmap", "right-uid", "-n", "lab")
    assert not lab.kubectl.exists("configmap", "wrong-uid", "-n", "lab")
    why = lab.gc("why", "configmap/wrong-uid", "-n", "lab")
    # the lab's wrong uid was made up: no Site ever had it, so nothing was "recreated"
    assert "OwnerAbsent" in str(why["conclusion"])
    assert "no object with the referenced uid" in str(why["conclusion"])
    entries: list[dict[str, Any]] = why["entries"]  # type: ignore[assignment]
    assert [e["owners"][0]["detail"] for e in entries] == ["UIDMismatch"]


def test_3_cross_namespace_owner_and_its_warning_event(lab: Lab) -> None:
    uid = lab.kubectl.uid("site", "alpha", "-n", "lab")
    lab.kubectl.apply_file(LAB / "cross-namespace.yaml", SITE_UID=uid)
    lab.cluster.settle()
    assert not lab.kubectl.exists("configmap", "alpha-mirror", "-n", "other")
    events = lab.kubectl("get", "events", "-n", "other", "--field-selector",
                         "reason=OwnerRefInvalidNamespace").stdout
    assert "alpha-mirror" in events and 'does not exist in namespace "other"' in events
    doctor = lab.gc("doctor", "-n", "other")
    kinds = {(f["kind"], f["object"]["name"]) for f in doctor["findings"]}  # type: ignore[attr-defined]
    assert ("OwnerRefInvalidNamespaceEvent", "alpha-mirror") in kinds
    why = lab.gc("why", "configmap/alpha-mirror", "-n", "other")
    assert "OwnerInOtherNamespace" in str(why["conclusion"])
    assert lab.kubectl.exists("site", "alpha", "-n", "lab")  # the real owner is untouched


@pytest.mark.parametrize(("site", "cascade"), [
    ("beta", "background"), ("gamma", "foreground"), ("delta", "orphan")])
def test_4_the_three_cascade_modes(lab: Lab, site: str, cascade: str) -> None:
    with site_operator(lab.cluster.kubeconfig):
        lab.kubectl.apply_file(LAB / "cascade-sites.yaml")
        lab.wait_children(site)
        lab.cluster.settle()
        plan = lab.gc("plan", "delete", f"site/{site}", "-n", "lab", "--cascade", cascade)
        planned = {d["name"] for d in plan["deleted"]}  # type: ignore[attr-defined]
        lab.kubectl("delete", "site", site, "-n", "lab", f"--cascade={cascade}")
        lab.cluster.settle()
        assert not lab.kubectl.exists("site", site, "-n", "lab")
        assert not lab.outside(site)  # the operator's finalizer did its clean-up
        left = {c for c in lab.children(site) if lab.kubectl.exists(c, "-n", "lab")}
        if cascade == "orphan":
            assert left == set(lab.children(site))
            for child in left:
                assert not lab.kubectl.json(child, "-n", "lab")["metadata"].get(
                    "ownerReferences")
            assert planned == {site}
            assert {s["object"]["name"] for s in plan["survivors"]} == {  # type: ignore[attr-defined]
                f"{site}-config", f"{site}-content", site, f"{site}-credentials"}
        else:
            assert left == set()
            assert planned == {site, f"{site}-config", f"{site}-content",
                               f"{site}-credentials"}
        records = [lab.gc("why", child, "-n", "lab") for child in lab.children(site)[:1]]
        if cascade == "foreground":
            assert "OwnerWaitingForeground" in str(records[0]["conclusion"])
            firsts = {c["first"]["name"] for c in plan["orderConstraints"]}  # type: ignore[attr-defined]
            assert f"{site}-config" in firsts  # children before their Site
        if cascade == "background":
            assert "OwnerAbsent" in str(records[0]["conclusion"])


def test_5_foreground_deletion_held_by_a_blocking_child(lab: Lab) -> None:
    with site_operator(lab.cluster.kubeconfig):
        lab.kubectl("apply", "-f", str(LAB / "site-epsilon.yaml"))
        lab.wait_children("epsilon")
        uid = lab.kubectl.uid("site", "epsilon", "-n", "lab")
        lab.kubectl.apply_file(LAB / "blocking-child.yaml", SITE_UID=uid)
        plan = lab.gc("plan", "delete", "site/epsilon", "-n", "lab", "--cascade", "foreground")
        assert {h["object"]["name"] for h in plan["hanging"]} == {  # type: ignore[attr-defined]
            "epsilon", "epsilon-hold"}
        lab.kubectl("delete", "site", "epsilon", "-n", "lab", "--cascade=foreground",
                    "--wait=false")
        lab.cluster.settle()
        site = lab.kubectl.json("site", "epsilon", "-n", "lab")["metadata"]
        assert site["deletionTimestamp"] and site["finalizers"] == ["foregroundDeletion"]
        doctor = lab.gc("doctor", "-n", "lab", "--stuck-after", "0")
        stuck = {f["object"]["name"]: f for f in doctor["findings"]  # type: ignore[attr-defined]
                 if f["kind"] == "StuckDeletion"}
        epsilon = stuck["epsilon"]
        assert epsilon["deletion"]["deletionTimestamp"] == site["deletionTimestamp"]  # 1
        assert [r["finalizer"] for r in epsilon["finalizers"]] == ["foregroundDeletion"]  # 2
        assert epsilon["finalizers"][0]["alive"] == "alive"  # 3: the GC runs
        (blocking,) = epsilon["blockingDependents"]  # 4
        assert blocking["object"]["name"] == "epsilon-hold"
        assert "manual.labhub.io/hold" in blocking["holdsBecause"]
        # the finalizer is nobody's: remove it with the command the doctor prints
        fix = " ".join(stuck["epsilon-hold"]["fix"])
        command = re.search(r"kubectl patch (.*?) --type=json -p '(.*?)'", fix)
        assert command is not None and "this skips" in fix
        target = command.group(1).split()
        lab.kubectl("patch", *target, "--type=json", "-p", command.group(2))
        lab.cluster.settle()
        assert not lab.kubectl.exists("site", "epsilon", "-n", "lab")
        assert not lab.kubectl.exists("configmap", "epsilon-hold", "-n", "lab")


def test_6_operator_removed_before_its_site(lab: Lab) -> None:
    with site_operator(lab.cluster.kubeconfig):
        lab.kubectl("apply", "-f", str(LAB / "site-zeta.yaml"))
        lab.wait_children("zeta")
        eventually(lambda: lab.outside("zeta"), what="outside state")
    # the operator is gone (its Lease released); now the Site is deleted
    lab.kubectl("delete", "site", "zeta", "-n", "lab", "--wait=false")
    lab.cluster.settle()
    doctor = lab.gc("doctor", "-n", "lab", "--stuck-after", "0", "--controllers-file",
                    str(EXAMPLES / "controllers.yaml"))
    (zeta,) = [f for f in doctor["findings"]  # type: ignore[attr-defined]
               if f["kind"] == "StuckDeletion" and f["object"]["name"] == "zeta"]
    (remover,) = zeta["finalizers"]
    assert remover["finalizer"] == "own.labhub.io/cleanup"
    assert remover["who"].startswith("the Site operator")
    assert remover["alive"] == "not alive"
    assert remover["evidence"][0]["fact"] == "released: no holder"
    assert "labhub-outside" in " ".join(zeta["fix"])  # what stripping it would leave behind
    assert lab.outside("zeta")  # still billed
    with site_operator(lab.cluster.kubeconfig):  # the safe fix: bring the operator back
        eventually(lambda: not lab.kubectl.exists("site", "zeta", "-n", "lab"), what="zeta gone")
    assert not lab.outside("zeta")
    lab.cluster.settle()
    assert not any(lab.kubectl.exists(c, "-n", "lab") for c in lab.children("zeta"))


def test_7_namespace_stuck_on_its_content(lab: Lab) -> None:
    lab.kubectl("delete", "namespace", "lab", "--wait=false")
    lab.cluster.settle()
    doctor = lab.gc("doctor", "--stuck-after", "0")
    (ns,) = [f for f in doctor["findings"]  # type: ignore[attr-defined]
             if f["kind"] == "StuckNamespace"]
    assert ns["object"]["name"] == "lab"
    assert "own.labhub.io/cleanup" in " ".join(ns["facts"])
    with site_operator(lab.cluster.kubeconfig):
        eventually(lambda: not lab.kubectl.exists("namespace", "lab"), what="namespace gone",
                   timeout=60)
