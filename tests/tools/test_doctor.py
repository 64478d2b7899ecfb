"""kubegc doctor against a dump (tests/tools/testdata/lab-dump.yaml): every finding, what
it says happens next, and the safe fix."""

from __future__ import annotations

import pytest

from kubegc.api.clock import ManualClock
from kubegc.client.dump import DumpClient
from kubegc.tools.doctor import DoctorOptions, DoctorReport, Finding, FindingKind, diagnose
from kubegc.tools.finalizers import Alive, ControllerEntry, ControllerMap
from kubegc.tools.inventory import Inventory, read_inventory

from .conftest import NOW, inventory_of


def find(report: DoctorReport, kind: FindingKind, name: str) -> Finding:
    matches = [f for f in report.findings if f.kind is kind and f.object.name == name]
    assert len(matches) == 1, [(f.kind, f.object.name) for f in report.findings]
    return matches[0]


@pytest.mark.parametrize(("kind", "name", "in_next", "in_fix"), [
    pytest.param(FindingKind.OWNER_RECREATED, "stale-uid", "garbage collector deletes",
                 "point the reference at that uid", id="uid-of-recreated-owner"),
    pytest.param(FindingKind.OWNER_ABSENT, "wrong-uid", "garbage collector deletes",
                 "never make it up", id="made-up-owner-uid"),
    pytest.param(FindingKind.OWNER_ABSENT, "no-owner", "stays because Site/alpha exists",
                 "/metadata/ownerReferences/0", id="absent-owner-with-solid-owner"),
    pytest.param(FindingKind.OWNER_IN_OTHER_NAMESPACE, "cross-namespace",
                 "garbage collector deletes", "owner's namespace (lab)", id="cross-namespace"),
    pytest.param(FindingKind.CLUSTER_SCOPED_DEPENDENT, "pv-owned-by-configmap",
                 "never collects it", "remove the reference", id="cluster-scoped-child"),
    pytest.param(FindingKind.UNKNOWN_OWNER_KIND, "widget-pod", "retries with backoff",
                 "CustomResourceDefinition of example.com/v1/Widget", id="unknown-kind"),
    pytest.param(FindingKind.MULTIPLE_CONTROLLERS, "loop-b", "rejects any update",
                 "controller=true only", id="two-controllers"),
    pytest.param(FindingKind.OWNERSHIP_CYCLE, "loop-a", "blockOwnerDeletion=false",
                 "break the cycle", id="cycle"),
    pytest.param(FindingKind.STUCK_NAMESPACE, "old", "lose their finalizers: ConfigMap/leftover",
                 "do not force namespace old out", id="stuck-namespace"),
])
async def test_findings(lab_inventory: Inventory, kind: FindingKind, name: str, in_next: str,
                        in_fix: str) -> None:
    finding = find(diagnose(lab_inventory), kind, name)
    assert in_next in " ".join(finding.next)
    assert in_fix in " ".join(finding.fix)


async def test_stuck_foreground_owner_answers_the_four_questions(
        lab_inventory: Inventory) -> None:
    f = find(diagnose(lab_inventory), FindingKind.STUCK_DELETION, "epsilon")
    assert f.deletion is not None
    assert (f.deletion.deletion_timestamp, int(f.deletion.deleting_for)) == (
        "2026-01-01T00:05:00Z", 300)  # 1. when
    assert [r.finalizer for r in f.removers] == ["foregroundDeletion"]  # 2. which finalizers
    assert "garbage collector" in f.removers[0].who  # 3. who removes it ...
    assert f.removers[0].alive is Alive.UNKNOWN  # ... no Lease in the dump: no evidence
    leaves = {leaf.object.name: leaf for b in f.blocking for leaf in b.leaves()}  # 4.
    assert set(leaves) == {"epsilon-config", "hold-me"}
    assert "not deleted yet" in leaves["epsilon-config"].holds_because
    assert "manual.labhub.io/hold" in leaves["hold-me"].holds_because
    assert "ConfigMap/hold-me holds it" in " ".join(f.fix)
    assert "this skips" in " ".join(f.fix)  # never strip a finalizer without saying so


