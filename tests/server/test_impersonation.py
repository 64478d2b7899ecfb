"""Impersonation headers as ``WithImpersonation`` reads them: what is asked for, what the
authorizer is asked (the ``impersonate`` verb on users, groups, serviceaccounts, uids and
userextras), upstream's 403 and 500, and the user the request then runs as."""

from __future__ import annotations

import pytest

from kubegc.api.auth import Attributes, Decision, UserInfo
from kubegc.api.errors import StatusError
from kubegc.server.http import Headers
from kubegc.server.impersonation import (
    ImpersonationError,
    ImpersonationRequest,
    impersonate,
    impersonation_requests,
    internal_error_text,
)

ADMIN = UserInfo("admin", groups=("system:masters", "system:authenticated"))


def headers(*lines: tuple[str, str]) -> Headers:
    """Headers as the HTTP server builds them from these lines."""
    items: dict[str, str] = {}
    repeated: dict[str, list[str]] = {}
    for name, value in lines:
        key = name.lower()
        if key in items:
            items[key] = f"{items[key]}, {value}"
            repeated.setdefault(key, [items[key].split(", ")[0]]).append(value)
        else:
            items[key] = value
    return Headers(items, repeated)


class Recorder:
    """Allows everything but ``refuse``d resources; remembers what it was asked."""

    def __init__(self, *refuse: str) -> None:
        self.refuse = refuse
        self.asked: list[Attributes] = []

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        self.asked.append(attrs)
        if attrs.resource in self.refuse:
            return Decision.NO_OPINION, ""
        return Decision.ALLOW, ""


def test_no_headers_no_impersonation() -> None:
    authorizer = Recorder()
    assert impersonate(authorizer, ADMIN, headers(("Accept", "a/b"))) is ADMIN
    assert authorizer.asked == []


def test_what_the_headers_ask_for_in_upstreams_order() -> None:
    asked = impersonation_requests(headers(
        ("Impersonate-Uid", "42"), ("Impersonate-Group", "a,b"), ("Impersonate-Group", "c"),
        ("Impersonate-Extra-Scopes", "view"), ("Impersonate-Extra-Scopes", "edit"),
        ("Impersonate-Extra-Example.com%2fteam", "x"), ("Impersonate-User", "jane")))
    assert asked == [
        ImpersonationRequest("User", "jane"),
        ImpersonationRequest("Group", "a,b"), ImpersonationRequest("Group", "c"),
        ImpersonationRequest("UserExtra", "view", api_version="authentication.k8s.io/v1",
                             field_path="scopes"),
        ImpersonationRequest("UserExtra", "edit", api_version="authentication.k8s.io/v1",
                             field_path="scopes"),
        ImpersonationRequest("UserExtra", "x", api_version="authentication.k8s.io/v1",
                             field_path="example.com/team"),
        ImpersonationRequest("UID", "42", api_version="authentication.k8s.io/v1"),
    ]


@pytest.mark.parametrize(("user", "expected"), [
    ("system:serviceaccount:ns:op", ImpersonationRequest("ServiceAccount", "op", "ns")),
    ("system:serviceaccount:NS:op", ImpersonationRequest("User", "system:serviceaccount:NS:op")),
    ("system:serviceaccount:ns:op:x",
     ImpersonationRequest("User", "system:serviceaccount:ns:op:x")),
    ("system:serviceaccount:ns", ImpersonationRequest("User", "system:serviceaccount:ns")),
])
def test_a_service_account_user_name_is_asked_for_as_the_service_account(
        user: str, expected: ImpersonationRequest) -> None:
    assert impersonation_requests(headers(("Impersonate-User", user))) == [expected]


def test_a_malformed_extra_key_escape_is_kept_as_sent() -> None:
    asked = impersonation_requests(headers(("Impersonate-User", "u"),
                                           ("Impersonate-Extra-a%zzb", "v")))
    assert asked[1].field_path == "a%zzb"


@pytest.mark.parametrize("line", [("Impersonate-Group", "g"), ("Impersonate-Uid", "1"),
                                  ("Impersonate-Extra-Scopes", "s")])
def test_groups_extras_or_a_uid_without_a_user_is_an_internal_error(
        line: tuple[str, str]) -> None:
    with pytest.raises(ImpersonationError) as refused:
        impersonate(Recorder(), ADMIN, headers(line))
    name, value = line
    expected = {"Impersonate-Group": f"{{Group  {value}    }}",
                "Impersonate-Uid": f"{{UID  {value}  authentication.k8s.io/v1  }}",
                "Impersonate-Extra-Scopes": f"{{UserExtra  {value}  authentication.k8s.io/v1  "
                                            "scopes}"}[name]
    assert str(refused.value) == f"requested [{expected}] without impersonating a user"


def test_the_internal_error_body_is_upstreams() -> None:
    text = internal_error_text('/api/v1/pods?x="1"', ImpersonationError("requested [<x>]"))
    assert text == ('Internal Server Error: "/api/v1/pods?x=\\"1\\"": requested [&lt;x&gt;]\n')


