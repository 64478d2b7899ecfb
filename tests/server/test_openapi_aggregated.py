"""The remote groups' OpenAPI merged into kubegc's (kube-aggregator's v2 merge: the first
spec's paths and definitions win; v3: the index lists each remote group-version with its
document's hash)."""

from __future__ import annotations

from typing import Any

from kubegc.registry.groups.apiregistration.aggregation import Aggregation, RemoteGroupVersion
from kubegc.server.openapi import document_hash
from kubegc.server.openapi_aggregated import merge_v2, merge_v3_index, remote_v3


def aggregation(v2: dict[str, Any] | None, v3: dict[str, Any] | None) -> Aggregation:
    out = Aggregation()
    out.remote[("metrics.example.io", "v1")] = RemoteGroupVersion(
        "v1.metrics.example.io", "metrics.example.io", "v1", available=True,
        openapi_v2=v2, openapi_v3=v3)
    return out


def test_v2_adds_the_backends_paths_and_renames_a_conflicting_definition() -> None:
    """kube-openapi's mergeSpecs: kubegc's paths win; a different definition of the same
    name becomes ``_v2`` (``_v3`` when that is taken), the backend's references follow;
    an identical one is shared; definitions no kept path uses are left out."""
    ours = {"swagger": "2.0", "paths": {"/api/v1/pods": {"get": {}}},
            "definitions": {"Shared": {"description": "ours"}, "Same": {"type": "string"},
                            "Shared_v2": {"description": "taken"}}}
    theirs = {
        "paths": {"/api/v1/pods": {"get": {"x": 1}},
                  "/apis/metrics.example.io/v1/w": {"get": {"responses": {"200": {
                      "schema": {"$ref": "#/definitions/W"}}}}}},
        "definitions": {"W": {"properties": {"a": {"$ref": "#/definitions/Shared"},
                                             "b": {"$ref": "#/definitions/Same"}}},
                        "Shared": {"description": "theirs"}, "Same": {"type": "string"},
                        "Unused": {"type": "object"}}}
    merged = merge_v2(ours, aggregation(theirs, None))
    assert merged["paths"]["/api/v1/pods"] == {"get": {}}
    assert merged["definitions"]["Shared"] == {"description": "ours"}
    assert merged["definitions"]["Shared_v3"] == {"description": "theirs"}
    assert merged["definitions"]["W"] == {"properties": {
        "a": {"$ref": "#/definitions/Shared_v3"}, "b": {"$ref": "#/definitions/Same"}}}
    assert "Unused" not in merged["definitions"]
    assert merge_v2(ours, aggregation(None, None)) == ours


def test_v3_lists_each_downloaded_group_version_with_its_hash() -> None:
    document = {"openapi": "3.0.0", "paths": {}, "components": {"schemas": {}}}
    index = merge_v3_index({"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1"}}},
                           aggregation(None, document))
    assert index["paths"]["apis/metrics.example.io/v1"] == {
        "serverRelativeURL": "/openapi/v3/apis/metrics.example.io/v1?hash="
                             + document_hash(document)}
    assert remote_v3(aggregation(None, document), "metrics.example.io", "v1") == document
    assert "apis/metrics.example.io/v1" not in merge_v3_index(
        {"paths": {}}, aggregation(None, None))["paths"]
