"""Workload history against a real ``kubegc serve`` with the real kubectl: a StatefulSet's
and a DaemonSet's ControllerRevisions (``kubectl rollout history`` / ``undo`` read and
write them), trimmed to ``revisionHistoryLimit``; a Deployment's old ReplicaSets trimmed
likewise; and what ``kubegc why -o json`` says of each trimmed object (the controller and
its limit, never "deleted by a request"). ``kubegc plan`` of a set's delete predicts its
revisions' fate as the live cluster then does it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.conftest import Server, eventually


def items(server: Server, ns: str, kind: str) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = json.loads(
        server.kubectl("get", kind, "-n", ns, "-o", "json").stdout)["items"]
    return got


def revisions(server: Server, ns: str) -> list[dict[str, Any]]:
    return sorted(items(server, ns, "controllerrevisions"), key=lambda r: r["revision"])


def stateful_set(replicas: int = 1, limit: int = 2) -> str:
    return json.dumps({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "web", "annotations": {"kubernetes.io/change-cause": "image 1"}},
        "spec": {"replicas": replicas, "serviceName": "web", "revisionHistoryLimit": limit,
                 "podManagementPolicy": "Parallel",
                 "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                     "containers": [{"name": "c", "image": "busybox:1"}]}}}})


def roll(server: Server, ns: str, what: str, version: int) -> None:
    server.kubectl("annotate", "-n", ns, what, f"kubernetes.io/change-cause=image {version}",
                   "--overwrite")
    server.kubectl("set", "image", "-n", ns, what, f"c=busybox:{version}")
    server.kubectl("rollout", "status", "-n", ns, what, "--timeout=60s", timeout=90)


def images(server: Server, ns: str) -> set[str]:
    return {p["spec"]["containers"][0]["image"] for p in items(server, ns, "pods")
            if not p["metadata"].get("deletionTimestamp")}


def test_statefulset_history_rollout_undo_and_why(server: Server, ns: str) -> None:
    server.kubectl("apply", "-n", ns, "-f", "-", input=stateful_set(replicas=2))
    server.kubectl("rollout", "status", "-n", ns, "sts/web", "--timeout=60s", timeout=90)
    [first] = revisions(server, ns)
    sts = json.loads(server.kubectl("get", "sts/web", "-n", ns, "-o", "json").stdout)
    assert first["revision"] == 1
    assert first["metadata"]["ownerReferences"] == [{
        "apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web",
        "uid": sts["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]
    hash_ = first["metadata"]["labels"]["controller.kubernetes.io/hash"]
    assert first["metadata"]["name"] == f"web-{hash_}"
    assert first["data"]["spec"]["template"]["$patch"] == "replace"
    assert sts["status"]["currentRevision"] == sts["status"]["updateRevision"] == f"web-{hash_}"
    assert {p["metadata"]["labels"]["controller-revision-hash"]
            for p in items(server, ns, "pods")} == {f"web-{hash_}"}

    for version in range(2, 6):
        roll(server, ns, "sts/web", version)
    eventually(lambda: [r["revision"] for r in revisions(server, ns)] == [3, 4, 5],
               what="history trimmed to revisions 3, 4, 5")
    history = server.kubectl("rollout", "history", "-n", ns, "sts/web").stdout
    assert history.split("\n", 1)[1].split() == [
        "REVISION", "CHANGE-CAUSE", "3", "image", "3", "4", "image", "4", "5", "image", "5"]
    assert "busybox:4" in server.kubectl("rollout", "history", "-n", ns, "sts/web",
                                         "--revision=4").stdout

    report = server.kubegc_json("why", f"controllerrevision/{first['metadata']['name']}", "-n", ns)
    assert report["conclusion"].startswith(
        f"ControllerRevision/{first['metadata']['name']} was deleted by statefulset-controller")
    [entry] = report["entries"]
    assert (entry["deleter"], entry["reason"]) == ("statefulset-controller",
                                                   "RevisionHistoryLimit")
    assert "revisionHistoryLimit 2 of StatefulSet web" in entry["message"]

    server.kubectl("rollout", "undo", "-n", ns, "sts/web")
    server.kubectl("rollout", "status", "-n", ns, "sts/web", "--timeout=60s", timeout=90)
    eventually(lambda: images(server, ns) == {"busybox:4"}, what="rolled back to busybox:4")
    eventually(lambda: [(r["revision"], r["metadata"]["annotations"][
        "kubernetes.io/change-cause"]) for r in revisions(server, ns)] == [
        (3, "image 3"), (5, "image 5"), (6, "image 4")], what="revision 4 renumbered 6")


@pytest.mark.parametrize("cascade", ["background", "foreground", "orphan"])
@pytest.mark.parametrize("kind", ["sts/web", "ds/agent"])
def test_plan_of_a_set_delete_predicts_its_revisions(server: Server, ns: str, kind: str,
                                                     cascade: str) -> None:
    body = stateful_set() if kind.startswith("sts") else daemon_set()
    server.kubectl("apply", "-n", ns, "-f", "-", input=body)
    server.kubectl("rollout", "status", "-n", ns, kind, "--timeout=60s", timeout=90)
    roll(server, ns, kind, 2)
    eventually(lambda: len(revisions(server, ns)) == 2, what="two revisions")
    eventually(lambda: images(server, ns) == {"busybox:2"}, what="rolled to busybox:2")
    plan = server.kubegc_json("plan", "delete", kind, "-n", ns, f"--cascade={cascade}")
    assert plan["verdict"]["completes"], plan["verdict"]
    predicted = sorted((o["kind"], o["name"]) for o in plan["deleted"])
    owner = "StatefulSet" if kind.startswith("sts") else "DaemonSet"
    if cascade == "orphan":
        assert predicted == [(owner, kind.split("/")[1])]
    else:
        assert sorted(k for k, _ in predicted) == sorted([
            "ControllerRevision", "ControllerRevision", "Pod", owner])

    def remaining() -> set[tuple[str, str]]:
        return {(o["kind"], o["metadata"]["name"])
                for what in (kind.split("/")[0], "controllerrevisions", "pods")
                for o in items(server, ns, what)
                if not o["metadata"].get("deletionTimestamp") or what != "pods"}

    before = remaining()
    server.kubectl("delete", kind, "-n", ns, f"--cascade={cascade}", "--wait=false")
    eventually(lambda: remaining() == before - set(predicted), timeout=60,
               what=f"the live {cascade} delete does what the plan said")
    if cascade == "orphan":
        assert all(not r["metadata"].get("ownerReferences") for r in revisions(server, ns))


def daemon_set(limit: int = 1) -> str:
    return json.dumps({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent",
                     "annotations": {"kubernetes.io/change-cause": "image 1"}},
        "spec": {"revisionHistoryLimit": limit, "selector": {"matchLabels": {"app": "agent"}},
                 "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {
                     "containers": [{"name": "c", "image": "busybox:1"}]}}}})


def test_daemonset_history_rollout_undo_and_why(server: Server, ns: str) -> None:
    server.kubectl("apply", "-n", ns, "-f", "-", input=daemon_set())
    server.kubectl("rollout", "status", "-n", ns, "ds/agent", "--timeout=60s", timeout=90)
    [first] = revisions(server, ns)
    hash_ = first["metadata"]["labels"]["controller-revision-hash"]
    assert first["metadata"]["name"] == f"agent-{hash_}"
    assert first["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"
    eventually(lambda: {p["metadata"]["labels"]["controller-revision-hash"]
                        for p in items(server, ns, "pods")} == {hash_}, what="pods' hash")
    for version in (2, 3, 4):
        roll(server, ns, "ds/agent", version)
        eventually(lambda v=version: images(server, ns) == {f"busybox:{v}"},  # type: ignore[misc]
                   what=f"rolled to busybox:{version}")
    eventually(lambda: [r["revision"] for r in revisions(server, ns)] == [3, 4],
               what="history trimmed to revisions 3, 4")
    history = server.kubectl("rollout", "history", "-n", ns, "ds/agent").stdout
    assert history.split("\n", 1)[1].split() == [
        "REVISION", "CHANGE-CAUSE", "3", "image", "3", "4", "image", "4"]

    report = server.kubegc_json("why", f"controllerrevision/{first['metadata']['name']}", "-n", ns)
    assert report["conclusion"].startswith(
        f"ControllerRevision/{first['metadata']['name']} was deleted by daemonset-controller")
    [entry] = report["entries"]
    assert entry["reason"] == "RevisionHistoryLimit"
    assert "revisionHistoryLimit 1 of DaemonSet agent" in entry["message"]

    server.kubectl("rollout", "undo", "-n", ns, "ds/agent")
    eventually(lambda: images(server, ns) == {"busybox:3"}, what="rolled back to busybox:3")
    eventually(lambda: [r["revision"] for r in revisions(server, ns)] == [4, 5],
               what="revision 3 renumbered 5")
    [pod] = [p for p in items(server, ns, "pods") if not p["metadata"].get("deletionTimestamp")]
    assert pod["metadata"]["labels"]["controller-revision-hash"] == revisions(server, ns)[-1][
        "metadata"]["labels"]["controller-revision-hash"]


def test_deployment_past_its_history_limit_and_why(server: Server, ns: str) -> None:
    server.kubectl("create", "deployment", "roll", "-n", ns, "--image=busybox:1")
    server.kubectl("patch", "deployment/roll", "-n", ns, "-p",
                   '{"spec": {"revisionHistoryLimit": 1}}')
    server.kubectl("rollout", "status", "-n", ns, "deploy/roll", "--timeout=60s", timeout=90)
    [first] = items(server, ns, "replicasets")
    for version in (2, 3, 4):
        server.kubectl("set", "image", "-n", ns, "deploy/roll", f"busybox=busybox:{version}")
        server.kubectl("rollout", "status", "-n", ns, "deploy/roll", "--timeout=60s",
                       timeout=90)
    eventually(lambda: len(items(server, ns, "replicasets")) == 2,
               what="old ReplicaSets trimmed to revisionHistoryLimit 1")
    history = server.kubectl("rollout", "history", "-n", ns, "deploy/roll").stdout
    assert history.split("\n", 1)[1].split() == ["REVISION", "CHANGE-CAUSE", "3", "<none>",
                                                 "4", "<none>"]
    name = first["metadata"]["name"]
    report = server.kubegc_json("why", f"rs/{name}", "-n", ns)
    assert report["conclusion"].startswith(
        f"ReplicaSet/{name} was deleted by deployment-controller"), report["conclusion"]
    assert "deleted by a request" not in report["conclusion"]
    [entry] = [e for e in report["entries"] if e["source"] == "DeletionRecord"]
    assert (entry["deleter"], entry["reason"]) == ("deployment-controller",
                                                   "RevisionHistoryLimit")
    assert entry["message"].startswith(f"ReplicaSet {name} (revision 1) was beyond "
                                       "revisionHistoryLimit 1 of Deployment roll")


def test_a_statefulset_scaled_down_says_why_its_pod_went(server: Server, ns: str) -> None:
    server.kubectl("apply", "-n", ns, "-f", "-", input=stateful_set(replicas=2))
    server.kubectl("rollout", "status", "-n", ns, "sts/web", "--timeout=60s", timeout=90)
    server.kubectl("scale", "-n", ns, "sts/web", "--replicas=1")
    eventually(lambda: [p["metadata"]["name"] for p in items(server, ns, "pods")] == ["web-0"],
               what="web-1 gone")
    report = server.kubegc_json("why", "pod/web-1", "-n", ns)
    assert report["conclusion"].startswith("Pod/web-1 was deleted by statefulset-controller"), (
        report["conclusion"])
    [entry] = [e for e in report["entries"] if e["source"] == "DeletionRecord"]
    assert (entry["reason"], entry["message"]) == (
        "ScaleDown", "the ordinal of pod web-1 was outside [0, 1) (spec.replicas 1) of "
        "StatefulSet web: the highest ordinal goes first")
