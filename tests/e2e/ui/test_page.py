"""The owner-graph page of a real ``kubegc serve``, in headless Chromium, against what the
real kubectl and ``kubegc plan`` say about the same cluster."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
import yaml

from ..conftest import Server, eventually
from .conftest import (
    details,
    find,
    login_url,
    new_page,
    node_classes,
    open_page,
    summary,
    wait_for,
    wait_text,
    whatif_sections,
)

pytestmark = pytest.mark.kubectl

HOLD = "example.com/hold"
NOT_OBJECTS = {"events", "events.events.k8s.io", "deletionrecords.kubegc.io"}
#: what every namespace holds from the start: its ``default`` ServiceAccount and the
#: ``kube-root-ca.crt`` ConfigMap (the serviceaccount and root CA publisher controllers)
EVERY_NAMESPACE = 2


def cluster_objects(server: Server, namespace: str = "") -> list[dict[str, Any]]:
    """Every object kubectl lists (what the page counts: all but Events and kubegc's
    DeletionRecords, of the resources that can be watched — not the computed, read-only
    componentstatuses), in ``namespace`` or the whole cluster."""
    scope = ["--namespaced=true"] if namespace else []
    names = [n for n in server.kubectl("api-resources", "--verbs=list,watch", "-o", "name",
                                       *scope).stdout.split() if n not in NOT_OBJECTS]
    where = ["-n", namespace] if namespace else ["-A"]
    listed = json.loads(server.kubectl("get", ",".join(names), *where, "-o", "json").stdout)
    items: list[dict[str, Any]] = listed["items"]
    return items


def counts(items: list[dict[str, Any]]) -> tuple[int, int]:
    return len(items), sum(1 for i in items if i["metadata"].get("deletionTimestamp"))


def apply(server: Server, *objects: dict[str, Any]) -> None:
    server.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(objects))


def configmap(name: str, namespace: str, *owners: dict[str, Any],
              finalizers: tuple[str, ...] = ()) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if owners:
        meta["ownerReferences"] = list(owners)
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def uid(server: Server, kind: str, name: str, namespace: str) -> str:
    return server.kubectl("get", kind, name, "-n", namespace, "-o",
                          "jsonpath={.metadata.uid}").stdout


def ref(server: Server, name: str, namespace: str, *, block: bool = True) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "name": name,
            "uid": uid(server, "configmap", name, namespace), "blockOwnerDeletion": block}


def release(server: Server, namespace: str, *targets: str) -> None:
    for target in targets:
        server.kubectl("patch", target, "-n", namespace, "--type=merge", "-p",
                       '{"metadata":{"finalizers":null}}', check=False)


def held_deployment(server: Server, ns: str, replicas: int = 3) -> list[str]:
    """Deployment ``shop`` whose pods carry a finalizer nobody removes; its pods' names."""
    apply(server, {"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"name": "shop", "namespace": ns},
                   "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "shop"}},
                            "template": {"metadata": {"labels": {"app": "shop"},
                                                      "finalizers": [HOLD]},
                                         "spec": {"containers": [{"name": "c",
                                                                  "image": "nginx"}]}}}})
    return eventually(lambda: (lambda names: names if len(names) == replicas else None)(
        server.kubectl("get", "pods", "-n", ns, "-l", "app=shop", "-o", "name").stdout.split()))


def test_summary_counts_what_kubectl_lists(server: Server, ns: str, browser: Any) -> None:
    server.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=3", "-n", ns)
    server.kubectl("create", "configmap", "settings", "-n", ns)
    server.kubectl("create", "service", "clusterip", "web", "--tcp=80:80", "-n", ns)
    apply(server, configmap("held", ns, finalizers=(HOLD,)))
    server.kubectl("delete", "configmap", "held", "-n", ns, "--wait=false")
    page = new_page(browser)
    try:
        open_page(page, login_url(server), ns)
        eventually(lambda: summary(page) == counts(cluster_objects(server, ns)))
        assert summary(page)[1] == 1  # the held ConfigMap, Terminating
        assert f"in namespace {ns}" in page.inner_text("#summary")
        open_page(page, login_url(server))  # no ?namespace: the whole cluster
        eventually(lambda: summary(page) == counts(cluster_objects(server)), timeout=60)
        assert "in the whole cluster" in page.inner_text("#summary")
        page.select_option("#namespace", ns)  # chosen in the page: the URL follows
        eventually(lambda: summary(page) == counts(cluster_objects(server, ns)))
        assert page.url.endswith(f"?namespace={ns}")
        assert page.js_errors == []
    finally:
        release(server, ns, "configmap/held")
        page.context.close()


