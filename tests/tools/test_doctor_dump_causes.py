"""The doctor on dumps, where issue 24 found it wrong: pods in graceful termination, by
where they are in it (inside the grace period with the kubelet alive, "wait: ends by T";
past it with the kubelet alive, the kubelet kills them now; with the kubelet gone, bring it
back or force), and a CRD being deleted (held by an instance: one chain; its instances not
in the dump: said so, never "wait")."""

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


CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "gadgets.example.com", "uid": "crd",
                    "creationTimestamp": "2026-01-01T00:00:00Z",
                    "deletionTimestamp": "2026-01-01T00:01:00Z",
                    "finalizers": ["customresourcecleanup.apiextensions.k8s.io"]},
       "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "gadgets", "kind": "Gadget"},
                "versions": [{"name": "v1", "served": True, "storage": True}]}}


async def test_a_crd_in_a_dump_without_its_instances_is_not_a_wait() -> None:
    report = diagnose(await inventory_of([CRD]), DoctorOptions(stuck_after=0))
    (finding,) = report.findings
    text = " ".join(finding.fix)
    assert "wait" not in text, finding.fix
    assert ("read the cluster itself (or a dump with the Gadget.example.com objects)"
            in text), finding.fix
    assert [r.cause.what for r in report.root_causes] == [
        "CRD whose instances are not in the dump"]


async def test_a_crd_in_a_dump_held_by_an_instance_is_one_chain() -> None:
    gadget = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {
        "name": "g1", "namespace": "default", "uid": "g1",
        "creationTimestamp": "2026-01-01T00:00:00Z", "deletionTimestamp": "2026-01-01T00:01:00Z",
        "finalizers": ["example.com/hold"]}}
    report = diagnose(await inventory_of([CRD, gadget]), DoctorOptions(stuck_after=0))
    (group,) = report.root_causes
    assert {f.object.name for f in group.findings} == {"gadgets.example.com", "g1"}
    crd = next(f for f in report.findings if f.object.kind == "CustomResourceDefinition")
    assert crd.fix[0].startswith("CustomResourceDefinition/gadgets.example.com waits for its "
                                 "instance Gadget/g1 -n default (example.com/hold)")
