"""Metadata validation as apimachinery words it: ``ValidateLabels``, ``ValidateAnnotations``
and ``ValidateFinalizers`` check keys, values and names with the one implementation of the
qualified-name and label-value grammars in ``kubegc.api.labels``."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api import content
from kubegc.api.content import is_qualified_name, is_valid_label_value
from kubegc.api.errors import StatusCause
from kubegc.registry.validation.objectmeta import (
    validate_annotations,
    validate_finalizers,
    validate_labels,
)

NAME_PART = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start"
             " and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or"
             " '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_'"
         " or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or"
         " 'my_value',  or '12345', regex used for validation is"
         " '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
TOO_MANY_SLASHES = ("a valid label key must consist of alphanumeric characters, '-', '_' or '.',"
                    " and must start and end with an alphanumeric character (e.g. 'MyName',  or"
                    " 'my.name',  or '123-abc', regex used for validation is"
                    " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain"
                    " prefix and '/' (e.g. 'example.com/MyName')")
LONG = "a" * 64


def _messages(causes: list[StatusCause]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


def test_valid_labels_have_no_errors() -> None:
    assert validate_labels({"app": "web", "app.kubernetes.io/name": "frontend",
                            "pod-template-hash": "7d4b9c8f6d", "empty": ""},
                           "metadata.labels") == []
    assert validate_labels(None, "metadata.labels") == []


@pytest.mark.parametrize(("labels", "expected"), [
    pytest.param({"app": LONG},
                 [f'metadata.labels: Invalid value: "{LONG}": must be no more than 63 characters'],
                 id="value-too-long"),
    pytest.param({"app": "-" + LONG},
                 [f'metadata.labels: Invalid value: "-{LONG}": must be no more than 63 characters',
                  f'metadata.labels: Invalid value: "-{LONG}": {VALUE}'],
                 id="value-too-long-and-malformed"),
    pytest.param({"app": "web\n"}, [f'metadata.labels: Invalid value: "web\\n": {VALUE}'],
                 id="value-with-trailing-newline"),
    pytest.param({"a/b/c": "x"}, [f'metadata.labels: Invalid value: "a/b/c": {TOO_MANY_SLASHES}'],
                 id="key-with-two-slashes"),
    pytest.param({"": "x"}, ['metadata.labels: Invalid value: "": name part must be non-empty',
                             f'metadata.labels: Invalid value: "": {NAME_PART}'],
                 id="empty-key"),
    pytest.param({"/": "x"}, ['metadata.labels: Invalid value: "/": prefix part must be non-empty',
                              'metadata.labels: Invalid value: "/": name part must be non-empty',
                              f'metadata.labels: Invalid value: "/": {NAME_PART}'],
                 id="key-only-a-slash"),
    pytest.param({"-k": "-v", "ok": "fine", "n": 5},
                 [f'metadata.labels: Invalid value: "-k": {NAME_PART}',
                  f'metadata.labels: Invalid value: "-v": {VALUE}',
                  "metadata.labels.n: Invalid value: 5: must be a string"],
                 id="per-label-key-then-value-in-map-order"),
    pytest.param(["app"], ['metadata.labels: Invalid value: []string{"app"}: must be a map of'
                           " strings"], id="not-a-map"),
])
def test_validate_labels_messages(labels: Any, expected: list[str]) -> None:
    """``ValidateLabels``: the key's, then the value's ``Invalid`` errors on the map's path."""
    assert _messages(validate_labels(labels, "metadata.labels")) == expected


@pytest.mark.parametrize("key", ["app", "", "/", "a/b/c", "Example.com/x", "-" + LONG,
                                 "a" * 254 + "/x", "x/" + LONG])
@pytest.mark.parametrize("value", ["", "web", LONG, "-" + LONG, "-x", "a/b"])
def test_validate_labels_says_what_the_grammars_say(key: str, value: str) -> None:
    details = [c.message.split(": ", 2)[2] for c in validate_labels({key: value}, "m")]
    assert details == [*is_qualified_name(key), *is_valid_label_value(value)]


def test_annotation_keys_are_qualified_names_of_any_case() -> None:
    """``ValidateAnnotations`` lower-cases the key before checking it; errors show it as sent."""
    assert validate_annotations({"Example.COM/Some-Key": "v", "UPPER": ""}) == []
    assert _messages(validate_annotations({"Bad_Prefix/x": "v"})) == [
        'metadata.annotations: Invalid value: "Bad_Prefix/x": prefix part a lowercase RFC 1123'
        " subdomain must consist of lower case alphanumeric characters, '-' or '.', and must"
        " start and end with an alphanumeric character (e.g. 'example.com', regex used for"
        " validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]


def test_finalizer_names_are_qualified_names() -> None:
    assert validate_finalizers(["kubernetes", "example.com/cleanup", "orphan"]) == []
    assert _messages(validate_finalizers(["a/b/c", "example.com/"])) == [
        f'metadata.finalizers[0]: Invalid value: "a/b/c": {TOO_MANY_SLASHES}',
        'metadata.finalizers[1]: Invalid value: "example.com/": name part must be non-empty',
        f'metadata.finalizers[1]: Invalid value: "example.com/": {NAME_PART}']


@pytest.mark.parametrize("name", ["web\n", "a.b\n"])
def test_a_trailing_newline_is_not_a_dns_name(name: str) -> None:
    """``$`` matches before a final newline; upstream's regexps match the whole name."""
    assert content.is_dns1123_subdomain(name) == [content.DNS1123_SUBDOMAIN_MSG]
    assert content.is_dns1123_label("web\n") == [content.DNS1123_LABEL_MSG]
