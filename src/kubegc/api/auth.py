"""Who makes a request and what it asks to do: the vocabulary of authentication,
authorization and the admission plugins that ask the authorizer (cf. k8s.io/apiserver
``pkg/authentication/user``, ``pkg/authorization/authorizer`` and ``pkg/endpoints/request``).

The server authenticates every HTTP request into a ``UserInfo``, derives its
``Attributes`` and asks the ``Authorizer``; in-process clients (the controllers) do the same
with the identity they were built with. While a request runs, its user is the context's
(``request_user`` / ``as_user``, upstream's ``request.WithUser``/``UserFrom``), which is how
the registry's admission and the review APIs learn who is asking.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Protocol

from kubegc.api.content import is_dns1123_label, is_dns1123_subdomain
from kubegc.api.goformat import go_quote

#: k8s.io/apiserver/pkg/authentication/user: the well-known users and groups
SYSTEM_PRIVILEGED_GROUP = "system:masters"
ALL_AUTHENTICATED = "system:authenticated"
ALL_UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = "system:anonymous"
KUBE_CONTROLLER_MANAGER = "system:kube-controller-manager"
KUBE_SCHEDULER = "system:kube-scheduler"
APISERVER_USER = "system:apiserver"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"
NODES_GROUP = "system:nodes"
NODE_USER_PREFIX = "system:node:"
#: the user the admin credential kubegc writes authenticates as (kubeadm's admin.conf name)
ADMIN_USER = "kubernetes-admin"


@dataclass(frozen=True)
class UserInfo:
    """``user.DefaultInfo``: a name, a uid, groups and extra attributes."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def in_group(self, group: str) -> bool:
        return group in self.groups


ADMIN = UserInfo(ADMIN_USER, groups=(SYSTEM_PRIVILEGED_GROUP, ALL_AUTHENTICATED))
ANONYMOUS_USER = UserInfo(ANONYMOUS, groups=(ALL_UNAUTHENTICATED,))
#: what the apiserver itself writes as (bootstrap policy, its own objects)
APISERVER = UserInfo(APISERVER_USER, groups=(SYSTEM_PRIVILEGED_GROUP,))


def service_account_username(namespace: str, name: str) -> str:
    """``serviceaccount.MakeUsername``."""
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


def split_service_account_username(username: str) -> tuple[str, str] | None:
    """``serviceaccount.SplitUsername``: (namespace, name), or None for another user — as
    for a namespace that is no DNS-1123 label or a name that is no DNS-1123 subdomain
    (``ValidateNamespaceName``, ``ValidateServiceAccountName``)."""
    if not username.startswith(SERVICE_ACCOUNT_PREFIX):
        return None
    namespace, sep, name = username[len(SERVICE_ACCOUNT_PREFIX):].partition(":")
    if not sep or not namespace or not name or ":" in name:
        return None
    if is_dns1123_label(namespace) or is_dns1123_subdomain(name):
        return None
    return namespace, name


def service_account_groups(namespace: str) -> tuple[str, str]:
    """``serviceaccount.MakeGroupNames``: every ServiceAccount's group and its namespace's."""
    return SERVICE_ACCOUNTS_GROUP, f"{SERVICE_ACCOUNTS_GROUP}:{namespace}"


def service_account_user(namespace: str, name: str, uid: str = "") -> UserInfo:
    """The user a ServiceAccount's token authenticates as (``serviceaccount.UserInfo``)."""
    return UserInfo(service_account_username(namespace, name), uid=uid,
                    groups=(*service_account_groups(namespace), ALL_AUTHENTICATED))


