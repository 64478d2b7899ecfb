"""Authentication: who sent a request (cf. k8s.io/apiserver ``pkg/authentication`` and
kube-apiserver's ``BuiltInAuthenticationOptions``).

``Authentication.authenticate`` runs the authenticators as kube-apiserver's union does:
the first that recognises the request's credential names the user, who is then added to
``system:authenticated``; a credential that none recognises is a 401; a request with no
credential is ``system:anonymous`` in ``system:unauthenticated`` (``--anonymous-auth``,
on by default).

A kubegc serving plain HTTP without any credential configured (``tls=False``: the
in-memory clusters of tests) answers an uncredentialed request as kube-apiserver's old
insecure port did: as ``system:unsecured`` in ``system:masters``.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from kubegc.api import errors
from kubegc.api.auth import (
    ADMIN,
    ALL_AUTHENTICATED,
    ALL_UNAUTHENTICATED,
    ANONYMOUS_USER,
    SYSTEM_PRIVILEGED_GROUP,
    UserInfo,
)
from kubegc.server.http import Request

#: a bearer token → its user, or None when this authenticator does not know it
TokenAuthenticator = Callable[[str], Awaitable[UserInfo | None]]
#: a request → its user from a credential other than a bearer token (a client
#: certificate), or None when it carries none this authenticator knows
RequestAuthenticator = Callable[[Request], Awaitable[UserInfo | None]]

UNSECURED = UserInfo("system:unsecured", groups=(SYSTEM_PRIVILEGED_GROUP, ALL_AUTHENTICATED))


def static_token(token: str, user: UserInfo = ADMIN) -> TokenAuthenticator:
    """One token for one user (the admin credential kubegc writes)."""

    async def authenticate(given: str) -> UserInfo | None:
        return user if hmac.compare_digest(given.encode(), token.encode()) else None

    return authenticate


def bearer_token(request: Request) -> str | None:
    """The request's bearer token (``bearertoken.AuthenticateRequest``), or None."""
    header = request.headers.get("Authorization")
    if header is None:
        return None
    parts = header.strip().split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return None  # another scheme: not a credential anything here reads
    return parts[1] or None


def with_authenticated_group(user: UserInfo) -> UserInfo:
    """``group.NewAuthenticatedGroupAdder``: every authenticated user is in
    ``system:authenticated`` (unless anonymous, or already)."""
    if (ALL_AUTHENTICATED in user.groups or ALL_UNAUTHENTICATED in user.groups
            or user.name == ANONYMOUS_USER.name):
        return user
    return replace(user, groups=(*user.groups, ALL_AUTHENTICATED))


@dataclass
class Authentication:
    """The authenticators of one server, in kube-apiserver's order: client certificates,
    then bearer tokens (static, token file, ServiceAccount tokens)."""

    request_authenticators: list[RequestAuthenticator] = field(default_factory=list)
    token_authenticators: list[TokenAuthenticator] = field(default_factory=list)
    anonymous: bool = True
    #: no credential is configured at all: uncredentialed requests are privileged
    unsecured: bool = False

    async def authenticate(self, request: Request) -> UserInfo:
        """The request's user; raises the 401 ``Unauthorized`` Status for a credential
        nobody recognises, or for none when anonymous requests are off."""
        for authenticate_request in self.request_authenticators:
            user = await authenticate_request(request)
            if user is not None:
                return with_authenticated_group(user)
        token = bearer_token(request)
        if token is not None:
            for authenticate_token in self.token_authenticators:
                user = await authenticate_token(token)
                if user is not None:
                    return with_authenticated_group(user)
            raise errors.unauthorized()
        if self.unsecured:
            return UNSECURED
        if self.anonymous:
            return ANONYMOUS_USER
        raise errors.unauthorized()
