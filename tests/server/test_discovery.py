"""Discovery documents as kubectl and the Python client read them (KEP-3352)."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api.resources import ResourceInfo, Subresource
from kubegc.registry import builtin_catalog
from kubegc.server.discovery import (
    aggregated_core,
    aggregated_groups,
    discovery_content_type,
    legacy_api_versions,
    legacy_group,
    legacy_group_list,
    legacy_resource_list,
    negotiate_discovery,
)

AGG = "application/json;g=apidiscovery.k8s.io;v={};as=APIGroupDiscoveryList"
KUBECTL_1_30_TO_1_33 = f"{AGG.format('v2')},{AGG.format('v2beta1')},application/json"
KUBECTL_1_27_TO_1_29 = f"{AGG.format('v2beta1')},application/json"
ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]

WIDGET = ResourceInfo(
    group="example.com", versions=("v1",), resource="widgets", kind="Widget", namespaced=True,
    short_names=("wd",), custom=True, subresources=(Subresource("status"),),
)


def widget_versions(*versions: str) -> ResourceInfo:
    return ResourceInfo(group="example.com", versions=versions, resource="widgets",
                        kind="Widget", namespaced=True, custom=True)


@pytest.mark.parametrize(("accept", "expected"), [
    pytest.param(KUBECTL_1_30_TO_1_33, "v2", id="kubectl-1.30-1.33"),
    pytest.param(KUBECTL_1_27_TO_1_29, "v2beta1", id="kubectl-1.27-1.29-never-v2"),
    pytest.param("application/json, */*", None, id="kubectl-legacy-fetch"),
    pytest.param("application/json", None, id="python-client"),
    pytest.param("", None, id="no-accept"),
    pytest.param(f"application/json,{AGG.format('v2')}", None, id="legacy-listed-first"),
    pytest.param(
        f"application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
        f"{AGG.format('v2beta1')},application/json", "v2beta1", id="protobuf-skipped"),
    pytest.param(f"{AGG.format('v3')},{AGG.format('v2')}", "v2", id="unknown-version-skipped"),
    pytest.param(
        "application/json; g=apidiscovery.k8s.io; v=v2beta1; as=APIGroupDiscoveryList",
        "v2beta1", id="spaces-around-params"),
    pytest.param(f"{AGG.format('v2')};q=0,application/json", None, id="q0-refused"),
    pytest.param(f"text/html,{AGG.format('v2')}", "v2", id="unservable-range-skipped"),
    pytest.param("application/json;as=Table;v=v1;g=meta.k8s.io,application/json", None,
                 id="table-accept-is-legacy"),
])
def test_negotiate_discovery_walks_accept_in_order(accept: str, expected: str | None) -> None:
    assert negotiate_discovery(accept) == expected


@pytest.mark.parametrize(("version", "content_type"), [
    ("v2", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"),
    ("v2beta1", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"),
])
def test_discovery_content_type_is_exact(version: Any, content_type: str) -> None:
    assert discovery_content_type(version) == content_type


def resources_of(document: dict[str, Any], group: str, version: str = "v1") -> dict[str, Any]:
    [item] = [i for i in document["items"] if i["metadata"]["name"] == group]
    [entry] = [v for v in item["versions"] if v["version"] == version]
    return {r["resource"]: r for r in entry["resources"]}


@pytest.mark.parametrize("version", ["v2", "v2beta1"])
def test_aggregated_core_lists_the_core_group_only(version: Any) -> None:
    document = aggregated_core(builtin_catalog(), version)
    assert document["kind"] == "APIGroupDiscoveryList"
    assert document["apiVersion"] == f"apidiscovery.k8s.io/{version}"
    [item] = document["items"]
    assert item["metadata"] == {"name": "", "creationTimestamp": None}
    assert [(v["version"], v["freshness"]) for v in item["versions"]] == [("v1", "Current")]
    names = set(resources_of(document, ""))
    assert {"pods", "namespaces", "events", "services", "replicationcontrollers"} <= names
    assert "deployments" not in names


def test_aggregated_pod_entry_matches_what_kubectl_accepted() -> None:
    """Subresources in name order, as upstream's installer registers storage paths sorted."""
    pods = resources_of(aggregated_core(builtin_catalog()), "")["pods"]
    assert pods == {
        "resource": "pods",
        "responseKind": {"group": "", "version": "v1", "kind": "Pod"},
        "scope": "Namespaced",
        "singularResource": "pod",
        "verbs": ALL_VERBS,
        "shortNames": ["po"],
        "categories": ["all"],
        "subresources": [
            {"subresource": "binding",
             "responseKind": {"group": "", "version": "v1", "kind": "Binding"},
             "verbs": ["create"]},
            {"subresource": "eviction",
             "responseKind": {"group": "policy", "version": "v1", "kind": "Eviction"},
             "verbs": ["create"]},
            {"subresource": "log", "responseKind": {"group": "", "version": "v1", "kind": "Pod"},
             "verbs": ["get"]},
            {"subresource": "status", "responseKind": {"group": "", "version": "v1", "kind": "Pod"},
             "verbs": ["get", "patch", "update"]},
        ],
    }


