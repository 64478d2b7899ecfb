"""Custom resources against their CRD's schema, end to end: kubectl create / apply / patch
of valid and invalid widgets, unknown fields under Strict (kubectl's default), Warn and
Ignore, schema defaults visible on read, and the 422 Status the official Python client
receives — all worded as kube-apiserver words them."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from .conftest import Server, eventually, write

GROUP = f"v{uuid.uuid4().hex[:6]}.example.com"

CRD = f"""\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.{GROUP}
spec:
  group: {GROUP}
  scope: Namespaced
  names: {{plural: widgets, singular: widget, kind: Widget}}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {{status: {{}}}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [image]
            properties:
              image: {{type: string, minLength: 1}}
              replicas: {{type: integer, minimum: 0, default: 1}}
              mode: {{type: string, enum: [Fast, Safe], default: Safe}}
          status:
            type: object
            properties:
              ready: {{type: boolean}}
"""


def widget(name: str, spec: str = "image: nginx") -> str:
    return (f"apiVersion: {GROUP}/v1\nkind: Widget\nmetadata:\n  name: {name}\n"
            f"spec:\n  {spec}\n")


@pytest.fixture(scope="module")
def widgets(server: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = write(tmp_path_factory.mktemp("crd"), "crd.yaml", CRD)
    server.kubectl("apply", "-f", path)
    eventually(lambda: server.kubectl("get", f"widgets.{GROUP}", "-A",
                                      check=False).returncode == 0)
    yield f"widgets.{GROUP}"
    server.kubectl("delete", "-f", path, "--wait=false", check=False)


def test_valid_widget_gets_the_schema_defaults(server: Server, ns: str, widgets: str,
                                               tmp_path: Path) -> None:
    server.kubectl("create", "-f", write(tmp_path, "w.yaml", widget("web")), "-n", ns)
    live = json.loads(server.kubectl("get", widgets, "web", "-n", ns, "-o", "json").stdout)
    assert live["spec"] == {"image": "nginx", "replicas": 1, "mode": "Safe"}


def test_invalid_widget_is_refused_with_upstreams_message(server: Server, ns: str,
                                                          widgets: str, tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", widget("bad", "{image: nginx, replicas: three}"))
    failed = server.kubectl("create", "-f", path, "-n", ns, check=False)
    assert failed.returncode == 1
    assert ('The Widget "bad" is invalid: spec.replicas: Invalid value: "string": '
            'spec.replicas in body must be of type integer: "string"') in failed.stderr
    assert server.kubectl("get", widgets, "bad", "-n", ns, check=False).returncode == 1


def test_unknown_fields_strict_warn_and_ignore(server: Server, ns: str, widgets: str,
                                               tmp_path: Path) -> None:
    path = write(tmp_path, "typo.yaml", widget("typo", "{image: nginx, colour: blue}"))
    strict = server.kubectl("create", "-f", path, "-n", ns, check=False)
    assert strict.returncode == 1
    assert ('Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
            'unknown field "spec.colour"') in strict.stderr
    warned = server.kubectl("create", "-f", path, "-n", ns, "--validate=warn")
    assert 'Warning: unknown field "spec.colour"' in warned.stderr
    live = json.loads(server.kubectl("get", widgets, "typo", "-n", ns, "-o", "json").stdout)
    assert "colour" not in live["spec"]
    ignored = write(tmp_path, "quiet.yaml", widget("quiet", "{image: nginx, colour: red}"))
    quiet = server.kubectl("create", "-f", ignored, "-n", ns, "--validate=false")
    assert "colour" not in quiet.stderr
    live = json.loads(server.kubectl("get", widgets, "quiet", "-n", ns, "-o", "json").stdout)
    assert "colour" not in live["spec"]


def test_apply_and_patch_are_validated(server: Server, ns: str, widgets: str,
                                       tmp_path: Path) -> None:
    server.kubectl("apply", "-f", write(tmp_path, "a.yaml", widget("app")), "-n", ns)
    bad = write(tmp_path, "b.yaml", widget("app", "{image: nginx, mode: Slow}"))
    failed = server.kubectl("apply", "-f", bad, "-n", ns, check=False)
    assert failed.returncode == 1
    assert 'spec.mode: Unsupported value: "Slow": supported values: "Fast", "Safe"' in (
        failed.stderr)
    patched = server.kubectl("patch", widgets, "app", "-n", ns, "--type=merge",
                             "-p", '{"spec": {"replicas": -1}}', check=False)
    assert patched.returncode == 1
    assert ("spec.replicas: Invalid value: -1: spec.replicas in body should be greater than "
            "or equal to 0") in patched.stderr
    status = server.kubectl("patch", widgets, "app", "-n", ns, "--subresource=status",
                            "--type=merge", "-p", '{"status": {"ready": "yes"}}', check=False)
    assert status.returncode == 1
    assert 'ready in body must be of type boolean: "string"' in status.stderr
    server.kubectl("patch", widgets, "app", "-n", ns, "--subresource=status", "--type=merge",
                   "-p", '{"status": {"ready": true}}')
    live = json.loads(server.kubectl("get", widgets, "app", "-n", ns, "-o", "json").stdout)
    assert live["status"] == {"ready": True} and live["spec"]["mode"] == "Safe"


def test_python_client_gets_the_invalid_status(kube: Any, ns: str, widgets: str) -> None:
    api = client.CustomObjectsApi(kube)
    body = {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": "py"},
            "spec": {"replicas": "three"}}
    with pytest.raises(ApiException) as e:
        api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", body)
    assert e.value.status == 422
    status = json.loads(str(e.value.body))
    assert (status["kind"], status["reason"], status["code"]) == ("Status", "Invalid", 422)
    assert status["message"] == (
        f'Widget.{GROUP} "py" is invalid: [spec.replicas: Invalid value: "string": '
        'spec.replicas in body must be of type integer: "string", spec.image: Required value]')
    assert status["details"]["causes"] == [
        {"reason": "FieldValueTypeInvalid", "field": "spec.replicas",
         "message": 'Invalid value: "string": spec.replicas in body must be of type integer: '
                    '"string"'},
        {"reason": "FieldValueRequired", "field": "spec.image", "message": "Required value"}]
    made = api.create_namespaced_custom_object(GROUP, "v1", ns, "widgets", {
        **body, "spec": {"image": "nginx", "extra": 1}})
    assert isinstance(made, dict)
    assert made["spec"] == {"image": "nginx", "replicas": 1, "mode": "Safe"}
