"""Authentication: who sent a request (cf. k8s.io/apiserver ``pkg/authentication`` and
kube-apiserver's ``BuiltInAuthenticationOptions``).

``Authentication.authenticate`` runs the authenticators as kube-apiserver's union does:
the first that recognises the request's credential names the user, who is then added to
``system:authenticated``; a credential that none recognises is a 401; a request with no
credential is ``system:anonymous`` in ``system:unauthenticated`` (``--anonymous-auth``,
on by default).

Bearer tokens are authenticated for the API audiences (``api_audiences``: the
ServiceAccount issuer, kube-apiserver's ``--api-audiences`` default), or for a TokenReview's
(``authenticate_token``); a token authenticator that names no audiences (the static and
token-file ones) is valid for the API audiences only, as upstream wraps it
(``WrapAudienceAgnosticToken``). One that recognises a token and refuses it raises
``AuthenticationError``; a refused token's error is upstream's aggregate (``[invalid bearer
token, service account token has expired]``), which a TokenReview reports.

A kubegc serving plain HTTP without any credential configured (``tls=False``: the
in-memory clusters of tests) answers an uncredentialed request as kube-apiserver's old
insecure port did: as ``system:unsecured`` in ``system:masters``.
"""

from __future__ import annotations

import contextlib
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
from kubegc.api.authenticator import (
    Audiences,
    AuthenticationError,
    Response,
    TokenResult,
    aggregate_message,
    audience_agnostic,
    with_audiences,
)
from kubegc.server.http import Request

#: a bearer token → its user (a ``Response`` from an authenticator that knows audiences),
#: or None when this authenticator does not know it; ``AuthenticationError`` when it knows
#: the token and refuses it
TokenAuthenticator = Callable[[str], Awaitable[UserInfo | Response | None]]
#: a request → its user from a credential other than a bearer token (a client
#: certificate), or None when it carries none this authenticator knows;
#: ``AuthenticationError`` when it refuses the one it carries (another authenticator may
#: still accept the request; if none does, it is a 401, never anonymous)
RequestAuthenticator = Callable[[Request], Awaitable[UserInfo | None]]

#: ``bearertoken``'s error for a token no authenticator accepted
INVALID_BEARER_TOKEN = "invalid bearer token"

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
    #: the audiences of this API (``--api-audiences``)
    api_audiences: Audiences = ()

    async def authenticate(self, request: Request) -> UserInfo:
        """The request's user; raises the 401 ``Unauthorized`` Status for a credential
        nobody recognises, or for none when anonymous requests are off."""
        refused = False  # a client certificate recognised and refused
        for authenticate_request in self.request_authenticators:
            try:
                user = await authenticate_request(request)
            except AuthenticationError:
                refused = True
                continue
            if user is not None:
                return with_authenticated_group(user)
        token = bearer_token(request)
        if token is not None:
            result = await self.authenticate_token(token)
            if result.response is None:
                raise errors.unauthorized()
            return result.response.user
        if refused:  # union.NewFailOnError: no anonymous after an authenticator's error
            raise errors.unauthorized()
        if self.unsecured:
            return UNSECURED
        if self.anonymous:
            return ANONYMOUS_USER
        raise errors.unauthorized()

    async def authenticate_token(self, token: str,
                                 audiences: Audiences | None = None) -> TokenResult:
        """``bearertoken`` over the union of the token authenticators, for ``audiences``
        (default: the API's): the first that accepts the token answers (its user in
        ``system:authenticated``); else the errors of those that refused it."""
        refusals: list[str] = []
        wanted = audiences or self.api_audiences
        # no audiences at all: none is asked for (upstream sets them only when there are)
        with with_audiences(wanted) if wanted else contextlib.nullcontext():
            for authenticate_token in self.token_authenticators:
                try:
                    answer = await authenticate_token(token)
                except AuthenticationError as err:
                    refusals.append(str(err))
                    continue
                if isinstance(answer, UserInfo):
                    answer = audience_agnostic(self.api_audiences, answer)
                if answer is not None:
                    return TokenResult(Response(with_authenticated_group(answer.user),
                                                answer.audiences))
        return TokenResult(None, aggregate_message([INVALID_BEARER_TOKEN, *refusals]))