def test_each_part_is_authorized_with_the_impersonate_verb() -> None:
    authorizer = Recorder()
    user = impersonate(authorizer, ADMIN, headers(
        ("Impersonate-User", "system:serviceaccount:ns:op"), ("Impersonate-Uid", "42"),
        ("Impersonate-Extra-Scopes", "view")))
    assert [(a.verb, a.api_group, a.api_version, a.resource, a.subresource, a.namespace, a.name)
            for a in authorizer.asked] == [
        ("impersonate", "", "", "serviceaccounts", "", "ns", "op"),
        ("impersonate", "authentication.k8s.io", "v1", "userextras", "scopes", "", "view"),
        ("impersonate", "authentication.k8s.io", "v1", "uids", "", "", "42"),
    ]
    assert all(a.user is ADMIN and a.resource_request for a in authorizer.asked)
    assert user == UserInfo("system:serviceaccount:ns:op", uid="42", groups=(
        "system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"),
        extra={"scopes": ("view",)})


@pytest.mark.parametrize(("lines", "groups"), [
    pytest.param([("Impersonate-User", "jane")], ("system:authenticated",), id="user"),
    pytest.param([("Impersonate-User", "jane"), ("Impersonate-Group", "dev")],
                 ("dev", "system:authenticated"), id="user-and-group"),
    pytest.param([("Impersonate-User", "jane"), ("Impersonate-Group", "system:unauthenticated")],
                 ("system:unauthenticated",), id="unauthenticated-asked-for"),
    pytest.param([("Impersonate-User", "jane"), ("Impersonate-Group", "system:authenticated")],
                 ("system:authenticated",), id="authenticated-not-twice"),
    pytest.param([("Impersonate-User", "system:serviceaccount:ns:op"),
                  ("Impersonate-Group", "dev")], ("dev", "system:authenticated"),
                 id="a-service-account-with-groups-gets-those-only"),
    pytest.param([("Impersonate-User", "system:anonymous")], ("system:unauthenticated",),
                 id="anonymous"),
    pytest.param([("Impersonate-User", "system:anonymous"),
                  ("Impersonate-Group", "system:authenticated")],
                 ("system:authenticated", "system:unauthenticated"), id="anonymous-with-group"),
])
def test_the_groups_of_the_impersonated_user(lines: list[tuple[str, str]],
                                             groups: tuple[str, ...]) -> None:
    assert impersonate(Recorder(), ADMIN, headers(*lines)).groups == groups


@pytest.mark.parametrize(("lines", "message"), [
    pytest.param([("Impersonate-User", "bob")],
                 'users "bob" is forbidden: User "jane" cannot impersonate resource "users" in '
                 'API group "" at the cluster scope', id="user"),
    pytest.param([("Impersonate-User", "system:serviceaccount:ns:op")],
                 'serviceaccounts "op" is forbidden: User "jane" cannot impersonate resource '
                 '"serviceaccounts" in API group "" in the namespace "ns"', id="service-account"),
    pytest.param([("Impersonate-User", "ok"), ("Impersonate-Group", "system:masters")],
                 'groups "system:masters" is forbidden: User "jane" cannot impersonate resource '
                 '"groups" in API group "" at the cluster scope', id="group"),
    pytest.param([("Impersonate-User", "ok"), ("Impersonate-Uid", "42")],
                 'uids.authentication.k8s.io "42" is forbidden: User "jane" cannot impersonate '
                 'resource "uids" in API group "authentication.k8s.io" at the cluster scope',
                 id="uid"),
    pytest.param([("Impersonate-User", "ok"), ("Impersonate-Extra-Scopes", "view")],
                 'userextras.authentication.k8s.io "view" is forbidden: User "jane" cannot '
                 'impersonate resource "userextras/scopes" in API group "authentication.k8s.io" '
                 'at the cluster scope', id="extra"),
])
def test_the_first_part_refused_is_the_403(lines: list[tuple[str, str]], message: str) -> None:
    jane = UserInfo("jane", groups=("system:authenticated",))
    authorizer = Recorder("users", "serviceaccounts", "groups", "uids", "userextras")
    if lines[0][1] == "ok":
        authorizer.refuse = tuple(r for r in authorizer.refuse if r != "users")
    with pytest.raises(StatusError) as refused:
        impersonate(authorizer, jane, headers(*lines))
    assert (refused.value.code, refused.value.reason, refused.value.message) == (
        403, "Forbidden", message)


def test_the_403_message_reads_as_no_html() -> None:
    """``ForbiddenStatusError`` sanitizes the message it makes (a user name is anyone's)."""
    with pytest.raises(StatusError) as refused:
        impersonate(Recorder("users"), UserInfo("<b>&"), headers(("Impersonate-User", "x")))
    assert refused.value.message == (
        'users "x" is forbidden: User "&lt;b&gt;&amp;" cannot impersonate resource "users" in '
        'API group "" at the cluster scope')
