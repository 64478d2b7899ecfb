"""Discovery for the GC: deletable resources and the RESTMapper (upstream
TestGetDeletableResources: events are never tracked; a kind the mapper cannot resolve is
never dangling)."""

from __future__ import annotations

import pytest

from kubegc.api.resources import GroupVersionKind, GroupVersionResource
from kubegc.client.interface import APIResource
from kubegc.controllers.garbagecollector import (
    RESTMapper,
    RESTMappingError,
    get_deletable_resources,
)

DLW = ("delete", "list", "watch")


def res(group: str, version: str, name: str, kind: str, verbs: tuple[str, ...] = DLW,
        *, namespaced: bool = True) -> APIResource:
    return APIResource(group, version, name, kind, namespaced, verbs=verbs)


@pytest.mark.parametrize(("discovered", "expected"), [
    pytest.param([res("apps", "v1", "pods", "Pod"), res("apps", "v1", "services", "Service", ())],
                 {GroupVersionResource("apps", "v1", "pods")}, id="needs-delete-list-watch"),
    pytest.param([res("acme", "v1", "widgets", "Widget", ("delete",))], set(),
                 id="missing-verbs-ignored"),
    pytest.param([res("", "v1", "pods", "Pod"), res("", "v1", "pods/status", "Pod")],
                 {GroupVersionResource("", "v1", "pods")}, id="subresources-ignored"),
    pytest.param([res("x.io", "v1beta1", "things", "Thing"), res("x.io", "v1", "things", "Thing"),
                  res("x.io", "v2alpha1", "things", "Thing")],
                 {GroupVersionResource("x.io", "v1", "things")}, id="preferred-version-wins"),
    pytest.param([res("x.io", "v1", "a", "A"), res("x.io", "v1beta1", "b", "B")],
                 {GroupVersionResource("x.io", "v1", "a"),
                  GroupVersionResource("x.io", "v1beta1", "b")},
                 id="resource-only-in-older-version-kept"),
    pytest.param([], set(), id="nothing-discovered"),
])
def test_get_deletable_resources(discovered: list[APIResource],
                                 expected: set[GroupVersionResource]) -> None:
    assert get_deletable_resources(discovered) == expected


def test_rest_mapper_maps_exact_versions_only() -> None:
    mapper = RESTMapper([res("apps", "v1", "deployments", "Deployment"),
                         res("", "v1", "nodes", "Node", namespaced=False)])

    mapping = mapper.rest_mapping("apps/v1", "Deployment")
    assert (mapping.resource, mapping.namespaced) == (
        GroupVersionResource("apps", "v1", "deployments"), True)
    assert not mapper.rest_mapping("v1", "Node").namespaced
    nodes = GroupVersionResource("", "v1", "nodes")
    assert mapper.kind_for(nodes) == GroupVersionKind("", "v1", "Node")
    unmappable = [("extensions/v1beta1", "Deployment"), ("apps/v1", "Nope"), ("", "Node")]
    for api_version, kind in unmappable:
        with pytest.raises(RESTMappingError, match="unable to get REST mapping"):
            mapper.rest_mapping(api_version, kind)

    mapper.reset([])
    with pytest.raises(RESTMappingError):
        mapper.rest_mapping("apps/v1", "Deployment")