def test_aggregated_deployment_scale_answers_autoscaling_scale() -> None:
    deployments = resources_of(aggregated_groups(builtin_catalog()), "apps")["deployments"]
    scale = {s["subresource"]: s for s in deployments["subresources"]}["scale"]
    assert scale["responseKind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    assert deployments["shortNames"] == ["deploy"]
    assert deployments["categories"] == ["all"]


def test_every_aggregated_resource_has_the_fields_kubectl_needs() -> None:
    catalog = builtin_catalog()
    for document in (aggregated_core(catalog), aggregated_groups(catalog)):
        for item in document["items"]:
            for version in item["versions"]:
                for resource in version["resources"]:
                    assert {"resource", "responseKind", "scope", "singularResource",
                            "verbs"} <= set(resource), resource
                    assert resource["scope"] in ("Namespaced", "Cluster")
                    for sub in resource.get("subresources", []):
                        assert {"subresource", "responseKind", "verbs"} <= set(sub)


def test_cluster_scoped_and_categories() -> None:
    core = resources_of(aggregated_core(builtin_catalog()), "")
    assert core["namespaces"]["scope"] == "Cluster"
    assert core["nodes"]["scope"] == "Cluster"
    assert "categories" not in core["configmaps"]  # kubectl get all must not list them


def test_events_group_is_under_apis_not_core() -> None:
    catalog = builtin_catalog()
    groups = [i["metadata"]["name"] for i in aggregated_groups(catalog)["items"]]
    assert "" not in groups
    assert {"apps", "batch", "events.k8s.io", "coordination.k8s.io",
            "apiextensions.k8s.io"} <= set(groups)
    assert resources_of(aggregated_groups(catalog), "events.k8s.io")["events"][
        "responseKind"] == {"group": "events.k8s.io", "version": "v1", "kind": "Event"}


def test_custom_resources_appear_and_disappear_with_the_catalog() -> None:
    catalog = builtin_catalog()
    catalog.add(WIDGET)
    widgets = resources_of(aggregated_groups(catalog), "example.com")["widgets"]
    assert widgets["responseKind"] == {"group": "example.com", "version": "v1", "kind": "Widget"}
    assert widgets["shortNames"] == ["wd"]
    assert legacy_group(catalog, "example.com") is not None
    catalog.remove("example.com", "widgets")
    groups = [i["metadata"]["name"] for i in aggregated_groups(catalog)["items"]]
    assert "example.com" not in groups
    assert legacy_group(catalog, "example.com") is None
    assert legacy_resource_list(catalog, "example.com", "v1") is None


def test_versions_are_listed_newest_first() -> None:
    catalog = builtin_catalog()
    catalog.add(widget_versions("v1beta1", "v1", "v1alpha1"))
    [item] = [i for i in aggregated_groups(catalog)["items"]
              if i["metadata"]["name"] == "example.com"]
    assert [v["version"] for v in item["versions"]] == ["v1", "v1beta1", "v1alpha1"]
    group = legacy_group(catalog, "example.com")
    assert group is not None
    assert group["preferredVersion"] == {"groupVersion": "example.com/v1", "version": "v1"}
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1", "v1alpha1"]


def test_legacy_api_versions() -> None:
    assert legacy_api_versions("127.0.0.1:6443") == {
        "kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                        "serverAddress": "127.0.0.1:6443"}],
    }


def test_legacy_group_list_has_preferred_versions_and_no_core() -> None:
    document = legacy_group_list(builtin_catalog())
    assert (document["kind"], document["apiVersion"]) == ("APIGroupList", "v1")
    apps = {g["name"]: g for g in document["groups"]}["apps"]
    assert apps == {"name": "apps", "versions": [{"groupVersion": "apps/v1", "version": "v1"}],
                    "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}}
    assert "" not in {g["name"] for g in document["groups"]}


@pytest.mark.parametrize("group", ["", "nope.example.com"])
def test_legacy_group_unknown_is_none(group: str) -> None:
    assert legacy_group(builtin_catalog(), group) is None


def legacy_entries(group: str, version: str) -> dict[str, dict[str, Any]]:
    document = legacy_resource_list(builtin_catalog(), group, version)
    assert document is not None
    assert document["kind"] == "APIResourceList"
    return {r["name"]: r for r in document["resources"]}


@pytest.mark.parametrize(("group", "name", "expected"), [
    pytest.param("", "pods/status", {"name": "pods/status", "singularName": "",
                                     "namespaced": True, "kind": "Pod",
                                     "verbs": ["get", "patch", "update"]}, id="pods-status"),
    pytest.param("", "pods/log", {"name": "pods/log", "singularName": "", "namespaced": True,
                                  "kind": "Pod", "verbs": ["get"]}, id="pods-log"),
    pytest.param("", "namespaces/finalize", {"name": "namespaces/finalize", "singularName": "",
                                             "namespaced": False, "kind": "Namespace",
                                             "verbs": ["update"]}, id="namespaces-finalize"),
    pytest.param("apps", "deployments/scale", {
        "name": "deployments/scale", "singularName": "", "namespaced": True,
        "group": "autoscaling", "version": "v1", "kind": "Scale",
        "verbs": ["get", "patch", "update"]}, id="deployments-scale"),
    pytest.param("", "replicationcontrollers/scale", {
        "name": "replicationcontrollers/scale", "singularName": "", "namespaced": True,
        "group": "autoscaling", "version": "v1", "kind": "Scale",
        "verbs": ["get", "patch", "update"]}, id="rc-scale"),
])
def test_legacy_subresource_entries(group: str, name: str, expected: dict[str, Any]) -> None:
    assert legacy_entries(group, "v1")[name] == expected


def test_legacy_resource_entry_with_upstream_storage_version_hash() -> None:
    entries = legacy_entries("apps", "v1")
    assert entries["deployments"] == {
        "name": "deployments", "singularName": "deployment", "namespaced": True,
        "kind": "Deployment", "verbs": ALL_VERBS, "shortNames": ["deploy"],
        "categories": ["all"], "storageVersionHash": "8aSe+NMegvE=",
    }
    assert legacy_entries("", "v1")["pods"]["storageVersionHash"] == "xPOwRZ+Yhw8="


def test_legacy_resource_list_group_version_and_unknown() -> None:
    catalog = builtin_catalog()
    core = legacy_resource_list(catalog, "", "v1")
    apps = legacy_resource_list(catalog, "apps", "v1")
    assert core is not None and apps is not None
    assert (core["groupVersion"], apps["groupVersion"]) == ("v1", "apps/v1")
    assert "deployments" not in {r["name"] for r in core["resources"]}
    assert legacy_resource_list(catalog, "apps", "v1beta1") is None
    assert legacy_resource_list(catalog, "nope", "v1") is None
