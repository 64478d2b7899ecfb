"""``kubegc ui --from`` a dump of a real ``kubegc serve`` edited by hand, in headless
Chromium: the page draws the rest, says what is malformed, and its search in a namespace
finds a cluster-scoped object."""

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
    eventually(lambda: len(cluster_objects(server, ns)) == 3 + EVERY_NAMESPACE)
    listed = json.loads(server.kubectl("get", "deployments,replicasets,pods,namespaces,nodes",
                                       "-A", "-o", "json").stdout)
    (pod,) = [i for i in listed["items"]
              if i["kind"] == "Pod" and i["metadata"].get("namespace") == ns]
    pod["metadata"]["ownerReferences"] = pod["metadata"]["ownerReferences"][0]  # an object
    nodes = [i["metadata"]["name"] for i in listed["items"] if i["kind"] == "Node"]
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(listed))
    expected = sum(1 for i in listed["items"] if i["metadata"].get("namespace") == ns)
    ui = UI("--from", str(dump))
    page = new_page(browser)
    try:
        open_page(page, ui.url, ns)
        eventually(lambda: summary(page) == (expected, 0))  # the pod is drawn too
        wait_text(page, "#malformed", lambda t: t.startswith("malformed input: 1 field"))
        assert (f"Pod/{pod['metadata']['name']}: metadata.ownerReferences is an object, not "
                "a list: ignored") in page.get_attribute("#malformed", "title")
        # a cluster-scoped object, found from the namespace's page: drawn, not counted
        find(page, f"node/{nodes[0]}")
        wait_text(page, "#details", lambda t: f"Node/{nodes[0]}" in t)
        assert summary(page) == (expected, 0)
        assert page.js_errors == []
    finally:
        page.context.close()
        ui.stop()
