"""The name grammars of ``kubegc.api.content``: qualified names and label values with
apimachinery's messages, and the memo that only keeps strings short enough to be valid."""

from __future__ import annotations

import pytest

from kubegc.api import content
from kubegc.api.content import is_qualified_name, is_valid_label_value

NAME_PART = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start"
             " and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or"
             " '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
PREFIX_PART = ("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric"
               " characters, '-' or '.', and must start and end with an alphanumeric character"
               " (e.g. 'example.com', regex used for validation is"
               " '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
TOO_MANY_SLASHES = ("a valid label key must consist of alphanumeric characters, '-', '_' or '.',"
                    " and must start and end with an alphanumeric character (e.g. 'MyName',  or"
                    " 'my.name',  or '123-abc', regex used for validation is"
                    " '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain"
                    " prefix and '/' (e.g. 'example.com/MyName')")
VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_'"
         " or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or"
         " 'my_value',  or '12345', regex used for validation is"
         " '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


@pytest.mark.parametrize(("key", "expected"), [
    pytest.param("app", (), id="name"),
    pytest.param("app.kubernetes.io/name", (), id="prefixed"),
    pytest.param("a" * 63, (), id="name-of-63"),
    pytest.param("a" * 64, ("name part must be no more than 63 characters",), id="name-too-long"),
    pytest.param("-" + "a" * 63, ("name part must be no more than 63 characters", NAME_PART),
                 id="name-too-long-and-malformed"),
    pytest.param("", ("name part must be non-empty", NAME_PART), id="empty"),
    pytest.param("-app", (NAME_PART,), id="name-starts-with-dash"),
    pytest.param("app\n", (NAME_PART,), id="trailing-newline"),
    pytest.param("/app", ("prefix part must be non-empty",), id="empty-prefix"),
    pytest.param("/", ("prefix part must be non-empty", "name part must be non-empty", NAME_PART),
                 id="only-a-slash"),
    pytest.param("example.com/", ("name part must be non-empty", NAME_PART), id="empty-name"),
    pytest.param("Example.com/app", (PREFIX_PART,), id="prefix-upper-case"),
    pytest.param("a" * 254 + "/app", ("prefix part must be no more than 253 characters",),
                 id="prefix-too-long"),
    pytest.param("a/b/c", (TOO_MANY_SLASHES,), id="two-slashes"),
])
def test_is_qualified_name(key: str, expected: tuple[str, ...]) -> None:
    assert is_qualified_name(key) == expected
    assert is_qualified_name(key) == expected  # the remembered answer is the same


@pytest.mark.parametrize(("value", "expected"), [
    pytest.param("", (), id="empty"),
    pytest.param("web", (), id="plain"),
    pytest.param("a" * 63, (), id="63-characters"),
    pytest.param("a" * 64, ("must be no more than 63 characters",), id="too-long"),
    pytest.param("-" + "a" * 63, ("must be no more than 63 characters", VALUE),
                 id="too-long-and-malformed"),
    pytest.param("-x", (VALUE,), id="starts-with-dash"),
    pytest.param("web\n", (VALUE,), id="trailing-newline"),
    pytest.param("a/b", (VALUE,), id="slash"),
])
def test_is_valid_label_value(value: str, expected: tuple[str, ...]) -> None:
    assert is_valid_label_value(value) == expected
    assert is_valid_label_value(value) == expected


def test_only_strings_short_enough_to_be_valid_are_remembered() -> None:
    """The memos never keep a large string a client sent."""
    values, keys = content._label_value_memo, content._qualified_name_memo
    values.cache_clear()
    keys.cache_clear()
    is_valid_label_value("x" * 64)
    is_qualified_name("x" * (253 + 1 + 63 + 1))
    assert (values.cache_info().currsize, keys.cache_info().currsize) == (0, 0)
    is_valid_label_value("x" * 63)
    is_qualified_name("x" * 253 + "/" + "x" * 63)
    assert (values.cache_info().currsize, keys.cache_info().currsize) == (1, 1)
