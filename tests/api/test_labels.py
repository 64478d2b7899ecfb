"""Label selectors as apimachinery's pkg/labels parses and matches them, and the label key
and value grammars (``validation.IsQualifiedName`` / ``IsValidLabelValue``)."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api.errors import StatusError
from kubegc.api.labels import (
    label_selector_from_dict,
    parse_label_selector,
    selector_from_set,
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
        pytest.param("n>99999999999999999999", "unable to parse requirement: values[0]: Invalid"
                     ' value: "99999999999999999999": for \'Gt\', \'Lt\' operators, the value'
                     " must be an integer", id="gt-beyond-int64"),
        pytest.param('app=a"b\\', 'unable to parse requirement: values[0][app]: Invalid value:'
                     ' "a\\"b\\\\": a valid label must be an empty string or consist of'
                     " alphanumeric characters, '-', '_' or '.', and must start and end with an"
                     " alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex"
                     " used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
                     id="value-quoted-as-go-does"),
        pytest.param("é\x01", 'unable to parse requirement: <nil>: Invalid value: "é\\x01": name'
                     " part must consist of alphanumeric characters, '-', '_' or '.', and must"
                     " start and end with an alphanumeric character (e.g. 'MyName',  or"
                     " 'my.name',  or '123-abc', regex used for validation is"
                     " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')", id="key-quoted-as-go-does"),
    ],
)
def test_label_selector_parse_errors_are_bad_requests(selector: str, message: str) -> None:
    with pytest.raises(StatusError) as caught:
        parse_label_selector(selector)
    assert (caught.value.code, caught.value.reason) == (400, "BadRequest")
    assert caught.value.message == message


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param({"matchExpressions": [{"key": "a", "operator": "In"}]},
                     "values: Invalid value: []string(nil): for 'in', 'notin' operators, values"
                     " set can't be empty", id="in-without-values-is-a-nil-slice"),
        pytest.param({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": []}]},
                     "values: Invalid value: []string(nil): for 'in', 'notin' operators, values"
                     " set can't be empty", id="empty-values-are-a-nil-slice"),
        pytest.param({"matchExpressions": [{"key": "a", "operator": "Exists",
                                            "values": ["x", "y.z"]}]},
                     'values: Invalid value: []string{"x", "y.z"}: values set must be empty for'
                     " exists and does not exist", id="exists-with-values"),
        pytest.param({"matchExpressions": [{"key": "a", "operator": "DoesNotExist",
                                            "values": ['say "hi"']}]},
                     '[values: Invalid value: []string{"say \\"hi\\""}: values set must be empty'
                     ' for exists and does not exist, values[0][a]: Invalid value: "say'
                     ' \\"hi\\"": a valid label must be an empty string or consist of'
                     " alphanumeric characters, '-', '_' or '.', and must start and end with an"
                     " alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345',"
                     " regex used for validation is"
                     " '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]",
                     id="values-quoted-as-go-does"),
        pytest.param({"matchLabels": {"a/b/c": "x"}},
                     'key: Invalid value: "a/b/c": a valid label key must consist of alphanumeric'
                     " characters, '-', '_' or '.', and must start and end with an alphanumeric"
                     " character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for"
                     " validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional"
                     " DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                     id="invalid-key"),
    ],
)
def test_label_selector_from_dict_messages(spec: dict[str, Any], message: str) -> None:
    """``LabelSelectorAsSelector``'s errors, values printed with Go's ``%#v`` and ``%q``."""
    with pytest.raises(StatusError) as caught:
        label_selector_from_dict(spec)
    assert caught.value.message == message


def test_gt_lt_compare_only_go_integers() -> None:
    assert parse_label_selector("v>2").matches({"v": "10"})
    assert not parse_label_selector("v>2").matches({"v": "1_0"})  # ParseInt rejects it
    assert not parse_label_selector("v<2").matches({"v": "99999999999999999999"})


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


# --- the key and value grammars, with upstream's messages ---------------------------------
