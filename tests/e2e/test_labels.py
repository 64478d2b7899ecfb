"""Invalid labels over the real API: create, update and patch answer 422 Invalid with
apimachinery's ``ValidateLabels`` messages, and kubectl prints them."""

from __future__ import annotations

import json
from typing import Any

from ..registry.validation.test_objectmeta import LONG, TOO_MANY_SLASHES, VALUE  # upstream's texts
from .conftest import Server

_JSON = {"Content-Type": "application/json"}
_MERGE = {"Content-Type": "application/merge-patch+json"}


def _config_map(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels}, "data": {"a": "1"}}


def _invalid(code: int, body: bytes) -> dict[str, Any]:
    assert code == 422, body
    status: dict[str, Any] = json.loads(body)
    assert (status["kind"], status["reason"], status["code"]) == ("Status", "Invalid", 422)
    return status


def test_create_with_a_label_value_too_long(server: Server, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/configmaps"
    status = _invalid(*server.http("POST", path, _config_map("c1", {"app": LONG}),
                                   headers=_JSON))
    message = f'Invalid value: "{LONG}": must be no more than 63 characters'
    assert status["message"] == f'ConfigMap "c1" is invalid: metadata.labels: {message}'
    assert status["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "field": "metadata.labels", "message": message}]
    assert server.http("GET", f"{path}/c1")[0] == 404


def test_create_lists_each_labels_key_then_value_errors(server: Server, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/configmaps"
    status = _invalid(*server.http(
        "POST", path, _config_map("c1", {"a/b/c": "-" + LONG}), headers=_JSON))
    assert status["message"] == (
        f'ConfigMap "c1" is invalid: [metadata.labels: Invalid value: "a/b/c": {TOO_MANY_SLASHES}'
        f', metadata.labels: Invalid value: "-{LONG}": must be no more than 63 characters'
        f', metadata.labels: Invalid value: "-{LONG}": {VALUE}]')


def test_update_and_patch_validate_labels(server: Server, ns: str) -> None:
    path = f"/api/v1/namespaces/{ns}/configmaps"
    code, body = server.http("POST", path, _config_map("c1", {"app": "web"}), headers=_JSON)
    assert code == 201, body
    stored = json.loads(body)
    stored["metadata"]["labels"]["app"] = "web\n"
    status = _invalid(*server.http("PUT", f"{path}/c1", stored, headers=_JSON))
    assert status["message"] == (
        f'ConfigMap "c1" is invalid: metadata.labels: Invalid value: "web\\n": {VALUE}')
    status = _invalid(*server.http("PATCH", f"{path}/c1",
                                   {"metadata": {"labels": {"tier": LONG}}}, headers=_MERGE))
    assert status["message"] == (f'ConfigMap "c1" is invalid: metadata.labels: Invalid value:'
                                 f' "{LONG}": must be no more than 63 characters')
    code, body = server.http("GET", f"{path}/c1")
    assert code == 200 and json.loads(body)["metadata"]["labels"] == {"app": "web"}


def test_kubectl_prints_the_label_error(server: Server, ns: str) -> None:
    server.kubectl("create", "configmap", "c1", "-n", ns)
    patched = server.kubectl("patch", "configmap", "c1", "-n", ns, "--type=merge", "-p",
                             json.dumps({"metadata": {"labels": {"app": LONG}}}), check=False)
    assert patched.returncode == 1
    assert (f'The ConfigMap "c1" is invalid: metadata.labels: Invalid value: "{LONG}": must be'
            " no more than 63 characters") in patched.stderr