async def test_custom_finalizer_of_a_dead_operator(lab_inventory: Inventory) -> None:
    f = find(diagnose(lab_inventory), FindingKind.STUCK_DELETION, "gamma")
    (remover,) = f.removers
    assert remover.alive is Alive.NO
    assert remover.evidence[0].fact == "released: no holder"
    assert remover.found_by == ("kubegc.io/removes-finalizers on Lease "
                                "labhub-system/site-operator.own.labhub.io")
    fix = " ".join(f.fix)
    assert "start (or scale up) the controller of Lease labhub-system/site-operator" in fix
    assert '"op":"test","path":"/metadata/finalizers/0","value":"own.labhub.io/cleanup"' in fix


async def test_mapping_file_names_the_controller_and_its_cleanup(
        lab_inventory: Inventory) -> None:
    mapping = ControllerMap([ControllerEntry(
        "own.labhub.io/*", "the Site operator",
        leases=("labhub-system/site-operator.own.labhub.io",), cleanup="the outside state")])
    f = find(diagnose(lab_inventory, DoctorOptions(mapping=mapping)),
             FindingKind.STUCK_DELETION, "gamma")
    assert f.removers[0].who == "the Site operator"
    assert f.removers[0].found_by == "mapping file"
    assert "this skips the outside state" in " ".join(f.fix)


async def test_graceful_pod_on_a_vanished_node(lab_inventory: Inventory) -> None:
    f = find(diagnose(lab_inventory), FindingKind.STUCK_DELETION, "stuck-pod")
    assert f.deletion is not None and f.deletion.requested == "2026-01-01T00:03:00Z"
    assert f.removers[0].who == "the kubelet on node gone-node"
    assert f.removers[0].alive is Alive.NO
    assert "--grace-period=0 --force" in " ".join(f.fix)


async def test_stuck_threshold(lab_inventory: Inventory) -> None:
    report = diagnose(lab_inventory, DoctorOptions(stuck_after=6 * 60))
    stuck = sorted(f.object.name for f in report.findings
                   if f.kind in (FindingKind.STUCK_DELETION, FindingKind.STUCK_NAMESPACE))
    assert stuck == ["leftover", "old", "stuck-pod"]  # deleting for more than 6 minutes


async def test_namespace_scope_keeps_only_that_namespace() -> None:
    inv = await inventory_of([
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "x", "namespace": "a", "uid": "x",
                      "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
                                           "name": "gone", "uid": "gone"}]}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "y", "namespace": "b", "uid": "y",
                      "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
                                           "name": "gone", "uid": "gone"}]}},
    ], namespace="a")
    assert [f.object.name for f in diagnose(inv).findings] == ["x"]