def test_blocking_chain_of_a_held_foreground_deletion(server: Server, ns: str,
                                                      browser: Any) -> None:
    pods = held_deployment(server, ns)
    page = new_page(browser)
    try:
        open_page(page, login_url(server), ns)
        eventually(lambda: summary(page) == (5 + EVERY_NAMESPACE, 0))
        server.kubectl("delete", "deployment", "shop", "-n", ns, "--cascade=foreground",
                       "--wait=false")
        eventually(lambda: summary(page) == (5 + EVERY_NAMESPACE, 5))
        find(page, "deployment/shop")
        rs = server.kubectl("get", "rs", "-n", ns, "-l", "app=shop", "-o", "name").stdout
        rs_name = rs.strip().split("/")[1]
        text = details(page, until="Blocking chain")
        assert "Terminating since" in text and "finalizers left: foregroundDeletion" in text
        for pod in pods:
            chain = f"Deployment/shop ← ReplicaSet/{rs_name} ← Pod/{pod.split('/')[1]}"
            assert chain in text, text
        assert f"its own finalizer {HOLD} is still there" in text
        # drawn: the chain in red down to the leaves that hold it
        rs_uid = uid(server, "rs", rs_name, ns)
        eventually(lambda: "chain" in node_classes(page, rs_uid))
        for pod in pods:
            pod_uid = uid(server, "pod", pod.split("/")[1], ns)
            assert "leaf" in node_classes(page, pod_uid)
            label = page.evaluate("(id) => window.kubegcUI.cy.getElementById(id).data('label')",
                                  pod_uid)
            assert label.endswith(f"Terminating\nheld by {HOLD}")
        assert page.js_errors == []
    finally:
        release(server, ns, *pods)
        page.context.close()


def test_a_foreground_cascade_is_seen_to_finish(server: Server, ns: str, browser: Any) -> None:
    pods = held_deployment(server, ns)
    page = new_page(browser)
    try:
        open_page(page, login_url(server), ns)
        eventually(lambda: summary(page) == (5 + EVERY_NAMESPACE, 0))
        page.evaluate("""() => { window.seen = [];
            new MutationObserver(() => window.seen.push(
                document.querySelector('#summary').textContent))
              .observe(document.querySelector('#summary'),
                       {childList: true, characterData: true, subtree: true}); }""")
        find(page, "deployment/shop")
        server.kubectl("delete", "deployment", "shop", "-n", ns, "--cascade=foreground",
                       "--wait=false")
        wait_text(page, "#details", lambda t: "Terminating since" in t)
        release(server, ns, *pods)  # the pods go, then the ReplicaSet, then the Deployment
        eventually(lambda: summary(page) == (EVERY_NAMESPACE, 0))
        wait_text(page, "#details", lambda t: "deleted: it is gone" in t)
        seen: list[str] = page.evaluate("() => window.seen")
        first_zero = next(i for i, s in enumerate(seen)
                          if s.startswith(f"{EVERY_NAMESPACE} objects"))
        assert any(" 5 deleting" in s for s in seen[:first_zero]), seen
        log = page.inner_text("#activity").splitlines()[::-1]  # oldest first
        terminating = next(i for i, line in enumerate(log)
                           if "Deployment/shop Terminating" in line)
        deleted = next(i for i, line in enumerate(log) if "Deployment/shop deleted" in line)
        assert terminating < deleted
        assert page.js_errors == []
    finally:
        release(server, ns, *pods)
        page.context.close()


