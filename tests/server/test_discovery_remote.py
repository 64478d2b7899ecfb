"""Discovery of the groups of remote APIServices (kube-aggregator's): listed whether
available or not, ``Stale`` with no resources in the aggregated form while unavailable."""

from __future__ import annotations

from typing import Any

from kubegc.registry import builtin_catalog
from kubegc.registry.groups.apiregistration.aggregation import Aggregation, RemoteGroupVersion
from kubegc.server.discovery import aggregated_groups, legacy_group, legacy_group_list

RESOURCES = [{"name": "podmetrics", "singularName": "", "namespaced": True,
              "kind": "PodMetrics", "verbs": ["get", "list"]},
             {"name": "podmetrics/status", "namespaced": True, "kind": "PodMetrics",
              "verbs": ["get"]}]


def _aggregation(available: bool) -> Aggregation:
    aggregation = Aggregation()
    aggregation.remote[("metrics.example.io", "v1beta1")] = RemoteGroupVersion(
        "v1beta1.metrics.example.io", "metrics.example.io", "v1beta1", 100, 100,
        available=available, resources=RESOURCES if available else [])
    return aggregation


def _remote_versions(available: bool) -> list[dict[str, Any]]:
    doc = aggregated_groups(builtin_catalog(), "v2", _aggregation(available))
    (item,) = [i for i in doc["items"] if i["metadata"]["name"] == "metrics.example.io"]
    versions: list[dict[str, Any]] = item["versions"]
    return versions


def test_available_group_is_current_with_the_backend_resources() -> None:
    (version,) = _remote_versions(True)
    assert version["freshness"] == "Current"
    assert version["resources"] == [{
        "resource": "podmetrics", "singularResource": "", "scope": "Namespaced",
        "verbs": ["get", "list"],
        "responseKind": {"group": "metrics.example.io", "version": "v1beta1",
                         "kind": "PodMetrics"}}]


def test_unavailable_group_is_stale_and_still_listed() -> None:
    (version,) = _remote_versions(False)
    assert (version["freshness"], version["resources"]) == ("Stale", [])
    groups = legacy_group_list(builtin_catalog(), _aggregation(False))["groups"]
    assert "metrics.example.io" in [g["name"] for g in groups]
    assert legacy_group(builtin_catalog(), "metrics.example.io", _aggregation(False)) == {
        "kind": "APIGroup", "apiVersion": "v1", "name": "metrics.example.io",
        "versions": [{"groupVersion": "metrics.example.io/v1beta1", "version": "v1beta1"}],
        "preferredVersion": {"groupVersion": "metrics.example.io/v1beta1",
                             "version": "v1beta1"}}
