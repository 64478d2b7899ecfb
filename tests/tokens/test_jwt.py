"""``JWTTokenAuthenticator`` and ``LegacyValidator`` (cf. upstream's jwt_test.go
``TestTokenGenerateAndValidate`` and legacy_test.go): which tokens are ours, their
signature, issuer and audiences, and legacy tokens living as long as their Secret."""

from __future__ import annotations

import base64

import pytest

from kubegc.api.authenticator import AuthenticationError, with_audiences
from kubegc.api.clock import ManualClock
from kubegc.tokens import (
    LEGACY_ISSUER,
    BoundValidator,
    JWTTokenAuthenticator,
    JWTTokenGenerator,
    LegacyValidator,
    ServiceAccountKey,
    claims,
    legacy_claims,
)
from kubegc.tokens.jws import sign
from kubegc.tokens.legacy import INVALID_SINCE_LABEL_KEY, LAST_USED_LABEL_KEY

from .conftest import NOW, FakeGetter, obj

ISSUER = "https://kubegc.test"
KEY = ServiceAccountKey()
SA = obj("ServiceAccount", "robot", "sa-1")


def bound_authenticator(getter: FakeGetter, key: ServiceAccountKey = KEY
                        ) -> JWTTokenAuthenticator:
    return JWTTokenAuthenticator([ISSUER], [key], (ISSUER,),
                                 BoundValidator(getter, ManualClock(NOW)))


def bound_token(audiences: list[str], key: ServiceAccountKey = KEY) -> str:
    return JWTTokenGenerator(ISSUER, key).generate_token(
        claims(SA, expiration_seconds=600, audiences=audiences, now=NOW, jti="j"))


async def test_a_token_of_another_issuer_or_not_a_jwt_is_not_ours() -> None:
    authenticator = bound_authenticator(FakeGetter())
    other = JWTTokenGenerator("https://elsewhere", KEY).generate_token({"sub": "x"})
    for token in (other, "plain-token", "a.b.c"):
        assert await authenticator.authenticate_token(token) is None


async def test_an_api_audience_token_authenticates_for_the_api_audiences_only() -> None:
    getter = FakeGetter()
    getter.add("serviceaccounts", SA)
    authenticator = bound_authenticator(getter)
    answer = await authenticator.authenticate_token(bound_token([ISSUER, "vault"]))
    assert answer is not None and answer.audiences == (ISSUER,)
    assert answer.user.name == "system:serviceaccount:ns:robot"
    with with_audiences(("vault",)):
        answer = await authenticator.authenticate_token(bound_token([ISSUER, "vault"]))
        assert answer is not None and answer.audiences == ("vault",)
    with pytest.raises(AuthenticationError, match=r'^token audiences \["vault"\] is invalid '
                                                  r'for the target audiences '
                                                  r'\["https://kubegc.test"\]$'):
        await authenticator.authenticate_token(bound_token(["vault"]))


async def test_a_token_signed_by_another_key_is_refused() -> None:
    getter = FakeGetter()
    getter.add("serviceaccounts", SA)
    with pytest.raises(AuthenticationError, match=r"^invalid signature, no keys found$"):
        await bound_authenticator(getter).authenticate_token(
            bound_token([ISSUER], ServiceAccountKey()))
    # without a kid every key is tried
    unnamed = sign(ServiceAccountKey().private_key, {"iss": ISSUER}).split(".")
    header = base64.urlsafe_b64encode(b'{"alg":"RS256"}').rstrip(b"=").decode()
    with pytest.raises(AuthenticationError, match="error in cryptographic primitive"):
        await bound_authenticator(getter).authenticate_token(
            ".".join([header, unnamed[1], unnamed[2]]))


# -- legacy tokens ----------------------------------------------------------------------


def legacy_secret(token: str, **labels: str) -> dict:
    return obj("Secret", "robot-token", "secret-1", metadata={"labels": labels},
               type="kubernetes.io/service-account-token",
               data={"token": base64.b64encode(token.encode()).decode()})


def legacy_setup(**labels: str) -> tuple[JWTTokenAuthenticator, FakeGetter, str]:
    getter = FakeGetter()
    getter.add("serviceaccounts", SA)
    token = JWTTokenGenerator(LEGACY_ISSUER, KEY).generate_token(
        legacy_claims(SA, obj("Secret", "robot-token", "secret-1")))
    getter.add("secrets", legacy_secret(token, **labels))
    authenticator = JWTTokenAuthenticator([LEGACY_ISSUER], [KEY], (ISSUER,),
                                          LegacyValidator(getter, ManualClock(NOW), getter))
    return authenticator, getter, token


async def test_a_legacy_token_lives_with_its_secret_and_marks_the_day_it_is_used() -> None:
    authenticator, getter, token = legacy_setup()
    answer = await authenticator.authenticate_token(token)
    assert answer is not None and answer.audiences == (ISSUER,)
    assert answer.user.name == "system:serviceaccount:ns:robot" and not answer.user.extra
    assert getter.labelled == [("ns", "robot-token", "secret-1",
                                {LAST_USED_LABEL_KEY: "2026-01-01"})]
    getter.remove("secrets", "ns", "robot-token")
    with pytest.raises(AuthenticationError, match=r"^Token has been invalidated$"):
        await authenticator.authenticate_token(token)


async def test_a_legacy_token_refused_for_its_secret_or_account() -> None:
    authenticator, getter, token = legacy_setup(**{LAST_USED_LABEL_KEY: "2026-01-01"})
    assert await authenticator.authenticate_token(token) is not None
    assert getter.labelled == []  # already marked today
    getter.add("secrets", legacy_secret("another"))
    with pytest.raises(AuthenticationError, match=r"^Token does not match server's copy$"):
        await authenticator.authenticate_token(token)
    getter.add("secrets", legacy_secret(token, **{INVALID_SINCE_LABEL_KEY: "2025-01-01"}))
    with pytest.raises(AuthenticationError, match="has been marked invalid"):
        await authenticator.authenticate_token(token)
    getter.add("secrets", legacy_secret(token))
    getter.add("serviceaccounts", obj("ServiceAccount", "robot", "sa-2"))
    with pytest.raises(AuthenticationError,
                       match=r"^ServiceAccount UID \(sa-2\) does not match claim \(sa-1\)$"):
        await authenticator.authenticate_token(token)


async def test_a_legacy_token_missing_a_claim_is_refused() -> None:
    authenticator, _, _ = legacy_setup()
    token = JWTTokenGenerator(LEGACY_ISSUER, KEY).generate_token(
        {"sub": "system:serviceaccount:ns:robot"})
    with pytest.raises(AuthenticationError, match=r"^namespace claim is missing$"):
        await authenticator.authenticate_token(token)