def plan_sections(server: Server, ns: str, target: str, policy: str) -> dict[str, set[str]]:
    """What ``kubegc plan delete`` names under deleted / orphaned / survives / hangs."""
    done = subprocess.run([sys.executable, "-m", "kubegc.cli", "plan", "delete", target, "-n",
                           ns, "--cascade", policy.lower(), "-o", "json", "--kubeconfig",
                           str(server.kubeconfig)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)

    def short(items: list[dict[str, Any]]) -> set[str]:
        return {f"{o['kind']}/{o['name']}" for o in items}

    survivors = plan["survivors"]
    return {"deleted": short(plan["deleted"]),
            "orphaned": short([s["object"] for s in survivors if not s["keptBy"]]),
            "survives": short([s["object"] for s in survivors if s["keptBy"]]),
            "hangs": short([h["object"] for h in plan["hanging"]])}


@pytest.mark.parametrize("policy", ["Background", "Foreground", "Orphan"])
def test_what_if_marks_what_kubegc_plan_names(server: Server, ns: str, browser: Any,
                                              policy: str) -> None:
    apply(server, configmap("root", ns), configmap("other", ns))
    apply(server, configmap("a", ns, ref(server, "root", ns)),
          configmap("b", ns, ref(server, "root", ns), ref(server, "other", ns)),
          configmap("c", ns, ref(server, "root", ns), finalizers=(HOLD,)))
    expected = plan_sections(server, ns, "configmap/root", policy)
    assert expected["deleted"] or expected["orphaned"]  # the scenario means something
    page = new_page(browser)
    try:
        open_page(page, login_url(server), ns)
        find(page, "configmap/root")
        page.select_option("#whatif-policy", policy)
        page.click("#whatif")
        text = wait_text(page, "#whatif-result", lambda t: "hangs (" in t, timeout=120)
        assert f"propagationPolicy {policy}" in text
        assert whatif_sections(text) == expected
        for name, mark in (("a", "wi-deleted" if expected["deleted"] >= {"ConfigMap/a"}
                            else "wi-orphaned"), ("b", "wi-survives")):
            eventually(lambda n=name, m=mark: m in node_classes(page, uid(
                server, "configmap", n, ns)))
        assert page.js_errors == []
    finally:
        release(server, ns, "configmap/c")
        page.context.close()


def test_owners_edges_and_bad_references_are_drawn(server: Server, ns: str,
                                                    browser: Any) -> None:
    apply(server, configmap("p1", ns), configmap("p2", ns))
    widget = {"apiVersion": "nowhere.kubegc.test/v1", "kind": "Gizmo", "name": "w",
              "uid": "00000000-0000-0000-0000-00000000beef"}
    gone = {"apiVersion": "v1", "kind": "ConfigMap", "name": "gone",
            "uid": "00000000-0000-0000-0000-00000000dead"}
    apply(server, configmap("both", ns, ref(server, "p1", ns), ref(server, "p2", ns)),
          configmap("odd", ns, widget), configmap("orphan", ns, gone, finalizers=(HOLD,)))
    page = new_page(browser)
    try:
        open_page(page, login_url(server), ns)
        both = uid(server, "configmap", "both", ns)
        for owner in ("p1", "p2"):  # several owners: several edges
            edge = f"{uid(server, 'configmap', owner, ns)}->{both}"
            eventually(lambda e=edge: page.evaluate(
                "(id) => !window.kubegcUI.cy.getElementById(id).empty()", e))
        odd = uid(server, "configmap", "odd", ns)
        eventually(lambda: "invalid" in node_classes(page, f"missing:{widget['uid']}"))
        assert "invalid" in node_classes(page, f"missing:{widget['uid']}->{odd}")
        orphan = uid(server, "configmap", "orphan", ns)
        eventually(lambda: "dangling" in node_classes(page, f"missing:{gone['uid']}->{orphan}"))
        assert page.js_errors == []
    finally:
        release(server, ns, "configmap/orphan")
        page.context.close()


def group_of(page: Any, deployment: str) -> str:
    """The id of the group node folding ``deployment``'s ReplicaSet's 12 pods."""
    found: str = wait_for(page, """const g = window.kubegcUI.cy.nodes('.group').filter((n) =>
            n.data('label').startsWith('12 Pods') &&
            n.incomers('node').some((o) => o.data('label').includes('\\n' + arg + '-')));
        return g.length === 1 && g[0].id();""", deployment)
    return found


def test_keyboard_and_counted_groups(server: Server, ns: str, browser: Any) -> None:
    for name in ("web", "api"):
        server.kubectl("create", "deployment", name, "--image=nginx", "--replicas=12", "-n", ns)
    eventually(lambda: len(server.kubectl("get", "pods", "-n", ns, "-o", "name")
                           .stdout.split()) == 24)
    page = new_page(browser)
    try:
        open_page(page, login_url(server), ns)
        eventually(lambda: summary(page) == (28 + EVERY_NAMESPACE, 0))
        api = group_of(page, "api")
        # a click on a group shows its members
        box = page.locator("#graph").bounding_box()
        wait_for(page, "return !window.kubegcUI.cy.animated()")
        at = page.evaluate("(id) => window.kubegcUI.cy.getElementById(id).renderedPosition()",
                           api)
        page.mouse.click(box["x"] + at["x"], box["y"] + at["y"])
        wait_for(page, "return window.kubegcUI.cy.getElementById(arg).empty() && "
                       f"window.kubegcUI.cy.nodes('.obj').length === {16 + EVERY_NAMESPACE}",
                 api)
        group = group_of(page, "web")
        find(page, "deployment/web")
        page.focus("#graph")
        page.keyboard.press("ArrowDown")  # its dependent: the ReplicaSet
        wait_text(page, "#details", lambda t: t.startswith("ReplicaSet/web-"))
        page.keyboard.press("ArrowDown")  # the ReplicaSet's pods, folded into a group
        wait_text(page, "#details", lambda t: "a group of 12 objects" in t)
        page.keyboard.press("Enter")  # expands it
        wait_for(page, f"return window.kubegcUI.cy.nodes('.obj').length === "
                       f"{28 + EVERY_NAMESPACE} && "
                       "window.kubegcUI.cy.getElementById(arg).empty()", group)
        page.keyboard.press("/")
        assert page.evaluate("() => document.activeElement.id") == "search"
        # a pod in the middle of its group (laid out by name, in either direction), so it
        # has a sibling on its right
        pods = server.kubectl("get", "pods", "-n", ns, "-l", "app=web", "-o",
                              "name").stdout.split()
        pod = pods[len(pods) // 2]
        find(page, f"pod/{pod.split('/')[1]}")
        page.focus("#graph")
        page.keyboard.press("ArrowRight")  # a sibling: another pod
        wait_text(page, "#details", lambda t: t.startswith("Pod/") and pod.split("/")[1]
                  not in t.splitlines()[0])
        page.keyboard.press("ArrowUp")  # its owner
        wait_text(page, "#details", lambda t: t.startswith("ReplicaSet/web-"))
        assert page.js_errors == []
    finally:
        page.context.close()