async def test_owner_of_a_kind_missing_from_a_dump_is_not_called_absent() -> None:
    inv = await inventory_of([
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "p", "namespace": "a", "uid": "p",
                      "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                           "name": "rs", "uid": "rs"}]}}])
    assert diagnose(inv).findings == []  # the dump holds no ReplicaSet at all: unverifiable


async def test_clean_cluster_has_no_findings() -> None:
    inv = await inventory_of([{"apiVersion": "v1", "kind": "ConfigMap",
                               "metadata": {"name": "x", "namespace": "a", "uid": "x"}}])
    assert diagnose(inv).findings == []


def _event(child: dict[str, str], message: str, when: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Event", "type": "Warning",
            "reason": "OwnerRefInvalidNamespace", "message": message,
            "metadata": {"name": f"{child['name']}.{when}", "namespace": child.get(
                "namespace") or "default", "uid": f"ev-{when}", "creationTimestamp": when},
            "involvedObject": {"apiVersion": "v1", **child}, "lastTimestamp": when}


DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment",
          "metadata": {"name": "web", "namespace": "default", "uid": "web-uid"}}
PV_KID = {"apiVersion": "v1", "kind": "PersistentVolume",
          "metadata": {"name": "pv-kid", "uid": "pv-kid-uid",
                       "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                            "name": "web", "uid": "web-uid"}]}}
PV_EVENT = _event({"kind": "PersistentVolume", "name": "pv-kid", "uid": "pv-kid-uid"},
                  'ownerRef [apps/v1/Deployment, namespace: , name: web, uid: web-uid] does '
                  'not exist in namespace ""', "2026-01-01T00:09:00Z")


async def test_cluster_scoped_child_of_a_namespaced_owner_is_reported_once() -> None:
    """The reference and the GC's OwnerRefInvalidNamespace event about it are one problem:
    one finding, with the upstream rule (never collected) and the event as evidence."""
    report = diagnose(await inventory_of([DEPLOY, PV_KID, PV_EVENT]))
    assert [(f.kind, f.object.name) for f in report.findings] == [
        (FindingKind.CLUSTER_SCOPED_DEPENDENT, "pv-kid")]
    (f,) = report.findings
    assert "never deleted by the garbage collector" in " ".join(f.next)
    assert "OwnerRefInvalidNamespace Warning event" in " ".join(f.next)
    facts = " ".join(f.facts)
    assert "Warning OwnerRefInvalidNamespace event pv-kid.2026-01-01T00:09:00Z" in facts
    assert "(1m ago)" in facts
    assert '"op":"remove","path":"/metadata/ownerReferences/0"' in " ".join(f.fix)


async def test_cross_namespace_owner_event_is_evidence_not_a_second_finding(
        lab_inventory: Inventory) -> None:
    report = diagnose(lab_inventory)
    names = [(f.kind, f.object.name) for f in report.findings
             if f.object.name == "cross-namespace"]
    assert names == [(FindingKind.OWNER_IN_OTHER_NAMESPACE, "cross-namespace")]
    facts = " ".join(find(report, FindingKind.OWNER_IN_OTHER_NAMESPACE, "cross-namespace").facts)
    assert "event cross-namespace.1881c0ffee" in facts


@pytest.mark.parametrize(("child", "in_title", "in_next"), [
    pytest.param({"kind": "Secret", "namespace": "other", "name": "gone", "uid": "gone-uid"},
                 "an owner in another namespace", "deleted the child", id="namespaced"),
    pytest.param({"kind": "PersistentVolume", "name": "gone-pv", "uid": "gone-pv-uid"},
                 "that a cluster-scoped object cannot have", "something else deleted it",
                 id="cluster-scoped"),
])
async def test_event_about_a_gone_child_is_the_only_trace(
        child: dict[str, str], in_title: str, in_next: str) -> None:
    report = diagnose(await inventory_of([DEPLOY, _event(child, "m", "2026-01-01T00:01:00Z")]))
    (f,) = report.findings
    assert (f.kind, f.object.name) == (FindingKind.INVALID_NAMESPACE_EVENT, child["name"])
    assert in_title in f.title and in_next in " ".join(f.next)
    assert "is gone" in " ".join(f.facts)


async def test_event_about_a_fixed_reference_is_only_information() -> None:
    fixed = {**PV_KID, "metadata": {"name": "pv-kid", "uid": "pv-kid-uid"}}
    (f,) = diagnose(await inventory_of([DEPLOY, fixed, PV_EVENT])).findings
    assert (f.kind, f.severity.label) == (FindingKind.INVALID_NAMESPACE_EVENT, "info")
    assert "since removed" in f.title


async def test_ages_follow_a_cluster_clock_that_runs_ahead() -> None:
    """Objects stamped by a clock ahead of ours (kubegc serve --time-scale): judged on the
    cluster's time, read from what it wrote last (a Lease renewal)."""
    objects = [
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "stuck", "namespace": "a", "uid": "s", "finalizers": ["x.io/h"],
                      "creationTimestamp": "2026-01-01T02:00:00Z",
                      "deletionTimestamp": "2026-01-01T02:01:00Z"}},
        {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
         "metadata": {"name": "kube-controller-manager", "namespace": "kube-system",
                      "uid": "l", "creationTimestamp": "2026-01-01T00:00:00Z"},
         "spec": {"holderIdentity": "kubegc", "leaseDurationSeconds": 15,
                  "renewTime": "2026-01-01T02:05:00.000000Z"}}]
    for follow, found in ((False, []), (True, ["stuck"])):
        inv = await read_inventory(DumpClient(objects), clock=ManualClock(NOW), source="t",
                                   follow_cluster_clock=follow)
        report = diagnose(inv)
        assert [f.object.name for f in report.findings
                if f.kind is FindingKind.STUCK_DELETION] == found
    assert report.now.isoformat() == "2026-01-01T02:05:00+00:00"
    assert "the cluster's clock is 1h55m ahead of this machine's" in report.notes[0]


def _terminating_namespace_with_a_held_pod() -> list[dict[str, object]]:
    deleting = {"deletionTimestamp": "2026-01-01T00:00:00Z"}
    return [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": "shop", "uid": "ns", **deleting},
         "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Terminating"}},
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "web", "namespace": "shop", "uid": "p",
                      "finalizers": ["example.com/hold"], **deleting}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "settings", "namespace": "shop", "uid": "cm"}},
    ]


