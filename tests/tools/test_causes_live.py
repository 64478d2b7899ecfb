"""Causes link up (issue 24), against a running kubegc: a root cause held by another is
one chain ending at what a person can act on; "wait" only with what ends the wait."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from kubegc.api.resources import GroupVersionResource
from kubegc.client.interface import DeleteOptions
from kubegc.testing import Cluster

from .lab import eventually, kubegc_json

CRDS = GroupVersionResource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
GADGETS = GroupVersionResource("example.com", "v1", "gadgets")
PODS = GroupVersionResource("", "v1", "pods")
CM = GroupVersionResource("", "v1", "configmaps")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")
GADGET_CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
              "metadata": {"name": "gadgets.example.com"},
              "spec": {"group": "example.com", "scope": "Namespaced",
                       "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget",
                                 "listKind": "GadgetList"},
                       "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                           "openAPIV3Schema": {"type": "object",
                                               "x-kubernetes-preserve-unknown-fields": True}}}]}}
HOLD = "example.com/hold"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster() as cluster:
        async def build() -> None:
            c = cluster.client
            await c.create(CRDS, GADGET_CRD)
            await cluster.asettle()
            await c.create(GADGETS, {"apiVersion": "example.com/v1", "kind": "Gadget",
                                     "metadata": {"name": "g1", "finalizers": [HOLD]}},
                           namespace="default")
            await c.delete(CRDS, "gadgets.example.com")
            await c.create(NAMESPACES, {"metadata": {"name": "held"}})
            await c.create(CM, {"metadata": {"name": "inside", "finalizers": [HOLD]}},
                           namespace="held")
            await c.delete(NAMESPACES, "held")
            await c.create(PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {
                "name": "slow", "annotations": {"kubegc.io/ignore-term": "true"}},
                "spec": {"terminationGracePeriodSeconds": 300,
                         "containers": [{"name": "c", "image": "x"}]}}, namespace="default")
        cluster.run(build())

        def running() -> bool:
            pod = cluster.run(cluster.client.get(PODS, "slow", namespace="default"))
            return bool((pod.get("status") or {}).get("phase") == "Running")
        eventually(running)
        cluster.run(cluster.client.delete(PODS, "slow", namespace="default",
                                          options=DeleteOptions(grace_period_seconds=300)))
        yield cluster


def doctor(cluster: Cluster) -> dict[str, Any]:
    return dict(kubegc_json("doctor", "--kubeconfig", str(cluster.kubeconfig),
                            "--stuck-after", "0s"))


def finding(report: dict[str, Any], kind: str, name: str) -> dict[str, Any]:
    return next(f for f in report["findings"]
                if f["object"]["kind"] == kind and f["object"]["name"] == name)


def test_a_crd_held_by_its_instances_finalizer_is_one_chain(cluster: Cluster) -> None:
    report = doctor(cluster)
    crd = finding(report, "CustomResourceDefinition", "gadgets.example.com")
    text = json.dumps(crd["fix"])
    assert "nothing to do but wait" not in text, crd["fix"]
    assert "Gadget" in text and "g1" in text and HOLD in text, crd["fix"]
    # one root cause, the instance's finalizer, holding both the instance and the CRD
    group = next(r for r in report["rootCauses"] if HOLD in r["title"])
    held = {(h["kind"], h["name"]) for h in group["holds"]}
    assert {("Gadget", "g1"), ("CustomResourceDefinition", "gadgets.example.com")} <= held
    assert not any("nothing to do but wait" in " ".join(r["fix"]) and any(
        h["kind"] == "CustomResourceDefinition" for h in r["holds"])
                   for r in report["rootCauses"]), report["rootCauses"]


def test_why_of_the_crd_names_the_instance_that_holds_it(cluster: Cluster) -> None:
    report = kubegc_json("why", "crd/gadgets.example.com", "--kubeconfig",
                         str(cluster.kubeconfig))
    fix = json.dumps(report["findings"][0]["fix"])
    assert "g1" in fix and HOLD in fix and "nothing to do but wait" not in fix
    # its conclusion ends the chain at the instance and its fix
    assert f"held by finalizer {HOLD}" in report["conclusion"], report["conclusion"]
    assert "on Gadget/g1 -n default — fix: find the controller" in report["conclusion"]


def test_why_of_a_pod_inside_its_grace_period_says_when_the_wait_ends(cluster: Cluster) -> None:
    report = kubegc_json("why", "pod/slow", "-n", "default", "--kubeconfig",
                         str(cluster.kubeconfig))
    ends = report["findings"][0]["deletion"]["deletionTimestamp"]
    assert f"wait: ends by {ends}" in report["conclusion"], report["conclusion"]


def test_a_namespace_held_by_its_content_is_one_chain_in_doctor_and_why(cluster: Cluster) -> None:
    def held() -> bool:
        ns = finding(doctor(cluster), "Namespace", "held")
        return "ConfigMap/inside -n held" in json.dumps(ns["next"])
    eventually(held)
    report = doctor(cluster)
    group = next(r for r in report["rootCauses"] if HOLD in r["title"])
    assert ("Namespace", "held") in {(h["kind"], h["name"]) for h in group["holds"]}
    why = kubegc_json("why", "ns/held", "--kubeconfig", str(cluster.kubeconfig))
    assert f"held by finalizer {HOLD}" in why["conclusion"], why["conclusion"]
    assert "on ConfigMap/inside -n held — fix: find the controller" in why["conclusion"]


def test_a_pod_inside_its_grace_period_with_its_kubelet_alive_waits(cluster: Cluster) -> None:
    report = doctor(cluster)
    pod = finding(report, "Pod", "slow")
    text = json.dumps([pod["fix"], [r for r in report["rootCauses"]
                                    if any(h["name"] == "slow" for h in r["holds"])]])
    assert "bring the kubelet" not in text and "force" not in text, text
    ends = pod["deletion"]["deletionTimestamp"]
    assert f"wait: ends by {ends}" in text, text


def test_a_really_recreated_owner_is_named_from_the_garbage_collectors_record() -> None:
    """ConfigMap boss deleted (its child collected by the GC: the record names boss's first
    uid), created again, and a child written with the first uid: the uid was the earlier
    incarnation's, not "never this owner's"."""
    with Cluster() as cluster:
        async def build() -> str:
            c = cluster.client
            boss = await c.create(CM, {"metadata": {"name": "boss"}}, namespace="default")
            first = {"apiVersion": "v1", "kind": "ConfigMap", "name": "boss",
                     "uid": boss["metadata"]["uid"]}
            await c.create(CM, {"metadata": {"name": "c1", "ownerReferences": [first]}},
                           namespace="default")
            await cluster.asettle(10)
            await c.delete(CM, "boss", namespace="default")
            return str(first["uid"])
        uid = cluster.run(build())

        def collected() -> bool:
            names = {o["metadata"]["name"] for o in cluster.run(
                cluster.client.list(CM, namespace="default"))["items"]}
            return "c1" not in names and "boss" not in names
        eventually(collected)

        async def again() -> None:
            c = cluster.client
            await c.create(CM, {"metadata": {"name": "boss"}}, namespace="default")
            await c.create(CM, {"metadata": {
                "name": "c2", "finalizers": [HOLD], "ownerReferences": [
                    {"apiVersion": "v1", "kind": "ConfigMap", "name": "boss", "uid": uid}]}},
                namespace="default")
            await cluster.asettle(10)
        cluster.run(again())
        report = kubegc_json("doctor", "--kubeconfig", str(cluster.kubeconfig))
        refs = [f for f in report["findings"] if f["object"]["name"] == "c2"
                and f["kind"] in ("OwnerRecreated", "OwnerAbsent")]
        assert [f["kind"] for f in refs] == ["OwnerRecreated"], refs
        facts = " ".join(refs[0]["facts"])
        assert "never this owner's" not in facts and f"uid {uid} existed" in facts, facts
