"""``kubegc.registry.typed``: decoding into a kind's Go type with encoding/json's messages."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.registry.typed import decode_typed, kind_type
from kubegc.registry.typed.special import check_base64, check_quantity, check_time


def failure(kind: tuple[str, str, str], obj: dict[str, Any]) -> str | None:
    typ = kind_type(*kind)
    assert typ is not None
    found = decode_typed(obj, typ)
    return None if found is None else found.message


POD = ("", "v1", "Pod")
DEPLOY = ("apps", "v1", "Deployment")


@pytest.mark.parametrize(("kind", "obj", "message"), [
    pytest.param(POD, {"spec": "x"}, "json: cannot unmarshal string into Go struct field "
                 "Pod.spec of type v1.PodSpec", id="struct-from-string"),
    pytest.param(POD, {"spec": {"containers": {}}}, "json: cannot unmarshal object into Go "
                 "struct field PodSpec.spec.containers of type []v1.Container",
                 id="slice-from-object"),
    pytest.param(POD, {"spec": {"containers": [{"name": 1}]}}, "json: cannot unmarshal number "
                 "into Go struct field Container.spec.containers.name of type string",
                 id="list-items-add-no-path"),
    pytest.param(POD, {"spec": {"restartPolicy": 1}}, "json: cannot unmarshal number into Go "
                 "struct field PodSpec.spec.restartPolicy of type v1.RestartPolicy",
                 id="named-string-type"),
    pytest.param(DEPLOY, {"spec": {"replicas": 2 ** 31}}, "json: cannot unmarshal number "
                 "2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32",
                 id="int32-overflow"),
    pytest.param(DEPLOY, {"spec": {"replicas": 1.5}}, "json: cannot unmarshal number 1.5 into "
                 "Go struct field DeploymentSpec.spec.replicas of type int32", id="float-to-int"),
    pytest.param(("batch", "v1", "Job"), {"spec": {"completions": "abc"}}, "json: cannot "
                 "unmarshal string into Go struct field JobSpec.spec.completions of type int32",
                 id="job-completions-string"),
    pytest.param(("", "v1", "Secret"), {"data": {"k": "abc"}},
                 "illegal base64 data at input byte 0", id="secret-not-base64"),
    pytest.param(POD, {"spec": {"containers": [{"resources": {"limits": {"cpu": "1x"}}}]}},
                 "quantities must match the regular expression "
                 "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'", id="bad-quantity"),
    pytest.param(("", "v1", "Service"), {"spec": {"ports": [{"targetPort": True}]}},
                 "json: cannot unmarshal bool into Go value of type int32",
                 id="int-or-string-bool"),
    pytest.param(("events.k8s.io", "v1", "Event"), {"eventTime": "2024-01-01T00:00:00Z"},
                 'parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": '
                 'cannot parse "Z" as ".000000"', id="micro-time-needs-six-digits"),
    pytest.param(POD, {"metadata": {"name": 1}, "spec": {"containers": [
        {"resources": {"limits": {"cpu": []}}}]}}, "quantities must match the regular "
                 "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
                 id="self-decoding-error-wins-over-saved"),
    pytest.param(POD, {"metadata": {"name": 1, "namespace": 2}}, "json: cannot unmarshal "
                 "number into Go struct field ObjectMeta.metadata.name of type string",
                 id="first-type-error-is-reported"),
])
def test_messages(kind: tuple[str, str, str], obj: dict[str, Any], message: str) -> None:
    assert failure(kind, obj) == message


def test_valid_objects_decode() -> None:
    pod = {"metadata": {"name": "p", "labels": {"a": "b"}, "creationTimestamp": None},
           "spec": {"containers": [{"name": "c", "image": "i", "ports": [
               {"containerPort": 80}], "resources": {"limits": {"cpu": 1, "memory": "1Gi"}}}]}}
    assert failure(POD, pod) is None
    assert "creationTimestamp" not in pod["metadata"]


def test_nulls_become_zero_values() -> None:
    obj: dict[str, Any] = {"metadata": {"labels": {"a": None}, "finalizers": [None]},
                           "spec": None}
    assert failure(POD, obj) is None
    assert obj == {"metadata": {"labels": {"a": ""}, "finalizers": [""]}}


@pytest.mark.parametrize(("text", "error"), [
    ("YWJj", None), ("YWI=", None), ("YQ==", None), ("YW\nJj", None), ("", None),
    ("abc", "illegal base64 data at input byte 0"),
    ("YW=j", "illegal base64 data at input byte 2"),
    ("YQ=", "illegal base64 data at input byte 3"),
    ("YWJj!", "illegal base64 data at input byte 4"),
    ("YQ==YQ==", "illegal base64 data at input byte 4"),
])
def test_base64_offsets_as_go(text: str, error: str | None) -> None:
    assert check_base64(text) == error


@pytest.mark.parametrize(("text", "error"), [
    ("2024-02-29T10:00:00Z", None), ("2024-01-01T00:00:00.5+02:00", None),
    ("2024-13-01T00:00:00Z", 'parsing time "2024-13-01T00:00:00Z": month out of range'),
    ("2023-02-29T00:00:00Z", 'parsing time "2023-02-29T00:00:00Z": day out of range'),
    ("2024-01-01", 'parsing time "2024-01-01" as "2006-01-02T15:04:05Z07:00": cannot parse '
                   '"" as "T"'),
    ("2024-01-01T00:00:00Zjunk", 'parsing time "2024-01-01T00:00:00Zjunk": extra text: '
                                 '"junk"'),
])
def test_time_errors_as_go(text: str, error: str | None) -> None:
    assert check_time(text) == error


@pytest.mark.parametrize(("text", "ok"), [
    ("1", True), ("500m", True), ("1.5Gi", True), ("1e3", True), ("+1", True), ("0", True),
    ("1x", False), ("", False), ("Gi", False), ("1..2", False), ("1Ki2", False),
])
def test_quantities(text: str, ok: bool) -> None:
    assert (check_quantity(text) is None) == ok
