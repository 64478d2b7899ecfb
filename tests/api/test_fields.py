"""Field selectors as apimachinery's pkg/fields parses and matches them, and the selectable
fields of each resource (the registries' GetAttrs)."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api.errors import StatusError
from kubegc.api.fields import (
    FieldSelector,
    escape_field_value,
    object_fields,
    parse_field_selector,
    validate_field_selector,
)

FIELDS = {"metadata.name": "nginx", "status.phase": "Running", "spec.nodeName": ""}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        pytest.param("", True, id="empty"),
        pytest.param("metadata.name=nginx", True, id="equals"),
        pytest.param("metadata.name==nginx", True, id="double-equals"),
        pytest.param("metadata.name!=nginx", False, id="not-equals"),
        pytest.param("status.phase=Running,metadata.name=other", False, id="and"),
        pytest.param("spec.nodeName=", True, id="empty-value"),
        pytest.param("spec.nodeName!=", False, id="not-empty"),
        pytest.param("metadata.namespace=", True, id="missing-field-reads-empty"),
    ],
)
def test_field_selector_matches(selector: str, matches: bool) -> None:
    assert parse_field_selector(selector).matches(FIELDS) is matches


def test_field_selector_escapes_and_requirements() -> None:
    selector = parse_field_selector(r"metadata.name=a\,b\=c\\d,status.phase!=Failed")
    assert [(r.field, r.operator.value, r.value) for r in selector.requirements] == [
        ("metadata.name", "=", "a,b=c\\d"), ("status.phase", "!=", "Failed")]
    assert selector.exact_value("metadata.name") == "a,b=c\\d"
    assert selector.exact_value("status.phase") is None
    assert selector.matches({"metadata.name": "a,b=c\\d", "status.phase": "Running"})
    assert escape_field_value("a,b=c\\d") == r"a\,b\=c\\d"
    assert str(selector) == r"metadata.name=a\,b\=c\\d,status.phase!=Failed"
    assert parse_field_selector("").empty and FieldSelector().empty


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        pytest.param("metadata.name", "invalid selector: 'metadata.name'; can't understand"
                     " 'metadata.name'", id="no-operator"),
        pytest.param("a=b=c", "invalid field selector: unescaped character in value: 61",
                     id="unescaped-equals"),
        pytest.param(r"a=b\x", r"invalid field selector: invalid escape sequence: \x",
                     id="bad-escape"),
        pytest.param("a=b\\", "invalid field selector: invalid escape sequence: \\",
                     id="trailing-backslash"),
    ],
)
def test_field_selector_parse_errors(selector: str, message: str) -> None:
    with pytest.raises(StatusError) as caught:
        parse_field_selector(selector)
    assert (caught.value.code, caught.value.message) == (400, message)


POD: dict[str, Any] = {
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {"nodeName": "n1", "restartPolicy": "Always", "schedulerName": "default-scheduler",
             "serviceAccountName": "sa", "hostNetwork": True},
    "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.7"}], "podIP": "10.0.0.7"},
}
CORE_EVENT: dict[str, Any] = {
    "metadata": {"name": "e", "namespace": "ns"},
    "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns", "uid": "u1",
                       "apiVersion": "v1", "resourceVersion": "5", "fieldPath": "spec"},
    "reason": "Started", "type": "Normal", "source": {}, "reportingComponent": "kubelet",
}


@pytest.mark.parametrize(
    ("group", "resource", "obj", "expected"),
    [
        pytest.param("", "pods", POD, {
            "metadata.name": "p", "metadata.namespace": "ns", "spec.nodeName": "n1",
            "spec.restartPolicy": "Always", "spec.schedulerName": "default-scheduler",
            "spec.serviceAccountName": "sa", "spec.hostNetwork": "true",
            "status.phase": "Running", "status.podIP": "10.0.0.7",
            "status.nominatedNodeName": ""}, id="pod"),
        pytest.param("", "events", CORE_EVENT, {
            "metadata.name": "e", "metadata.namespace": "ns", "involvedObject.kind": "Pod",
            "involvedObject.name": "p", "involvedObject.namespace": "ns",
            "involvedObject.uid": "u1", "involvedObject.apiVersion": "v1",
            "involvedObject.resourceVersion": "5", "involvedObject.fieldPath": "spec",
            "reason": "Started", "type": "Normal", "reportingComponent": "kubelet",
            "source": "kubelet"}, id="core-event-source-falls-back-to-reporting-component"),
        pytest.param("events.k8s.io", "events", {
            "metadata": {"name": "e"}, "regarding": {"kind": "Pod", "name": "p"},
            "reason": "R", "type": "Warning", "reportingController": "c"}, {
            "metadata.name": "e", "metadata.namespace": "", "regarding.kind": "Pod",
            "regarding.name": "p", "regarding.namespace": "", "regarding.uid": "",
            "regarding.apiVersion": "", "regarding.resourceVersion": "",
            "regarding.fieldPath": "", "reason": "R", "type": "Warning",
            "reportingController": "c"}, id="events-k8s-io"),
        pytest.param("", "secrets", {"metadata": {"name": "s"}, "type": "Opaque"},
                     {"metadata.name": "s", "metadata.namespace": "", "type": "Opaque"},
                     id="secret"),
        pytest.param("", "nodes", {"metadata": {"name": "n"}, "spec": {}},
                     {"metadata.name": "n", "metadata.namespace": "",
                      "spec.unschedulable": "false"}, id="node"),
        pytest.param("", "namespaces", {"metadata": {"name": "x"},
                                        "status": {"phase": "Terminating"}},
                     {"metadata.name": "x", "metadata.namespace": "",
                      "status.phase": "Terminating"}, id="namespace"),
        pytest.param("batch", "jobs", {"metadata": {"name": "j"}, "status": {"succeeded": 2}},
                     {"metadata.name": "j", "metadata.namespace": "",
                      "status.successful": "2"}, id="job"),
        pytest.param("example.com", "widgets", {"metadata": {"name": "w", "namespace": "n"},
                                                "spec": {"size": 3}},
                     {"metadata.name": "w", "metadata.namespace": "n"}, id="custom-resource"),
    ],
)
def test_object_fields(group: str, resource: str, obj: dict[str, Any],
                       expected: dict[str, str]) -> None:
    assert object_fields(group, resource, obj) == expected


def test_describe_pod_event_selector_filters_by_involved_object() -> None:
    selector = parse_field_selector(
        "involvedObject.uid=u1,involvedObject.name=p,involvedObject.namespace=ns")
    validate_field_selector("", "events", selector)
    assert selector.matches(object_fields("", "events", CORE_EVENT))
    other = {**CORE_EVENT, "involvedObject": {**CORE_EVENT["involvedObject"], "uid": "u2"}}
    assert not selector.matches(object_fields("", "events", other))


@pytest.mark.parametrize(
    ("group", "resource", "selector", "error"),
    [
        pytest.param("", "pods", "status.phase=Running,spec.nodeName=n1", None, id="pod-ok"),
        pytest.param("", "pods", "spec.containers=x", "field label not supported:"
                     " spec.containers", id="pod-unsupported"),
        pytest.param("apps", "deployments", "metadata.name=web", None, id="metadata-ok"),
        pytest.param("apps", "deployments", "spec.replicas=1",
                     "field label not supported: spec.replicas", id="deployment-spec"),
        pytest.param("example.com", "widgets", "metadata.namespace=x", None, id="cr-metadata"),
        pytest.param("example.com", "widgets", "spec.size=3",
                     "field label not supported: spec.size", id="cr-spec"),
        pytest.param("", "namespaces", "status.phase=Active", None, id="namespace-phase"),
        pytest.param("", "pods", "metadata.name =x", "field label not supported:"
                     " metadata.name ", id="no-trimming-like-upstream"),
    ],
)
def test_validate_field_selector(group: str, resource: str, selector: str,
                                 error: str | None) -> None:
    parsed = parse_field_selector(selector)
    if error is None:
        validate_field_selector(group, resource, parsed)
        return
    with pytest.raises(StatusError) as caught:
        validate_field_selector(group, resource, parsed)
    assert (caught.value.code, caught.value.reason, caught.value.message) == (
        400, "BadRequest", error)
