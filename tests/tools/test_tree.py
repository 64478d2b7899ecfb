"""kubegc tree: dependents and owners, with state and edge flags."""

from __future__ import annotations

from typing import Any

from kubegc.api.resources import GroupVersionResource
from kubegc.testing import Cluster
from kubegc.tools.ownership import RefState
from kubegc.tools.tree import TreeNode, build_tree

from .conftest import inventory_of
from .lab import kubegc, kubegc_json


def names(node: TreeNode) -> list[str]:
    return [n.object.name for n in node.walk()]


def obj(kind: str, name: str, *refs: dict[str, Any], ns: str = "a", **meta: Any
        ) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": kind,
            "metadata": {"name": name, "namespace": ns, "uid": name,
                         "ownerReferences": list(refs), **meta}}


def ref(name: str, kind: str = "ConfigMap", **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": kind, "name": name, "uid": name, **extra}


async def test_dependents_with_edges_and_shared_child() -> None:
    inv = await inventory_of([
        obj("ConfigMap", "root"), obj("ConfigMap", "other"),
        obj("Secret", "a", ref("root", controller=True, blockOwnerDeletion=True)),
        obj("Secret", "b", ref("root"), ref("other")),
        obj("ConfigMap", "c", ref("a", "Secret"), deletionTimestamp="2026-01-01T00:09:00Z",
            finalizers=["x.io/f"]),
    ])
    tree = build_tree(inv, inv.find("", "ConfigMap", "a", "root") or {}).root
    assert names(tree) == ["root", "a", "c", "b"]
    a, b = tree.children
    assert a.edge is not None and a.edge.controller and a.edge.block_owner_deletion
    assert b.edge is not None and not b.edge.block_owner_deletion
    (c,) = a.children
    assert c.state is not None and c.state.status == "Terminating"
    assert c.state.finalizers == ("x.io/f",)


async def test_owners_show_missing_and_recreated_owners() -> None:
    inv = await inventory_of([
        obj("ConfigMap", "live"),
        obj("Secret", "child", ref("live"), ref("gone"), {**ref("live"), "uid": "old"}),
    ])
    tree = build_tree(inv, inv.find("", "Secret", "a", "child") or {}, owners=True).root
    states = [(n.object.name, n.edge.ref_state if n.edge else None, n.state is None)
              for n in tree.children]
    assert states == [("live", RefState.OK, False), ("gone", RefState.ABSENT, True),
                      ("live", RefState.UID_MISMATCH, True)]


def test_tree_on_a_live_kubegc() -> None:
    deployments = GroupVersionResource("apps", "v1", "deployments")
    with Cluster() as cluster:
        cluster.run(cluster.client.create(deployments, {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "c", "image": "x"}]}}}},
            namespace="default"))
        cluster.settle()
        report = kubegc_json("tree", "deploy/web", "--kubeconfig", str(cluster.kubeconfig))
        code, text, _ = kubegc("tree", "deployment.apps/web", "--kubeconfig",
                               str(cluster.kubeconfig))
    root = report["root"]
    (rs,) = root["children"]
    assert rs["object"]["kind"] == "ReplicaSet" and rs["edge"]["controller"]
    assert [p["object"]["kind"] for p in rs["children"]] == ["Pod", "Pod"]
    assert root["state"]["ready"] == "2/2"
    assert code == 0 and "└─ReplicaSet/web-" in text and "  ├─Pod/web-" in text


def test_unknown_object_and_kind() -> None:
    with Cluster(controllers=()) as cluster:
        kc = str(cluster.kubeconfig)
        code, _, err = kubegc("tree", "configmap/nope", "--kubeconfig", kc)
        assert code == 1 and 'configmaps "nope" not found' in err
        code, _, err = kubegc("tree", "gizmo/x", "--kubeconfig", kc)
        assert code == 1 and 'the server doesn\'t have a resource type "gizmo"' in err
