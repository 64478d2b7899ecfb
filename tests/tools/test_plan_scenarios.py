"""The mismatches the generated scenarios (``test_plan_random.py``) found between a plan
and reality, each a fixed scenario run the same way: built on a running kubegc, planned,
run for real, compared (``plan_reality.run_graph``), with what the fix made the plan say."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from itertools import count

import pytest

from kubegc.testing import Cluster
from kubegc.tools.plan import PlanReport

from .plan_reality import run_graph, scenario_cluster
from .scenarios import CLEANUP, STUCK, Graph, Node

IDENTS = count(10_000)  # apart from test_plan_random's, should both run on one cluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with scenario_cluster() as c:
        yield c


def run(cluster: Cluster, graph: Graph) -> PlanReport:
    graph.ident = next(IDENTS)
    report = asyncio.run(run_graph(cluster, graph))
    assert report is not None
    return report


def test_a_jobs_pod_deleted_fails_the_job_and_its_ttl_deletes_it(cluster: Cluster) -> None:
    """Deleting the pod of a Job with backoffLimit 0: the Job controller counts it failed,
    the Job fails and, with ttlSecondsAfterFinished 0, is deleted at once with its
    Deployment. The plan runs no Job controller: it said only the pod goes; it now names
    the Job's reaction (and the comparison leaves the Job and what it owns out)."""
    graph = Graph([Node("0-job", "Job", 0, job={"run": "600", "ttl": 0}),
                   Node("1-deployment", "Deployment", 0, owners=[(0, True, True)],
                        replicas=1, finalizer=CLEANUP)],
                  pre_delete=None, target=0, policy="Foreground", target_pod=True)
    report = run(cluster, graph)
    assert [r.workload.name for r in report.reactions] == [graph.name(graph.nodes[0])]
    assert "past backoffLimit 0, fails" in report.reactions[0].why


def test_a_statefulsets_pod_deleted_is_made_again(cluster: Cluster) -> None:
    """Deleting a StatefulSet's pod: its controller makes it again, with the same name (a
    new uid); the plan names that reaction, and the comparison requires it."""
    graph = Graph([Node("0-statefulset", "StatefulSet", 0, replicas=1)],
                  pre_delete=None, target=0, policy="Background", target_pod=True)
    report = run(cluster, graph)
    (reaction,) = report.reactions
    assert reaction.workload.kind == "StatefulSet"
    assert "makes each pod again, with the same name" in reaction.why


def test_a_delete_a_webhook_refuses_is_named_by_the_plan(cluster: Cluster) -> None:
    """A webhook refuses the DELETE of a guarded ConfigMap: reality deletes nothing, the
    plan — which calls no webhook — deletes it and its dependent, and the comparison
    accepts that only because the plan's note names the webhook configuration."""
    graph = Graph([Node("0-configmap", "ConfigMap", 0, guarded=True),
                   Node("1-configmap", "ConfigMap", 0, owners=[(0, True, False)])],
                  pre_delete=None, target=0, policy="Foreground", webhook="deny")
    report = run(cluster, graph)
    assert any(f"ValidatingWebhookConfiguration/g{graph.ident}-guard" in note
               for note in report.notes), report.notes
    assert {r.name for r in report.deleted} == {graph.name(n) for n in graph.nodes}


def test_a_refused_delete_of_the_garbage_collector_is_named_by_the_plan(
        cluster: Cluster) -> None:
    """The webhook refuses the garbage collector's DELETE of a guarded dependent, not the
    user's: reality deletes the owner and the GC retries the dependent for ever (as
    upstream: kubegc never settles, the scenario waits until that is all it does, with
    ``settle(stuck_after=...)``); the plan, which calls no webhook, ends, deletes both and
    names the webhook configuration."""
    graph = Graph([Node("0-configmap", "ConfigMap", 0),
                   Node("1-configmap", "ConfigMap", 0, guarded=True,
                        owners=[(0, True, False)])],
                  pre_delete=None, target=0, policy="Background", webhook="deny")
    report = run(cluster, graph)
    assert any(f"ValidatingWebhookConfiguration/g{graph.ident}-guard" in note
               for note in report.notes), report.notes
    assert {r.name for r in report.deleted} == {graph.name(n) for n in graph.nodes}


def test_a_target_the_garbage_collector_is_refused_is_not_an_error_of_the_plan(
        cluster: Cluster) -> None:
    """Found by the generator once it drew webhooks refusing the GC's DELETEs: the guarded
    target's only owner is in another namespace, so the GC deletes it — refused, it stays,
    retried for ever. The plan's warm-up (no webhook) deleted it before the plan's own
    delete, which failed "not found" about an object that exists; the plan now says it goes
    anyway and names the webhook that takes that DELETE."""
    graph = Graph([Node("0-secret", "Secret", 1),
                   Node("1-secret", "Secret", 0, guarded=True, owners=[(0, False, False)])],
                  pre_delete=None, target=1, policy="Orphan", webhook="deny")
    report = run(cluster, graph)
    assert report.error == ""
    assert any(f"Secret/{graph.name(graph.nodes[1])} -n {graph.namespace_of(graph.nodes[1])} "
               "goes before this delete" in note for note in report.notes), report.notes
    assert any(f"ValidatingWebhookConfiguration/g{graph.ident}-guard" in note
               for note in report.notes), report.notes


def test_a_refused_delete_of_an_object_that_never_goes_is_named_by_the_plan(
        cluster: Cluster) -> None:
    """Found by the generator (seed 2): the guarded target keeps a finalizer nobody removes,
    so the plan never deletes it, only sets its deletionTimestamp and orphans its
    dependents; the note named the webhooks of what the plan deletes only, so it named none,
    while the webhook refuses the DELETE itself and reality orphans nothing."""
    graph = Graph([Node("0-configmap", "ConfigMap", 0, guarded=True, finalizer=STUCK),
                   Node("1-configmap", "ConfigMap", 0, owners=[(0, True, False)])],
                  pre_delete=None, target=0, policy="Orphan", webhook="deny")
    report = run(cluster, graph)
    assert report.deleted == []
    assert any(f"ValidatingWebhookConfiguration/g{graph.ident}-guard" in note
               for note in report.notes), report.notes


def test_a_node_deleted_takes_its_pods_with_it(cluster: Cluster) -> None:
    """Deleting a Node no kubelet runs: pod GC deletes its pods (after its quarantine: the
    plan says when, reality here is sooner), a pod on another node stays."""
    graph = Graph([Node("0-pod", "Pod", 0, pod={"grace": 1, "exit": "0", "ignore_term": False},
                        own_node=True),
                   Node("1-pod", "Pod", 0, pod={"grace": 1, "exit": "0", "ignore_term": False}),
                   Node("2-configmap", "ConfigMap", 0, owners=[(0, False, False)])],
                  pre_delete=None, target=0, policy="Background", target_kind="node")
    report = run(cluster, graph)
    assert {r.name for r in report.deleted} == {graph.node_name, graph.name(graph.nodes[0]),
                                                graph.name(graph.nodes[2])}

