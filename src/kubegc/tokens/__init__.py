"""ServiceAccount tokens, shared by the apiserver and the controller manager as upstream's
``pkg/serviceaccount`` is: the signing key pair (``keys``), compact JWS on
``cryptography`` (``jws``), the claims of bound tokens and their validation (``claims``),
legacy Secret tokens (``legacy``), the generator and the authenticator (``jwt``).

The registry's TokenRequest issues tokens with ``JWTTokenGenerator``; the server's token
authenticator verifies them with ``JWTTokenAuthenticator`` and a validator whose getter
reads the registry; the tokens controller signs legacy tokens through its configuration's
key. Nothing here performs I/O but through the getter and writer protocols it is given.

May import: ``kubegc.api``.
"""

from kubegc.tokens.claims import (
    BoundValidator,
    ServiceAccountInfo,
    ServiceAccountTokenGetter,
    claims,
)
from kubegc.tokens.jwt import JWTTokenAuthenticator, JWTTokenGenerator
from kubegc.tokens.keys import ServiceAccountKey
from kubegc.tokens.legacy import LEGACY_ISSUER, LegacyValidator, legacy_claims

__all__ = [
    "LEGACY_ISSUER",
    "BoundValidator",
    "JWTTokenAuthenticator",
    "JWTTokenGenerator",
    "LegacyValidator",
    "ServiceAccountInfo",
    "ServiceAccountKey",
    "ServiceAccountTokenGetter",
    "claims",
    "legacy_claims",
]