@pytest.mark.parametrize("version,pods_first", [
    (None, True),  # a dump: the content says the pods go first
    ("1.33", True), ("1.32", False)])
async def test_a_namespace_deleting_pods_first_says_the_rest_waits_for_them(
        version: str | None, pods_first: bool) -> None:
    from dataclasses import replace

    from kubegc.api.version import parse_version

    inv = await inventory_of(_terminating_namespace_with_a_held_pod())
    if version is not None:
        inv = replace(inv, emulated_version=parse_version(version))
    report = diagnose(inv)
    (finding,) = [f for f in report.findings if f.object.kind == "Namespace"]
    said = " ".join(finding.facts)
    assert ("pods first" in said) is pods_first, finding.facts
    if pods_first:
        assert "1 other object waits for 1 pod" in said
        assert finding.next[0] == ("the rest of the content is deleted once these pods are "
                                   "gone: Pod/web -n shop")


async def test_an_absent_owner_names_the_webhooks_that_may_refuse_the_gcs_delete() -> None:
    """The garbage collector is to delete ConfigMap/x, whose owner is gone; a webhook takes
    DELETEs of configmaps: if it refuses, x stays and the GC retries for ever (as upstream),
    so the finding names it. A webhook of other resources is not named, nor one for x's
    neighbour whose owner exists."""
    def cm(name: str, owner: str = "") -> dict[str, object]:
        meta: dict[str, object] = {"name": name, "namespace": "ns", "uid": f"uid-{name}"}
        if owner:
            meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": owner,
                                        "uid": f"uid-{owner}"}]
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}

    def config(name: str, resources: list[str]) -> dict[str, object]:
        return {"apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "ValidatingWebhookConfiguration", "metadata": {"name": name},
                "webhooks": [{"name": f"{name}.example.com", "rules": [{
                    "operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["v1"],
                    "resources": resources}]}]}

    inv = await inventory_of([cm("owner"), cm("kept", "owner"), cm("x", "gone"),
                              config("keep", ["configmaps"]), config("pods", ["pods"])])
    facts = find(diagnose(inv), FindingKind.OWNER_ABSENT, "x").facts
    assert ('admission webhooks may be asked about its DELETE: ValidatingWebhookConfiguration/'
            'keep (webhook "keep.example.com", failurePolicy Fail: DELETE of configmaps); if '
            "one refuses the garbage collector's, ConfigMap/x stays and the garbage collector "
            "retries it for ever") in " ".join(facts)
    assert "pods.example.com" not in " ".join(facts)
    assert not [f for f in diagnose(inv).findings if f.object.name == "kept"]