def impersonated_groups(username: str, groups: Sequence[str]) -> tuple[str, ...]:
    """The impersonation filter's last step (``WithImpersonation``): a user other than
    ``system:anonymous`` is in ``system:authenticated`` unless the groups name it or
    ``system:unauthenticated``; ``system:anonymous`` is in ``system:unauthenticated``.
    (The server's impersonation and ``kubegc doctor --as`` both complete groups so.)"""
    out = list(groups)
    if username != ANONYMOUS:
        if ALL_AUTHENTICATED not in out and ALL_UNAUTHENTICATED not in out:
            out.append(ALL_AUTHENTICATED)
    elif ALL_UNAUTHENTICATED not in out:
        out.append(ALL_UNAUTHENTICATED)
    return tuple(out)


@dataclass(frozen=True)
class Attributes:
    """``authorizer.AttributesRecord``: one request as the authorizer sees it. A resource
    request names group/resource/subresource/namespace/name; a non-resource request its
    ``path``."""

    user: UserInfo
    verb: str
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    resource_request: bool = True
    path: str = ""


class Decision(enum.Enum):
    """``authorizer.Decision``."""

    DENY = 0
    ALLOW = 1
    NO_OPINION = 2


class Authorizer(Protocol):
    """``authorizer.Authorizer``: the decision and its reason (said in a 403's message)."""

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]: ...


class AlwaysAllow:
    """``--authorization-mode AlwaysAllow`` (``authorizerfactory.NewAlwaysAllowAuthorizer``)."""

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        return Decision.ALLOW, ""


class AlwaysDeny:
    """``--authorization-mode AlwaysDeny``."""

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        return Decision.NO_OPINION, "Everything is forbidden."


class Privileged:
    """``authorizerfactory.NewPrivilegedGroups(system:masters)``: the first authorizer of
    kube-apiserver's union, so that ``system:masters`` can do anything whatever RBAC says."""

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        if attrs.user.in_group(SYSTEM_PRIVILEGED_GROUP):
            return Decision.ALLOW, ""
        return Decision.NO_OPINION, ""


@dataclass
class Union:
    """``union.New``: the first authorizer with an opinion decides; the reasons of those
    without one are joined."""

    authorizers: list[Authorizer]

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        reasons: list[str] = []
        for authorizer in self.authorizers:
            decision, reason = authorizer.authorize(attrs)
            if decision is not Decision.NO_OPINION:
                return decision, reason
            if reason:
                reasons.append(reason)
        return Decision.NO_OPINION, "\n".join(reasons)


def allowed(authorizer: Authorizer, attrs: Attributes) -> bool:
    return authorizer.authorize(attrs)[0] is Decision.ALLOW


_request_user: ContextVar[UserInfo | None] = ContextVar("kubegc_request_user", default=None)


def request_user() -> UserInfo | None:
    """The user of the request being served (``request.UserFrom``); None outside a request
    (the registry's own writes, a test's direct registry calls)."""
    return _request_user.get()


class as_user:  # a function to its callers: ``with as_user(user):``
    """Serve what runs inside as ``user`` (``request.WithUser``). A class rather than a
    ``contextlib.contextmanager`` generator: every in-process client call enters one
    (~2 us less each, thousands per GC cascade)."""

    __slots__ = ("_token", "_user")

    def __init__(self, user: UserInfo | None) -> None:
        self._user = user
        self._token: Token[UserInfo | None] | None = None

    def __enter__(self) -> None:
        self._token = _request_user.set(self._user)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _request_user.reset(self._token)
            self._token = None


def forbidden_message(attrs: Attributes) -> str:
    """``responsewriters.forbiddenMessage``: who cannot do what, where."""
    name = attrs.user.name
    if not attrs.resource_request:
        return f"User {go_quote(name)} cannot {attrs.verb} path {go_quote(attrs.path)}"
    resource = attrs.resource + (f"/{attrs.subresource}" if attrs.subresource else "")
    where = (f"in the namespace {go_quote(attrs.namespace)}" if attrs.namespace
             else "at the cluster scope")
    return (f"User {go_quote(name)} cannot {attrs.verb} resource {go_quote(resource)} in API "
            f"group {go_quote(attrs.api_group)} {where}")

