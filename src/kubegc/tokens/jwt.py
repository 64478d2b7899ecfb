"""Signing and authenticating ServiceAccount tokens (cf. pkg/serviceaccount/jwt.go
``JWTTokenGenerator`` and ``JWTTokenAuthenticator``).

The authenticator knows a token only if it is a compact JWS whose (unverified) ``iss`` is
one of its issuers; then the signature must verify with one of its keys (the one the
``kid`` header names), the audiences must meet the request's, and its validator (bound or
legacy) must accept the objects the token names. A known token that fails is refused
with upstream's message (``AuthenticationError``); one it does not know is None.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from kubegc.api.authenticator import (
    Audiences,
    AuthenticationError,
    Response,
    aggregate_message,
    audiences_from,
    intersect,
)
from kubegc.api.goformat import go_quote
from kubegc.tokens.claims import Validator
from kubegc.tokens.jws import (
    JWSError,
    PublicKey,
    parse_signed,
    sign,
    unverified_claims,
    verify,
)
from kubegc.tokens.keys import ServiceAccountKey


class JWTTokenGenerator:
    """``JWTTokenGenerator``: signs claims as ``issuer`` with ``key``."""

    def __init__(self, issuer: str, key: ServiceAccountKey) -> None:
        self.issuer = issuer
        self.key = key

    def generate_token(self, claims: Mapping[str, Any]) -> str:
        """``GenerateToken``: the claims, with this generator's ``iss``."""
        return sign(self.key.private_key, {**claims, "iss": self.issuer})


def go_quote_list(values: Sequence[str]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(go_quote(v) for v in values) + "]"


class JWTTokenAuthenticator:
    """``jwtTokenAuthenticator``: ``issuers`` it answers for, the public ``keys`` it
    verifies with, the API audiences (``implicit_audiences``: the requested ones when the
    request names none, and a legacy token's, which names none), and its ``validator``."""

    def __init__(self, issuers: Iterable[str], keys: Sequence[ServiceAccountKey],
                 implicit_audiences: Audiences, validator: Validator) -> None:
        self.issuers = frozenset(issuers)
        self._keys = keys
        self.implicit_audiences = implicit_audiences
        self.validator = validator

    def _keys_for(self, kid: str) -> list[PublicKey]:
        """``GetPublicKeys``: the key ``kid`` names, all of them when the token names
        none."""
        return [k.public_key for k in self._keys if not kid or k.key_id == kid]

    async def authenticate_token(self, token: str) -> Response | None:
        """``AuthenticateToken``: the ServiceAccount's user and the audiences the token is
        valid for; None for a token of another issuer; ``AuthenticationError`` for one of
        ours that is not valid."""
        unverified = unverified_claims(token)
        if unverified is None or unverified.get("iss") not in self.issuers:
            return None
        signed = parse_signed(token)
        if signed is None:
            return None
        keys = self._keys_for(signed.key_id)
        if not keys:
            raise AuthenticationError("invalid signature, no keys found")
        failures: list[str] = []
        for key in keys:
            try:
                verify(signed, key)
                break
            except JWSError as err:
                failures.append(str(err))
        else:
            raise AuthenticationError(aggregate_message(failures))
        try:
            claims = signed.claims()
        except orjson.JSONDecodeError:
            raise AuthenticationError("service account token claims could not be validated "
                                      "due to unexpected validation error") from None
        issuer = claims.get("iss")
        if issuer not in self.issuers:  # parsed before the signature was checked
            raise AuthenticationError(f"token issuer {go_quote(str(issuer))} is invalid")
        audiences = self._audiences(claims)
        info = await self.validator.validate(token, claims)
        return Response(info.user_info(), audiences)

    def _audiences(self, claims: Mapping[str, Any]) -> Audiences:
        """The token's audiences that the request is for; a token naming none (legacy)
        is for the API's."""
        aud = claims.get("aud")
        token_audiences: Audiences = (
            (aud,) if isinstance(aud, str) and aud else
            tuple(a for a in aud if isinstance(a, str)) if isinstance(aud, list) else ())
        if not token_audiences:
            token_audiences = self.implicit_audiences
        requested = audiences_from()
        if requested is None:
            requested = self.implicit_audiences
        audiences = intersect(token_audiences, requested)
        if not audiences and self.implicit_audiences:
            raise AuthenticationError(
                f"token audiences {go_quote_list(token_audiences)} is invalid for the target "
                f"audiences {go_quote_list(requested)}")
        return audiences
