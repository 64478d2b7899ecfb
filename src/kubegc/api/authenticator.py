"""What a credential authenticates as, for which audiences, or why it does not (cf.
k8s.io/apiserver ``pkg/authentication/authenticator``: ``Response``, ``Audiences``,
``WithAudiences``/``AudiencesFrom``, ``WrapAudienceAgnosticToken``; and
``utilerrors.NewAggregate``'s message).

The server asks its token authenticators for the audiences of the request (the API's
own, or a TokenReview's ``spec.audiences``): ``with_audiences`` sets them for what runs
inside, ``audiences_from`` reads them. An authenticator that knows a credential but refuses
it raises ``AuthenticationError`` with upstream's message (a TokenReview's
``status.error``); one that does not know it returns None.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol

from kubegc.api.auth import UserInfo

Audiences = tuple[str, ...]


def intersect(ours: Iterable[str], theirs: Iterable[str]) -> Audiences:
    """``Audiences.Intersect``: ours that are theirs too, in our order."""
    wanted = set(theirs)
    return tuple(a for a in ours if a in wanted)


@dataclass(frozen=True)
class Response:
    """``authenticator.Response``: the user, and the audiences the credential was valid
    for (empty from an authenticator that knows no audiences)."""

    user: UserInfo
    audiences: Audiences = ()


@dataclass(frozen=True)
class TokenResult:
    """A bearer token's authentication: the response, or the error (upstream's
    message)."""

    response: Response | None
    error: str = ""


class TokenAuthenticator(Protocol):
    """Who a bearer token is, for which audiences (default: the API's): the server's
    authenticators, which the TokenReview API asks."""

    async def authenticate_token(self, token: str,
                                 audiences: Audiences | None = None) -> TokenResult: ...


class AuthenticationError(Exception):
    """A credential an authenticator recognised and refused; ``str()`` is upstream's
    message (``service account token has expired``)."""


_audiences: ContextVar[Audiences | None] = ContextVar("kubegc_audiences", default=None)


def audiences_from() -> Audiences | None:
    """The audiences the request is for (``AudiencesFrom``), None when nobody said."""
    return _audiences.get()


@contextlib.contextmanager
def with_audiences(audiences: Audiences) -> Iterator[None]:
    """Authenticate what runs inside for ``audiences`` (``WithAudiences``)."""
    token = _audiences.set(audiences)
    try:
        yield
    finally:
        _audiences.reset(token)


def audience_agnostic(implicit: Audiences, user: UserInfo) -> Response | None:
    """``WrapAudienceAgnosticToken``: a credential that names no audience (a static or
    token-file token) is valid for the API's audiences only, so it authenticates a request
    for one of those and nothing else."""
    wanted = audiences_from()
    if wanted is None:
        return Response(user)
    audiences = intersect(implicit, wanted)
    return Response(user, audiences) if audiences else None


def aggregate_message(messages: Iterable[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message as it is, several in brackets,
    each said once."""
    seen: list[str] = []
    for message in messages:
        if message not in seen:
            seen.append(message)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]" if seen else ""
