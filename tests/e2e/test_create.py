"""POST answers with the bytes it stored (resourceVersion spliced in): the answer must be
exactly the object a GET returns, for the first object of a template and for the ones
whose managedFields come from the memo."""

from __future__ import annotations

import json
from typing import Any

from .conftest import Server

_JSON = {"Content-Type": "application/json"}


def _pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx",
                                     "env": [{"name": "A", "value": "1"}]}]}}


def _config_map(name: str) -> dict[str, Any]:  # no controller touches it
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"app": "web"}},
            "data": {"a": "1", "b": "2"}}


def test_the_create_answer_is_the_stored_object(server: Server, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/configmaps"
    for name in ("c1", "c2", "c3"):  # c2 and c3 reuse c1's managedFields work
        code, body = server.http("POST", path, _config_map(name), headers=_JSON)
        assert code == 201, body
        created = json.loads(body)
        code, got = server.http("GET", f"{path}/{name}")
        assert code == 200 and json.loads(got) == created
        fields = created["metadata"]["managedFields"][0]["fieldsV1"]
        assert fields == {"f:data": {".": {}, "f:a": {}, "f:b": {}},
                          "f:metadata": {"f:labels": {".": {}, "f:app": {}}}}
        assert int(created["metadata"]["resourceVersion"]) > 0


def test_a_dry_run_create_answers_the_object_and_stores_nothing(
        server: Server, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/pods"
    server.http("POST", path, _pod("warm"), headers=_JSON)
    code, body = server.http("POST", path + "?dryRun=All", _pod("dry"), headers=_JSON)
    assert code == 201, body
    dry = json.loads(body)
    assert dry["metadata"]["name"] == "dry" and dry["metadata"]["uid"]
    assert "resourceVersion" not in dry["metadata"]
    assert "f:spec" in dry["metadata"]["managedFields"][0]["fieldsV1"]
    assert server.http("GET", f"{path}/dry")[0] == 404


def test_a_create_served_in_another_version_answers_in_that_version(
        server: Server, ns: str) -> None:
    """events.k8s.io/v1 Events are stored as core/v1 Events: the create's answer is
    converted, not the stored bytes."""
    event = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
             "metadata": {"name": "e1"}, "eventTime": "2026-01-01T00:00:00.000000Z",
             "reportingController": "qa/ctl", "reportingInstance": "qa-1",
             "action": "Test", "reason": "Tested", "type": "Normal", "note": "hello",
             "regarding": {"kind": "Pod", "name": "p", "namespace": ns}}
    path = f"/apis/events.k8s.io/v1/namespaces/{ns}/events"
    code, body = server.http("POST", path, event, headers=_JSON)
    assert code == 201, body
    created = json.loads(body)
    assert created["apiVersion"] == "events.k8s.io/v1" and created["note"] == "hello"
    assert created["regarding"]["name"] == "p" and "involvedObject" not in created
    code, got = server.http("GET", f"{path}/e1")
    assert code == 200 and json.loads(got) == created
    code, core = server.http("GET", f"/api/v1/namespaces/{ns}/events/e1")
    assert code == 200 and json.loads(core)["message"] == "hello"
