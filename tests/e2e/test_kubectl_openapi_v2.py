"""What OpenAPI v2 gives kubectl, with the real 1.27 and 1.33 binaries: a ``kind: List``
file (what ``kubectl get -o yaml`` prints for several objects) is validated client-side
against ``/openapi/v2`` in every version; 1.27 checks fieldValidation support there for
every ``create -f`` / ``apply -f``; an unknown kind is "no matches for kind" (not "failed to
download openapi"); a CRD's kinds appear in v2 as soon as it is established."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest

from .conftest import KUBECTL, Server, write

_FOLDER = os.path.dirname(os.path.realpath(KUBECTL)) if KUBECTL else ""
BINARIES = [(v, os.path.join(_FOLDER, f"kubectl.{v}")) for v in ("1.27", "1.33")
            if _FOLDER and os.path.exists(os.path.join(_FOLDER, f"kubectl.{v}"))]
pytestmark = pytest.mark.skipif(len(BINARIES) < 2, reason="kubectl 1.27/1.33 not found")
IDS = [v for v, _ in BINARIES]


def _crd(plural: str, kind: str) -> str:
    return f"""apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: {plural}.v2.example.com}}
spec:
  group: v2.example.com
  scope: Namespaced
  names: {{plural: {plural}, singular: {kind.lower()}, kind: {kind}}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {{type: integer}}
              color: {{type: string, nullable: true}}
              extra: {{type: object, x-kubernetes-preserve-unknown-fields: true}}
              port: {{x-kubernetes-int-or-string: true}}
              either: {{anyOf: [{{type: integer}}, {{type: string}}],
                       x-kubernetes-int-or-string: true}}
"""


def _mixed(kind: str) -> str:
    return f"""apiVersion: v1
kind: ConfigMap
metadata: {{name: cm1}}
data: {{a: b}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: web, image: nginx, ports: [{{containerPort: 80}}]}}]
---
apiVersion: v2.example.com/v1
kind: {kind}
metadata: {{name: w1}}
spec: {{size: 3, color: null, extra: {{any: [1, 2]}}, port: 8080, either: x}}
"""


@pytest.fixture
def custom_kind(server: Server, tmp_path: Path) -> str:
    """A fresh CRD (fresh names: kubectl's discovery cache never saw it) with the schema
    features v2 publishes differently (nullable, preserved fields, int-or-string)."""
    suffix = uuid.uuid4().hex[:6]
    kind = f"Widget{suffix}"
    server.kubectl("apply", "-f", write(tmp_path, "crd.yaml", _crd(f"widgets{suffix}", kind)))
    server.kubectl("wait", "--for=condition=Established",
                   f"crd/widgets{suffix}.v2.example.com")
    return kind


def _namespace(server: Server) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    server.kubectl("create", "namespace", name)
    return name


@pytest.mark.parametrize(("version", "binary"), BINARIES, ids=IDS)
def test_apply_a_list_backup_into_a_new_namespace(server: Server, tmp_path: Path,
                                                   custom_kind: str, version: str,
                                                   binary: str) -> None:
    cache = ["--cache-dir", str(tmp_path / "cache")]
    source, target = _namespace(server), _namespace(server)
    mixed = write(tmp_path, "mixed.yaml", _mixed(custom_kind))
    server.kubectl("apply", "-f", mixed, "-n", source, *cache, binary=binary)
    # (kube-root-ca.crt, the root CA publisher's, is in every namespace: not backed up)
    backup = server.kubectl("get", f"cm,deploy,{custom_kind.lower()}", "-n", source,
                            "--field-selector", "metadata.name!=kube-root-ca.crt",
                            "-o", "yaml", *cache, binary=binary).stdout
    assert backup.startswith("apiVersion: v1\nitems:") and "kind: List" in backup
    path = write(tmp_path, "backup.yaml", backup.replace(f"namespace: {source}",
                                                        f"namespace: {target}"))
    out = server.kubectl("apply", "-f", path, *cache, binary=binary).stdout
    assert out.splitlines() == ["configmap/cm1 created", "deployment.apps/web created",
                                f"{custom_kind.lower()}.v2.example.com/w1 created"]
    got = json.loads(server.kubectl("get", custom_kind.lower(), "w1", "-n", target, "-o",
                                    "json", *cache, binary=binary).stdout)
    got["spec"].pop("color", None)  # null: kubectl 1.33's get -o yaml leaves it out
    assert got["spec"] == {"size": 3, "extra": {"any": [1, 2]}, "port": 8080, "either": "x"}


@pytest.mark.parametrize(("version", "binary"), BINARIES, ids=IDS)
def test_a_list_is_validated_against_openapi_v2(server: Server, tmp_path: Path,
                                                custom_kind: str, version: str,
                                                binary: str) -> None:
    ns = _namespace(server)
    items = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ok"}},
             {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "typo"},
              "dataa": {"a": "b"}},
             {"apiVersion": "v2.example.com/v1", "kind": custom_kind,
              "metadata": {"name": "w"}, "spec": {"colour": "red"}}]
    path = write(tmp_path, "list.json", json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": items}))
    proc = server.kubectl("apply", "-n", ns, "-f", path, "--cache-dir",
                          str(tmp_path / "cache"), binary=binary, check=False)
    assert proc.returncode == 1, proc.stderr
    schema = f"com.example.v2.v1.{custom_kind}.spec"
    assert ('error validating data: [ValidationError(ConfigMap): unknown field "dataa" in '
            f'io.k8s.api.core.v1.ConfigMap, ValidationError({custom_kind}.spec): unknown field '
            f'"colour" in {schema}, ValidationError({custom_kind}.spec): missing required '
            f'field "size" in {schema}]') in proc.stderr
    assert server.kubectl("get", "cm", "ok", "-n", ns, check=False).returncode == 1


@pytest.mark.parametrize(("version", "binary"), BINARIES, ids=IDS)
def test_create_and_apply_with_default_validation(server: Server, tmp_path: Path,
                                                  custom_kind: str, version: str,
                                                  binary: str) -> None:
    ns = _namespace(server)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    mixed = write(tmp_path, "mixed.yaml", _mixed(custom_kind))
    out = server.kubectl("create", "-f", mixed, "-n", ns, *cache, binary=binary).stdout
    assert "deployment.apps/web created" in out and "/w1 created" in out
    out = server.kubectl("apply", "-f", mixed, "-n", ns, *cache, binary=binary).stdout
    assert "configmap/cm1 configured" in out  # the create saved no last-applied annotation
    typo = write(tmp_path, "typo.yaml", "apiVersion: v1\nkind: ConfigMap\n"
                 "metadata: {name: t}\ndataa: {a: b}\n")
    proc = server.kubectl("apply", "-f", typo, "-n", ns, *cache, binary=binary, check=False)
    assert proc.returncode == 1 and 'unknown field "dataa"' in proc.stderr  # server-side


@pytest.mark.parametrize(("version", "binary"), BINARIES, ids=IDS)
def test_an_unknown_kind_has_no_matches(server: Server, tmp_path: Path, version: str,
                                        binary: str) -> None:
    path = write(tmp_path, "gizmo.yaml", "apiVersion: v2.example.com/v1\nkind: Gizmo\n"
                 "metadata: {name: g1}\n")
    for verb in ("create", "apply"):
        proc = server.kubectl(verb, "-f", path, "--cache-dir", str(tmp_path / "cache"),
                              binary=binary, check=False)
        assert proc.returncode == 1
        assert 'no matches for kind "Gizmo" in version "v2.example.com/v1"' in proc.stderr
        assert "openapi" not in proc.stderr


def test_a_new_crd_reaches_the_cached_v2_document(server: Server, tmp_path: Path) -> None:
    """kubectl 1.27 revalidates its cached /openapi/v2 with If-None-Match: a CRD created
    after the first download is known at once; explain reads the v2 schema."""
    binary = dict(BINARIES)["1.27"]
    cache = ["--cache-dir", str(tmp_path / "cache")]
    ns = _namespace(server)
    first = write(tmp_path, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    server.kubectl("create", "-f", first, "-n", ns, *cache, binary=binary)
    suffix = uuid.uuid4().hex[:6]
    kind = f"Widget{suffix}"
    server.kubectl("apply", "-f", write(tmp_path, "crd.yaml", _crd(f"widgets{suffix}", kind)))
    server.kubectl("wait", "--for=condition=Established", f"crd/widgets{suffix}.v2.example.com")
    cr = write(tmp_path, "w.yaml", f"apiVersion: v2.example.com/v1\nkind: {kind}\n"
               "metadata: {name: w}\nspec: {size: 1}\n")
    out = server.kubectl("create", "-f", cr, "-n", ns, *cache, binary=binary).stdout
    assert f"{kind.lower()}.v2.example.com/w created" in out
    explained = server.kubectl("explain", f"{kind.lower()}.spec.size",
                               "--output=plaintext-openapiv2", *cache, binary=binary).stdout
    assert "FIELD:    size <integer>" in explained
