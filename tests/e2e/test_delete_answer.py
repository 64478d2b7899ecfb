"""What a DELETE answers, as upstream's generic store: a removed object is named by a
Success Status, unless its store returns deleted objects (Pods, Services, Namespaces,
custom resources, ...); an object left in place (finalizers) is answered as it now is."""

from __future__ import annotations

import json
from typing import Any

from .conftest import Server

_JSON = {"Content-Type": "application/json"}


def _create(server: Server, path: str, body: dict[str, Any]) -> dict[str, Any]:
    code, out = server.http("POST", path, body, headers=_JSON)
    assert code == 201, out
    created: dict[str, Any] = json.loads(out)
    return created


def test_a_removed_config_map_is_answered_with_a_status(server: Server, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/configmaps"
    cm = _create(server, path, {"metadata": {"name": "gone"}, "data": {"a": "1"}})
    code, body = server.http("DELETE", f"{path}/gone")
    assert code == 200
    assert json.loads(body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
        "details": {"name": "gone", "kind": "configmaps", "uid": cm["metadata"]["uid"]}}


def test_a_deployment_status_names_its_group(server: Server, ns: str) -> None:
    path = f"/apis/apps/v1/namespaces/{ns}/deployments"
    labels = {"app": "d"}
    _create(server, path, {"metadata": {"name": "d"}, "spec": {
        "replicas": 0, "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels},
                     "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    code, body = server.http("DELETE", f"{path}/d")
    details = json.loads(body)["details"]
    assert code == 200 and (details["group"], details["kind"]) == ("apps", "deployments")


def test_an_object_kept_by_a_finalizer_is_answered_as_it_now_is(
        server: Server, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/configmaps"
    _create(server, path, {"metadata": {"name": "kept", "finalizers": ["example.com/hold"]}})
    code, body = server.http("DELETE", f"{path}/kept")
    kept = json.loads(body)
    assert code == 200 and kept["kind"] == "ConfigMap"
    assert kept["metadata"]["deletionTimestamp"]
    server.http("PATCH", f"{path}/kept", {"metadata": {"finalizers": None}},
                headers={"Content-Type": "application/merge-patch+json"})


def test_a_removed_service_account_is_answered_with_the_object(
        server: Server, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/serviceaccounts"
    _create(server, path, {"metadata": {"name": "sa"}})
    code, body = server.http("DELETE", f"{path}/sa")
    assert code == 200 and json.loads(body)["kind"] == "ServiceAccount"
