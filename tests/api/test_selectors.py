"""Label and field selectors as apimachinery parses and matches them."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api.errors import StatusError
from kubegc.api.selectors import (
    FieldSelector,
    escape_field_value,
    label_selector_from_dict,
    object_fields,
    parse_field_selector,
    parse_label_selector,
    selector_from_set,
    validate_field_selector,
)

LABELS = {"app": "web", "tier": "frontend", "version": "3", "in": "notin"}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        pytest.param("", True, id="empty-matches-everything"),
        pytest.param("app=web", True, id="equals"),
        pytest.param("app==web", True, id="double-equals"),
        pytest.param("app!=web", False, id="not-equals"),
        pytest.param("missing!=x", True, id="not-equals-absent-key"),
        pytest.param("app in (web,api)", True, id="in"),
        pytest.param("app in (api)", False, id="in-miss"),
        pytest.param("app notin (api,db)", True, id="notin"),
        pytest.param("missing notin (x)", True, id="notin-absent-key"),
        pytest.param("tier", True, id="exists"),
        pytest.param("!tier", False, id="does-not-exist"),
        pytest.param("!missing", True, id="does-not-exist-absent"),
        pytest.param("app=web,tier=backend", False, id="comma-is-and"),
        pytest.param(" app = web , tier ", True, id="whitespace"),
        pytest.param("version>2,version<4", True, id="gt-lt"),
        pytest.param("app>2", False, id="gt-on-non-integer-value"),
        pytest.param("in=notin", True, id="keywords-as-key-and-value"),
        pytest.param("app in (web,,x)", True, id="empty-value-in-set"),
        pytest.param("missing=", False, id="equals-empty-needs-key"),
    ],
)
def test_label_selector_matches(selector: str, matches: bool) -> None:
    assert parse_label_selector(selector).matches(LABELS) is matches


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        pytest.param("app=web=x", "found '=', expected: ',' or 'end of string'",
                     id="second-operator"),
        pytest.param("app web", "unable to parse requirement: found 'web', expected: in, notin,"
                     " =, ==, !=, gt, lt", id="missing-operator"),
        pytest.param("!", "unable to parse requirement: found '', expected: identifier",
                     id="bare-not"),
        pytest.param("app,", "found '', expected: identifier after ','", id="trailing-comma"),
        pytest.param("app in web", "unable to parse requirement: found 'web' expected: '('",
                     id="in-without-parens"),
        pytest.param("app in (web", "unable to parse requirement: found '', expected: ',' or ')'",
                     id="unclosed-set"),
        pytest.param(",app", "found ',', expected: !, identifier, or 'end of string'",
                     id="leading-comma"),
        pytest.param("-app=x", 'unable to parse requirement: <nil>: Invalid value: "-app": name'
                     " part must consist of alphanumeric characters, '-', '_' or '.', and must"
                     " start and end with an alphanumeric character (e.g. 'MyName',  or"
                     " 'my.name',  or '123-abc', regex used for validation is"
                     " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')", id="invalid-key"),
        pytest.param("app=a!b", "found '!', expected: ',' or 'end of string'",
                     id="special-char-in-value"),
        pytest.param("app=-x", 'unable to parse requirement: values[0][app]: Invalid value:'
                     ' "-x": a valid label must be an empty string or consist of alphanumeric'
                     " characters, '-', '_' or '.', and must start and end with an alphanumeric"
                     " character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for"
                     " validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
                     id="invalid-value"),
        pytest.param("n>x", "unable to parse requirement: values[0]: Invalid value: \"x\": for"
                     " 'Gt', 'Lt' operators, the value must be an integer", id="gt-not-integer"),
    ],
)
def test_label_selector_parse_errors_are_bad_requests(selector: str, message: str) -> None:
    with pytest.raises(StatusError) as caught:
        parse_label_selector(selector)
    assert (caught.value.code, caught.value.reason) == (400, "BadRequest")
    assert caught.value.message == message


def test_label_selector_renders_canonically_sorted() -> None:
    selector = parse_label_selector("z in (b,a),!x,app==web,y")
    assert str(selector) == "app==web,!x,y,z in (a,b)"  # sorted by key, as upstream
    assert str(parse_label_selector("v in (,b)")) == "v in (,b)"


def test_label_selector_exact_match_and_empty() -> None:
    selector = parse_label_selector("app=web,tier in (a),env notin (x)")
    assert selector.requires_exact_match("app") == "web"
    assert selector.requires_exact_match("tier") == "a"
    assert selector.requires_exact_match("env") is None
    assert parse_label_selector("").empty
    assert not selector.empty


@pytest.mark.parametrize(
    ("spec", "labels", "matches"),
    [
        pytest.param(None, {"a": "b"}, False, id="nil-selects-nothing"),
        pytest.param({}, {"a": "b"}, True, id="empty-selects-everything"),
        pytest.param({"matchLabels": {"app": "web"}}, {"app": "web", "x": "y"}, True,
                     id="match-labels"),
        pytest.param({"matchLabels": {"app": "web"}}, {"app": "db"}, False,
                     id="match-labels-miss"),
        pytest.param({"matchExpressions": [{"key": "tier", "operator": "In",
                                            "values": ["a", "b"]}]}, {"tier": "b"}, True,
                     id="in"),
        pytest.param({"matchExpressions": [{"key": "tier", "operator": "NotIn",
                                            "values": ["a"]}]}, {}, True, id="notin-absent"),
        pytest.param({"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
                     {"tier": ""}, True, id="exists"),
        pytest.param({"matchLabels": {"app": "web"},
                      "matchExpressions": [{"key": "canary", "operator": "DoesNotExist"}]},
                     {"app": "web", "canary": "1"}, False, id="labels-and-expressions"),
    ],
)
def test_label_selector_from_dict(spec: dict[str, Any] | None, labels: dict[str, str],
                                  matches: bool) -> None:
    assert label_selector_from_dict(spec).matches(labels) is matches


def test_label_selector_from_dict_errors_and_emptiness() -> None:
    assert label_selector_from_dict({}).empty
    assert not label_selector_from_dict(None).empty
    with pytest.raises(StatusError, match='"Bogus" is not a valid label selector operator'):
        label_selector_from_dict({"matchExpressions": [{"key": "a", "operator": "Bogus"}]})
    with pytest.raises(StatusError, match="values set can't be empty"):
        label_selector_from_dict({"matchExpressions": [{"key": "a", "operator": "In"}]})
    assert str(label_selector_from_dict({"matchLabels": {"b": "1", "a": "2"}})) == "a=2,b=1"
    assert selector_from_set({"app": "web"}).matches({"app": "web"})


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
