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
