"""The ClusterRole aggregation controller against ``FakeClient`` (cf. upstream's
clusterroleaggregation_controller_test.go): an aggregated role gets the rules of the roles
its selectors select, in name order, each once, never its own; and follows their changes."""

from __future__ import annotations

from typing import Any

from kubegc.client.fake import FakeClient
from kubegc.controllers.clusterroleaggregation import (
    CLUSTERROLES,
    ClusterRoleAggregationController,
)

from ..workload_harness import eventually, quiet, running

AGGREGATE = "rbac.authorization.k8s.io/aggregate-to-edit"


def rule(verb: str, resource: str) -> dict[str, Any]:
    return {"verbs": [verb], "apiGroups": [""], "resources": [resource]}


def cluster_role(name: str, *rules: dict[str, Any], labels: dict[str, str] | None = None,
                 aggregate: bool = False) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                           "metadata": {"name": name, "labels": labels or {}},
                           "rules": list(rules)}
    if aggregate:
        obj["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {AGGREGATE: "true"}}]}
    return obj


def rules_of(client: FakeClient, name: str) -> list[dict[str, Any]]:
    for role in client.objects(CLUSTERROLES):
        if role["metadata"]["name"] == name:
            return list(role.get("rules") or [])
    raise AssertionError(f"no clusterrole {name}")


async def test_an_aggregated_role_holds_the_selected_roles_rules() -> None:
    client = FakeClient()
    selected = {AGGREGATE: "true"}
    client.add_object(CLUSTERROLES, cluster_role("edit", rule("own", "x"), labels=selected,
                                                 aggregate=True))
    client.add_object(CLUSTERROLES, cluster_role("b", rule("get", "pods"), rule("list", "pods"),
                                                 labels=selected))
    client.add_object(CLUSTERROLES, cluster_role("a", rule("get", "pods"), rule("get", "cm"),
                                                 labels=selected))
    client.add_object(CLUSTERROLES, cluster_role("unlabelled", rule("delete", "pods")))
    async with running(ClusterRoleAggregationController, client) as controller:
        # a before b, each rule once, not edit's own
        await eventually(lambda: rules_of(client, "edit") == [
            rule("get", "pods"), rule("get", "cm"), rule("list", "pods")])
        client.update_object(CLUSTERROLES, cluster_role("unlabelled", rule("delete", "pods"),
                                                        labels=selected))
        await eventually(lambda: rule("delete", "pods") in rules_of(client, "edit"))
        client.remove_object(CLUSTERROLES, "a")
        await eventually(lambda: rules_of(client, "edit") == [
            rule("get", "pods"), rule("list", "pods"), rule("delete", "pods")])
        await quiet(controller)
        writes = [a for a in client.actions if a.startswith("update")]
        await quiet(controller)
        assert [a for a in client.actions if a.startswith("update")] == writes  # settled
