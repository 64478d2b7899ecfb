"""``kubegc.api.authenticator``: audiences and the aggregate message, as
k8s.io/apiserver's authenticator package and ``utilerrors.NewAggregate`` have them."""

from __future__ import annotations

from kubegc.api.auth import UserInfo
from kubegc.api.authenticator import (
    aggregate_message,
    audience_agnostic,
    audiences_from,
    intersect,
    with_audiences,
)

ALICE = UserInfo("alice")


def test_intersect_keeps_ours_in_our_order() -> None:
    assert intersect(("a", "b", "c"), ("c", "a")) == ("a", "c")
    assert intersect(("a",), ()) == ()


def test_an_audience_agnostic_credential_is_for_the_api_audiences_only() -> None:
    assert audience_agnostic(("api",), ALICE).audiences == ()  # type: ignore[union-attr]
    with with_audiences(("api", "other")):
        assert audiences_from() == ("api", "other")
        assert audience_agnostic(("api",), ALICE).audiences == ("api",)  # type: ignore[union-attr]
    with with_audiences(("vault",)):
        assert audience_agnostic(("api",), ALICE) is None
    assert audiences_from() is None


def test_the_aggregate_message_says_each_error_once() -> None:
    assert aggregate_message([]) == ""
    assert aggregate_message(["one"]) == "one"
    assert aggregate_message(["one", "two", "one"]) == "[one, two]"
