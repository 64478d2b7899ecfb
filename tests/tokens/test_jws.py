"""Compact JWS on ``cryptography`` (kubegc.tokens.jws): what go-jose signs
and refuses, as upstream's jwt_test.go exercises it through the generator."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from kubegc.tokens.jws import (
    ERR_CRYPTO_FAILURE,
    ERR_UNSUPPORTED_ALGORITHM,
    JWSError,
    b64decode,
    key_id,
    parse_signed,
    sign,
    unverified_claims,
    verify,
)
from kubegc.tokens.keys import ServiceAccountKey, generate_key, private_key_pem

RSA = generate_key()
EC = ec.generate_private_key(ec.SECP256R1())


def _segment(token: str, i: int) -> dict:
    return json.loads(b64decode(token.split(".")[i]))


@pytest.mark.parametrize("key, alg", [(RSA, "RS256"), (EC, "ES256")], ids=["rsa", "ec"])
def test_a_signed_token_verifies_with_its_key_and_is_headed_as_go_jose_heads_it(
        key: object, alg: str) -> None:
    token = sign(key, {"sub": "x", "aud": ["a"], "exp": 2})  # type: ignore[arg-type]
    header = _segment(token, 0)
    assert list(header) == ["alg", "kid"] and header["alg"] == alg
    assert header["kid"] == key_id(key.public_key())  # type: ignore[attr-defined]
    # keys sorted, no spaces: encoding/json of a map
    assert b64decode(token.split(".")[1]) == b'{"aud":["a"],"exp":2,"sub":"x"}'
    signed = parse_signed(token)
    assert signed is not None
    verify(signed, key.public_key())  # type: ignore[attr-defined]


def test_the_key_id_is_the_sha256_of_the_pkix_der() -> None:
    der = RSA.public_key().public_bytes(serialization.Encoding.DER,
                                        serialization.PublicFormat.SubjectPublicKeyInfo)
    expected = base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()
    assert key_id(RSA.public_key()) == expected


def test_a_changed_payload_or_another_key_fails_as_go_jose_fails() -> None:
    token = sign(RSA, {"sub": "me"})
    head, _, sig = token.split(".")
    payload = base64.urlsafe_b64encode(b'{"sub":"you"}').rstrip(b"=").decode()
    forged = f"{head}.{payload}.{sig}"
    signed = parse_signed(forged)
    assert signed is not None
    with pytest.raises(JWSError, match=ERR_CRYPTO_FAILURE):
        verify(signed, RSA.public_key())
    with pytest.raises(JWSError, match=ERR_CRYPTO_FAILURE):
        verify(parse_signed(token), generate_key().public_key())  # type: ignore[arg-type]
    with pytest.raises(JWSError, match=ERR_UNSUPPORTED_ALGORITHM):
        verify(parse_signed(token), EC.public_key())  # type: ignore[arg-type]


@pytest.mark.parametrize("text", [
    "", "a.b", "a.b.c.d", "!!.e30.e30", "e30.e30=.e30", "W10.e30.e30",
], ids=["empty", "two-parts", "four-parts", "bad-alphabet", "padding", "header-not-object"])
def test_what_is_not_a_compact_jws_is_not_parsed(text: str) -> None:
    assert parse_signed(text) is None


def test_unverified_claims_read_the_payload_only_of_a_compact_jws() -> None:
    token = sign(RSA, {"iss": "me"})
    assert unverified_claims(token) == {"iss": "me"}
    assert unverified_claims('{"payload": "x"}') is None
    assert unverified_claims("x.y") is None


def test_a_key_kept_as_pem_is_the_same_key_and_is_never_printed() -> None:
    kept = ServiceAccountKey(private_key_pem(RSA))
    assert kept.key_id == key_id(RSA.public_key())
    assert "PRIVATE" not in repr(kept)
    lazy = ServiceAccountKey()
    assert lazy.key_id == lazy.key_id and len(lazy.pem()) > 1000
