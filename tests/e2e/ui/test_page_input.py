"""``kubegc ui --from`` a dump of a real ``kubegc serve`` edited by hand, in headless
Chromium: the page draws the rest, says what is malformed, and its search in a namespace
finds a cluster-scoped object; a finalizer's remover is "running", "not running" or "not
known to be running"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ..conftest import Server, eventually
from .conftest import find, new_page, open_page, summary, wait_text
from .test_login import UI
from .test_page import EVERY_NAMESPACE, cluster_objects

pytestmark = pytest.mark.kubectl


def test_a_hand_edited_dump_draws_and_says_what_is_wrong(server: Server, ns: str,
                                                         browser: Any, tmp_path: Path) -> None:
    server.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=1", "-n", ns)
    server.kubectl("create", "configmap", "held", "-n", ns)
    server.kubectl("patch", "configmap", "held", "-n", ns, "--type=merge", "-p",
                   '{"metadata":{"finalizers":["example.com/hold"]}}')
    server.kubectl("delete", "configmap", "held", "-n", ns, "--wait=false")
    eventually(lambda: len(cluster_objects(server, ns)) == 4 + EVERY_NAMESPACE)
    listed = json.loads(server.kubectl(
        "get", "deployments,replicasets,pods,namespaces,nodes,configmaps", "-A", "-o",
        "json").stdout)
    server.kubectl("patch", "configmap", "held", "-n", ns, "--type=merge", "-p",
                   '{"metadata":{"finalizers":null}}')
    (pod,) = [i for i in listed["items"]
              if i["kind"] == "Pod" and i["metadata"].get("namespace") == ns]
    pod["metadata"]["ownerReferences"] = pod["metadata"]["ownerReferences"][0]  # an object
    nodes = [i["metadata"]["name"] for i in listed["items"] if i["kind"] == "Node"]
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(listed))
    expected = sum(1 for i in listed["items"] if i["metadata"].get("namespace") == ns)
    deleting = sum(1 for i in listed["items"] if i["metadata"].get("namespace") == ns
                   and i["metadata"].get("deletionTimestamp"))
    ui = UI("--from", str(dump))
    page = new_page(browser)
    try:
        open_page(page, ui.url, ns)
        eventually(lambda: summary(page) == (expected, deleting))  # the pod is drawn too
        wait_text(page, "#malformed", lambda t: t.startswith("malformed input: 1 field"))
        assert (f"Pod/{pod['metadata']['name']}: metadata.ownerReferences is an object, not "
                "a list: ignored") in page.get_attribute("#malformed", "title")
        # a cluster-scoped object, found from the namespace's page: drawn, not counted
        find(page, f"node/{nodes[0]}")
        wait_text(page, "#details", lambda t: f"Node/{nodes[0]}" in t)
        assert summary(page) == (expected, deleting)
        # who removes a finalizer, in words (never "alive: alive")
        find(page, "configmap/held")
        wait_text(page, "#details", lambda t: "removed by" in t and "Descendants" in t)
        page.evaluate("document.querySelectorAll('#details details')"
                      ".forEach((d) => { d.open = true; })")  # the evidence, unfolded
        text = wait_text(page, "#details", lambda t: "not known to be running" in t)
        assert "example.com/hold: removed by an unknown controller (not known to be running)" \
            in text and "alive:" not in text
        assert page.js_errors == []
    finally:
        page.context.close()
        ui.stop()
