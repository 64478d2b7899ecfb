"""Compact JSON Web Signatures on ``cryptography`` (the part of go-jose upstream's
``pkg/serviceaccount`` uses: ``jose.NewSigner``, ``jwt.ParseSigned``, ``Claims``).

kubegc writes this small piece rather than depend on a JWT library: a ServiceAccount token
is one compact JWS (``header.payload.signature``, base64url without padding) signed
RS256 (or ES256/384/512 for an EC key), and verification only ever needs the keys of this
server. Payloads are JSON with sorted keys and no spaces, as go-jose's builder writes them
(a map marshalled by ``encoding/json``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey

#: go-jose's errors, as a TokenReview's ``status.error`` reports them
ERR_CRYPTO_FAILURE = "go-jose/go-jose: error in cryptographic primitive"
ERR_UNSUPPORTED_ALGORITHM = "go-jose/go-jose: unknown/unsupported algorithm"

_EC_ALGORITHMS = {"secp256r1": ("ES256", hashes.SHA256()), "secp384r1": ("ES384", hashes.SHA384()),
                  "secp521r1": ("ES512", hashes.SHA512())}


class JWSError(Exception):
    """A signature that does not verify (the message is go-jose's)."""


def b64encode(data: bytes) -> str:
    """``base64.RawURLEncoding``."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64decode(text: str) -> bytes:
    """``base64.RawURLEncoding.DecodeString``: the URL alphabet, no padding; ValueError
    for anything else."""
    if "=" in text:
        raise ValueError("padding is not allowed")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError) as e:
        raise ValueError(str(e)) from None


def key_id(public_key: PublicKey) -> str:
    """``keyIDFromPublicKey``: base64url of the SHA-256 of the key's PKIX DER, so that the
    key cannot be recovered from its id."""
    der = public_key.public_bytes(serialization.Encoding.DER,
                                  serialization.PublicFormat.SubjectPublicKeyInfo)
    return b64encode(hashlib.sha256(der).digest())


def algorithm(key: PrivateKey | PublicKey) -> str:
    """``signerFromRSAPrivateKey`` / ``signerFromECDSAPrivateKey``: RS256 for RSA, ES256,
    ES384 or ES512 by the curve."""
    if isinstance(key, (rsa.RSAPrivateKey, rsa.RSAPublicKey)):
        return "RS256"
    found = _EC_ALGORITHMS.get(key.curve.name)
    if found is None:
        raise ValueError("unknown private key curve, must be 256, 384, or 521")
    return found[0]


def dumps(value: Mapping[str, Any]) -> bytes:
    """JSON as ``encoding/json`` writes a map: keys sorted, no spaces."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def sign(private_key: PrivateKey, claims: Mapping[str, Any]) -> str:
    """The compact JWS of ``claims``, headed ``{"alg": ..., "kid": ...}`` as go-jose
    heads it."""
    alg = algorithm(private_key)
    header = {"alg": alg, "kid": key_id(private_key.public_key())}
    signing_input = f"{b64encode(orjson.dumps(header))}.{b64encode(dumps(claims))}"
    data = signing_input.encode("ascii")
    if isinstance(private_key, rsa.RSAPrivateKey):
        signature = private_key.sign(data, padding.PKCS1v15(), hashes.SHA256())
    else:
        _, digest = _EC_ALGORITHMS[private_key.curve.name]
        r, s = decode_dss_signature(private_key.sign(data, ec.ECDSA(digest)))
        size = (private_key.curve.key_size + 7) // 8
        signature = r.to_bytes(size, "big") + s.to_bytes(size, "big")
    return f"{signing_input}.{b64encode(signature)}"


@dataclass(frozen=True)
class SignedToken:
    """A parsed, not yet verified, compact JWS (``jwt.ParseSigned``)."""

    header: dict[str, Any]
    payload: bytes
    signing_input: bytes
    signature: bytes

    @property
    def key_id(self) -> str:
        kid = self.header.get("kid")
        return kid if isinstance(kid, str) else ""

    def claims(self) -> dict[str, Any]:
        """The payload as a JSON object ({} when it is something else)."""
        value = orjson.loads(self.payload)
        return value if isinstance(value, dict) else {}


def parse_signed(token: str) -> SignedToken | None:
    """The three parts of a compact JWS, or None when ``token`` is not one."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        header = orjson.loads(b64decode(parts[0]))
        payload, signature = b64decode(parts[1]), b64decode(parts[2])
    except (ValueError, orjson.JSONDecodeError):
        return None
    if not isinstance(header, dict) or not isinstance(header.get("alg"), str):
        return None
    return SignedToken(header, payload, f"{parts[0]}.{parts[1]}".encode("ascii"), signature)


def unverified_claims(token: str) -> dict[str, Any] | None:
    """The payload of a compact JWS read without verifying it (``hasCorrectIssuer``
    reads ``iss`` so): None for a JSON serialization or anything not three parts."""
    if token.strip().startswith("{"):
        return None
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        value = orjson.loads(b64decode(parts[1]))
    except (ValueError, orjson.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


def verify(token: SignedToken, public_key: PublicKey) -> None:
    """Check ``token``'s signature with ``public_key``; raise ``JWSError`` with go-jose's
    message when the algorithm is not the key's or the signature is wrong."""
    alg = token.header.get("alg")
    if alg != algorithm(public_key):
        raise JWSError(ERR_UNSUPPORTED_ALGORITHM)
    try:
        if isinstance(public_key, rsa.RSAPublicKey):
            public_key.verify(token.signature, token.signing_input, padding.PKCS1v15(),
                              hashes.SHA256())
            return
        size = (public_key.curve.key_size + 7) // 8
        if len(token.signature) != 2 * size:
            raise JWSError(ERR_CRYPTO_FAILURE)
        r = int.from_bytes(token.signature[:size], "big")
        s = int.from_bytes(token.signature[size:], "big")
        _, digest = _EC_ALGORITHMS[public_key.curve.name]
        public_key.verify(encode_dss_signature(r, s), token.signing_input, ec.ECDSA(digest))
    except InvalidSignature:
        raise JWSError(ERR_CRYPTO_FAILURE) from None
