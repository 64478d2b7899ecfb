"""Decoding kubectl's protobuf request bodies (``application/vnd.kubernetes.protobuf``).

The golden ``testdata/*.pb`` files are the exact bodies kubectl 1.32 POSTed for
``kubectl create ...`` to a capture server; each ``.json`` beside it is what the same kubectl
printed for the same command with ``--dry-run=client -o json``. Decoding the body must give
that JSON object.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kubegc.api.errors import StatusError
from kubegc.server.protobuf import (
    FIXED32,
    FIXED64,
    VARINT,
    WireField,
    decode_protobuf_body,
    iter_fields,
)

TESTDATA = Path(__file__).parent / "testdata"

# --- a minimal encoder mirroring the wire format ----------------------------------------


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int32/int64 travel as 64-bit two's complement
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def num(field: int, value: int) -> bytes:
    return varint(field << 3) + varint(value)


def raw(field: int, payload: bytes) -> bytes:
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def text(field: int, value: str) -> bytes:
    return raw(field, value.encode())


def msg(field: int, *parts: bytes) -> bytes:
    return raw(field, b"".join(parts))


def entry(field: int, key: str, value: bytes | str) -> bytes:
    encoded = value.encode() if isinstance(value, str) else value
    return msg(field, text(1, key), raw(2, encoded))


def envelope(api_version: str, kind: str, *body: bytes, encoding: str = "") -> bytes:
    return (b"k8s\x00" + msg(1, text(1, api_version), text(2, kind))
            + raw(2, b"".join(body)) + text(3, encoding) + text(4, ""))


def empty_meta(field: int = 1, name: str = "") -> bytes:
    """ObjectMeta as Go marshals it: every non-pointer field present, zero-valued."""
    return msg(field, text(1, name), text(2, ""), text(3, ""), text(4, ""), text(5, ""),
               text(6, ""), num(7, 0), msg(8))


# --- golden bodies -------------------------------------------------------------------------

KUBECTL_CREATE_NAMESPACE_NS9 = bytes.fromhex(
    "6b3873000a0f0a02763112094e616d657370616365121b0a130a036e73391200"
    "1a0022002a003200380042001200 1a020a001a002200".replace(" ", ""))


def test_kubectl_create_namespace_exact_bytes() -> None:
    assert (TESTDATA / "create-namespace-ns9.pb").read_bytes() == KUBECTL_CREATE_NAMESPACE_NS9
    assert decode_protobuf_body(KUBECTL_CREATE_NAMESPACE_NS9) == {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "ns9", "creationTimestamp": None}, "spec": {}, "status": {}}


@pytest.mark.parametrize(
    "name", sorted(p.stem for p in TESTDATA.glob("create-*.pb")))
def test_golden_kubectl_bodies_decode_to_kubectls_own_json(name: str) -> None:
    body = (TESTDATA / f"{name}.pb").read_bytes()
    expected = json.loads((TESTDATA / f"{name}.json").read_text())
    assert decode_protobuf_body(body) == expected


def test_golden_files_cover_the_generator_commands() -> None:
    names = {p.stem for p in TESTDATA.glob("create-*.pb")}
    assert {"create-namespace-ns9", "create-configmap-c1", "create-secret-s1",
            "create-deployment-d1"} <= names


# --- round trips through the test encoder ----------------------------------------------------


def test_deployment_pointer_zeros_intorstring_and_unset_scalars() -> None:
    strategy = msg(4, text(1, "RollingUpdate"), msg(2, msg(1, num(1, 0), num(2, 0), text(3, "")),
                                                   msg(2, num(1, 1), num(2, 0), text(3, "25%"))))
    spec = msg(2, num(1, 0), msg(2, entry(1, "app", "web")), strategy, num(5, 0), num(6, 0),
               num(7, 0), num(9, 600))
    body = envelope("apps/v1", "Deployment", empty_meta(name="web"), spec, msg(3))
    assert decode_protobuf_body(body) == {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "creationTimestamp": None},
        "spec": {
            "replicas": 0,  # *int32: an explicit zero survives
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "25%"}},
            "revisionHistoryLimit": 0,
            "progressDeadlineSeconds": 600,
            # minReadySeconds and paused are plain int32/bool: zero means unset
        },
        "status": {},
    }


def test_object_meta_fields() -> None:
    owner = msg(13, text(5, "apps/v1"), text(1, "ReplicaSet"), text(3, "web-5d"),
                text(4, "uid-rs"), num(6, 1), num(7, 0))
    managed = msg(17, text(1, "kubectl-create"), text(2, "Update"), text(3, "v1"),
                  msg(4, num(1, 1767225600)), text(6, "FieldsV1"),
                  msg(7, raw(1, b'{"f:data":{".":{}}}')))
    meta = msg(1, text(1, ""), text(2, "web-"), text(3, "team-a"), num(7, 0),
               msg(8, num(1, 1767225600), num(2, 500)), num(10, -1),
               entry(11, "app", "web"), entry(12, "note", "a=b"), owner, text(14, "x/y"),
               text(14, "z"), managed)
    decoded = decode_protobuf_body(envelope("v1", "ConfigMap", meta))
    assert decoded["metadata"] == {
        "generateName": "web-", "namespace": "team-a",
        "creationTimestamp": "2026-01-01T00:00:00Z", "deletionGracePeriodSeconds": -1,
        "labels": {"app": "web"}, "annotations": {"note": "a=b"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d",
                             "uid": "uid-rs", "controller": True,
                             "blockOwnerDeletion": False}],
        "finalizers": ["x/y", "z"],
        "managedFields": [{"manager": "kubectl-create", "operation": "Update",
                           "apiVersion": "v1", "time": "2026-01-01T00:00:00Z",
                           "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}}}}],
    }


def test_secret_bytes_become_base64_and_string_data_stays_text() -> None:
    body = envelope("v1", "Secret", empty_meta(name="s"), entry(2, "bin", b"\x00\xffok"),
                    entry(4, "plain", "text"), text(3, "Opaque"), num(5, 1))
    assert decode_protobuf_body(body) == {
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "s", "creationTimestamp": None},
        "data": {"bin": "AP9vaw=="}, "stringData": {"plain": "text"}, "type": "Opaque",
        "immutable": True}


def test_pod_template_details() -> None:
    container = msg(
        2, text(1, "app"), text(2, "nginx"), text(3, "sh"), text(3, "-c"),
        msg(7, text(1, "TOKEN"), msg(3, msg(4, msg(1, text(1, "creds")), text(2, "token")))),
        msg(8, msg(1, text(1, "cpu"), msg(2, text(1, "500m"))),
            msg(1, text(1, "memory"), msg(2, text(1, "128Mi")))),
        msg(10, msg(1, msg(2, text(1, "/healthz"), msg(2, num(1, 1), text(3, "http")))),
            num(4, 5)),
        msg(9, text(1, "cache"), num(2, 0), text(3, "/cache")),
        text(14, "IfNotPresent"))
    volumes = [msg(1, text(1, "cache"), msg(2, msg(2))),
               msg(1, text(1, "cfg"), msg(2, msg(19, msg(1, text(1, "settings")), num(3, 420))))]
    spec = msg(2, *volumes, container, text(3, "Always"), num(4, 30),
               msg(14, raw(4, varint(1000) + varint(2000))),
               msg(22, text(1, "k"), text(2, "Exists"), num(5, -5)))
    pod = decode_protobuf_body(envelope("v1", "Pod", empty_meta(name="p"), spec, msg(3)))
    assert pod["spec"] == {
        "volumes": [{"name": "cache", "emptyDir": {}},
                    {"name": "cfg", "configMap": {"name": "settings", "defaultMode": 420}}],
        "containers": [{
            "name": "app", "image": "nginx", "command": ["sh", "-c"],
            "env": [{"name": "TOKEN",
                     "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}}],
            "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"},
                              "periodSeconds": 5},
            "volumeMounts": [{"name": "cache", "mountPath": "/cache"}],
            "imagePullPolicy": "IfNotPresent"}],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "securityContext": {"supplementalGroups": [1000, 2000]},
        "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": -5}],
    }


def test_unknown_fields_are_skipped() -> None:
    unknown = (num(900, 7) + varint(901 << 3 | FIXED32) + b"\x01\x02\x03\x04"
               + varint(902 << 3 | FIXED64) + bytes(8) + text(903, "later field"))
    body = envelope("v1", "ServiceAccount", empty_meta(name="sa"), unknown)
    assert decode_protobuf_body(body) == {
        "apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "sa", "creationTimestamp": None}}


def test_wire_reader() -> None:
    data = num(1, 300) + varint(2 << 3 | FIXED32) + (7).to_bytes(4, "little") + text(3, "x")
    assert list(iter_fields(data)) == [
        WireField(1, VARINT, 300), WireField(2, FIXED32, 7), WireField(3, 2, b"x")]


# --- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        pytest.param(b'{"kind":"Namespace"}', 400, "provided data does not appear to be a"
                     " protobuf message, expected prefix [107 56 115 0]", id="json-body"),
        pytest.param(envelope("apps/v1", "StatefulSet", empty_meta()), 415,
                     "cannot decode application/vnd.kubernetes.protobuf bodies of apps/v1"
                     " StatefulSet", id="kind-without-schema"),
        pytest.param(envelope("v1", "Namespace", empty_meta(), encoding="gzip"), 415,
                     'contentEncoding "gzip"', id="compressed"),
        pytest.param(KUBECTL_CREATE_NAMESPACE_NS9[:30], 400, "unable to decode protobuf body",
                     id="truncated"),
        pytest.param(b"k8s\x00" + varint(1 << 3 | 3), 400, "unsupported wire type 3",
                     id="group-wire-type"),
    ],
)
def test_bad_bodies(body: bytes, code: int, message: str) -> None:
    with pytest.raises(StatusError) as caught:
        decode_protobuf_body(body)
    assert caught.value.code == code
    assert message in caught.value.message


def test_unsupported_kind_message_names_the_alternative() -> None:
    with pytest.raises(StatusError) as caught:
        decode_protobuf_body(envelope("apps/v1", "StatefulSet", empty_meta()))
    error: Any = caught.value
    assert error.reason == "UnsupportedMediaType"
    assert "send it as application/json" in error.message
    assert "apps/v1 Deployment" in error.message


@pytest.mark.parametrize("fields_v1", [
    pytest.param(b'{"f:a":' * 5000 + b"{}" + b"}" * 5000, id="past-python-recursion"),
    pytest.param(b'{"f:a":' * 300 + b"{}" + b"}" * 300, id="past-the-nesting-limit"),
])
def test_raw_json_nested_too_deep_is_a_bad_request(fields_v1: bytes) -> None:
    managed = msg(17, text(1, "m"), text(2, "Update"), text(6, "FieldsV1"),
                  msg(7, raw(1, fields_v1)))
    with pytest.raises(StatusError) as refused:
        decode_protobuf_body(envelope("v1", "ConfigMap", msg(1, text(1, "c"), managed)))
    assert (refused.value.code, refused.value.message) == (
        400, "unable to decode protobuf body: raw JSON: exceeded max depth")


def test_raw_json_numbers_are_gos() -> None:
    managed = msg(17, text(1, "m"), text(2, "Update"), text(6, "FieldsV1"),
                  msg(7, raw(1, b'{"f:a":99999999999999999999999}')))
    decoded = decode_protobuf_body(envelope("v1", "ConfigMap", msg(1, text(1, "c"), managed)))
    assert decoded["metadata"]["managedFields"][0]["fieldsV1"] == {"f:a": 1e23}
