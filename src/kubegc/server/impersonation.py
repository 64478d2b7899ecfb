"""Impersonation (k8s.io/apiserver ``pkg/endpoints/filters/impersonation.go``,
``WithImpersonation``): a request may ask to be served as another user with the
``Impersonate-User``, ``Impersonate-Group`` (repeated), ``Impersonate-Uid`` and
``Impersonate-Extra-<key>`` headers (``kubectl --as``, ``--as-group``, ``--as-uid``).

It runs after authentication and before authorization, as in kube-apiserver's handler
chain: each thing asked for is authorized with the ``impersonate`` verb for the
authenticated user — ``users``, ``groups``, ``serviceaccounts`` (a ServiceAccount's user
name, in its namespace), ``uids`` and ``userextras/<key>`` (group
``authentication.k8s.io``) — and the first refusal is the request's 403. Then the
request is the impersonated user's, for the authorizer and for admission alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import unquote

from kubegc.api import errors
from kubegc.api.auth import (
    Attributes,
    Authorizer,
    Decision,
    UserInfo,
    impersonated_groups,
    service_account_groups,
    service_account_username,
    split_service_account_username,
)
from kubegc.api.goformat import go_quote
from kubegc.server.http import Headers

#: ``authenticationv1.Impersonate*Header``
IMPERSONATE_USER = "Impersonate-User"
IMPERSONATE_GROUP = "Impersonate-Group"
IMPERSONATE_UID = "Impersonate-Uid"
IMPERSONATE_EXTRA_PREFIX = "Impersonate-Extra-"
AUTHENTICATION_GROUP = "authentication.k8s.io"
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


@dataclass(frozen=True)
class ImpersonationRequest:
    """One thing asked for, as upstream's ``v1.ObjectReference``: kind ``User``,
    ``ServiceAccount``, ``Group``, ``UserExtra`` (its key in ``field_path``) or ``UID``."""

    kind: str
    name: str
    namespace: str = ""
    api_version: str = ""
    field_path: str = ""

    def go_value(self) -> str:
        """How Go's ``%v`` prints the ``ObjectReference`` (its seven fields, in order)."""
        return "{" + " ".join((self.kind, self.namespace, self.name, "", self.api_version, "",
                               self.field_path)) + "}"


class ImpersonationError(Exception):
    """Headers that cannot be honoured at all (groups, extras or a uid without a user):
    upstream answers ``responsewriters.InternalError``, a plain-text 500."""


def internal_error_text(request_uri: str, err: Exception) -> str:
    """``responsewriters.InternalError``'s body (``http.Error`` adds the newline)."""
    return errors.sanitize_html(f"Internal Server Error: {go_quote(request_uri)}: {err}") + "\n"


def _unescape_extra_key(key: str) -> str:
    """``unescapeExtraKey``: %-escapes decoded; a malformed one leaves the key as sent."""
    if _BAD_ESCAPE.search(key):
        return key
    return unquote(key, errors="replace")


def _extra_headers(headers: Headers) -> Iterator[tuple[str, list[str]]]:
    prefix = IMPERSONATE_EXTRA_PREFIX.lower()
    for name in headers:
        if name.startswith(prefix):
            yield _unescape_extra_key(name[len(prefix):]), headers.getall(name)


def impersonation_requests(headers: Headers) -> list[ImpersonationRequest]:
    """``buildImpersonationRequests``: what the headers ask for, in upstream's order (the
    user, each group, each extra value, the uid). Raises ``ImpersonationError`` for
    groups, extras or a uid without a user."""
    found: list[ImpersonationRequest] = []
    user = next(iter(headers.getall(IMPERSONATE_USER)), "")
    if user:
        sa = split_service_account_username(user)
        found.append(ImpersonationRequest("ServiceAccount", sa[1], sa[0]) if sa is not None
                     else ImpersonationRequest("User", user))
    groups = headers.getall(IMPERSONATE_GROUP)
    found += [ImpersonationRequest("Group", group) for group in groups]
    extras = list(_extra_headers(headers))
    for key, values in extras:
        found += [ImpersonationRequest("UserExtra", value, api_version=f"{AUTHENTICATION_GROUP}/v1",
                                       field_path=key) for value in values]
    uid = next(iter(headers.getall(IMPERSONATE_UID)), "")
    if uid:
        found.append(ImpersonationRequest("UID", uid, api_version=f"{AUTHENTICATION_GROUP}/v1"))
    if (groups or extras or uid) and not user:
        listed = " ".join(r.go_value() for r in found)
        raise ImpersonationError(f"requested [{listed}] without impersonating a user")
    return found


def _attributes(requestor: UserInfo, wanted: ImpersonationRequest) -> Attributes:
    """The ``impersonate`` request the authorizer is asked about for ``wanted``."""
    group, _, version = wanted.api_version.rpartition("/")
    resource, subresource = {
        "ServiceAccount": ("serviceaccounts", ""), "User": ("users", ""),
        "Group": ("groups", ""), "UserExtra": ("userextras", wanted.field_path),
        "UID": ("uids", ""),
    }[wanted.kind]
    return Attributes(user=requestor, verb="impersonate", namespace=wanted.namespace,
                      api_group=group, api_version=version, resource=resource,
                      subresource=subresource, name=wanted.name)


def impersonate(authorizer: Authorizer, requestor: UserInfo, headers: Headers) -> UserInfo:
    """The user the request is served as: ``requestor`` without impersonation headers,
    else the impersonated user once ``requestor`` may impersonate each part of it (else
    the 403 of the first part refused). A ServiceAccount gets its groups unless groups are
    asked for; a user but ``system:anonymous`` is added to ``system:authenticated`` unless
    the groups name it or ``system:unauthenticated``; anonymous is added to
    ``system:unauthenticated``."""
    wanted = impersonation_requests(headers)
    if not wanted:
        return requestor
    groups_specified = bool(headers.getall(IMPERSONATE_GROUP))
    username, uid = "", ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    for request in wanted:
        attrs = _attributes(requestor, request)
        decision, reason = authorizer.authorize(attrs)
        if decision is not Decision.ALLOW:
            raise errors.forbidden_request(attrs, reason)
        if request.kind == "ServiceAccount":
            username = service_account_username(request.namespace, request.name)
            if not groups_specified:
                groups = list(service_account_groups(request.namespace))
        elif request.kind == "User":
            username = request.name
        elif request.kind == "Group":
            groups.append(request.name)
        elif request.kind == "UserExtra":
            extra.setdefault(request.field_path, []).append(request.name)
        else:
            uid = request.name
    return UserInfo(username, uid=uid, groups=impersonated_groups(username, groups),
                    extra={k: tuple(v) for k, v in extra.items()})
