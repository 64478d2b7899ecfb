"""Bound token claims and ``BoundValidator`` (cf. upstream's claims_test.go
``TestClaims`` and ``TestValidatePrivateClaims``): what a token says, and which changes
of the world revoke it, with go-jose's one-minute leeway."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kubegc.api.authenticator import AuthenticationError
from kubegc.api.clock import ManualClock, format_time
from kubegc.tokens.claims import (
    CREDENTIAL_ID_KEY,
    NODE_NAME_KEY,
    NODE_UID_KEY,
    POD_NAME_KEY,
    POD_UID_KEY,
    BoundValidator,
    claims,
)

from .conftest import NOW, FakeGetter, obj

SA = obj("ServiceAccount", "robot", "sa-1")
POD = obj("Pod", "web", "pod-1", spec={"serviceAccountName": "robot"})
NODE = obj("Node", "n1", "node-1", namespace="")
SECRET = obj("Secret", "s", "secret-1")


def test_claims_name_the_service_account_and_what_the_token_is_bound_to() -> None:
    payload = claims(SA, expiration_seconds=600, audiences=["api"], now=NOW, pod=POD,
                     node=NODE, warn_after=3607, jti="j")
    issued = int(NOW.timestamp())
    assert payload == {
        "aud": ["api"], "exp": issued + 600, "iat": issued, "jti": "j", "nbf": issued,
        "sub": "system:serviceaccount:ns:robot",
        "kubernetes.io": {"namespace": "ns", "serviceaccount": {"name": "robot", "uid": "sa-1"},
                          "pod": {"name": "web", "uid": "pod-1"},
                          "node": {"name": "n1", "uid": "node-1"},
                          "warnafter": issued + 3607}}
    assert claims(SA, expiration_seconds=1, audiences=[], now=NOW, secret=SECRET)[
        "kubernetes.io"]["secret"] == {"name": "s", "uid": "secret-1"}
    with pytest.raises(ValueError, match="only be bound to one object type"):
        claims(SA, expiration_seconds=1, audiences=[], now=NOW, pod=POD, secret=SECRET)


def world(*objects: tuple[str, dict]) -> FakeGetter:
    getter = FakeGetter()
    for resource, o in objects:
        getter.add(resource, o)
    return getter


async def validate(getter: FakeGetter, payload: dict, *, at: timedelta = timedelta()) -> object:
    return await BoundValidator(getter, ManualClock(NOW + at)).validate("t", payload)


def token(**bound: dict) -> dict:
    return claims(SA, expiration_seconds=600, audiences=["api"], now=NOW, jti="j", **bound)


async def test_a_valid_token_is_its_service_account_with_pod_node_and_credential() -> None:
    getter = world(("serviceaccounts", SA), ("pods", POD))
    info = await validate(getter, token(pod=POD, node=NODE))
    user = info.user_info()  # type: ignore[attr-defined]
    assert user.name == "system:serviceaccount:ns:robot" and user.uid == "sa-1"
    assert user.groups == ("system:serviceaccounts", "system:serviceaccounts:ns",
                           "system:authenticated")
    assert dict(user.extra) == {POD_NAME_KEY: ("web",), POD_UID_KEY: ("pod-1",),
                                CREDENTIAL_ID_KEY: ("JTI=j",), NODE_NAME_KEY: ("n1",),
                                NODE_UID_KEY: ("node-1",)}


@pytest.mark.parametrize("at, message", [
    (timedelta(seconds=600 + 59), None),
    (timedelta(seconds=600 + 61), "service account token has expired"),
    (timedelta(seconds=-59), None),
    (timedelta(seconds=-61), "service account token is not valid yet"),
], ids=["expired-within-leeway", "expired", "early-within-leeway", "not-yet-valid"])
async def test_time_is_checked_with_a_minute_of_leeway(at: timedelta,
                                                       message: str | None) -> None:
    getter = world(("serviceaccounts", SA))
    if message is None:
        await validate(getter, token(), at=at)
    else:
        with pytest.raises(AuthenticationError, match=f"^{message}$"):
            await validate(getter, token(), at=at)


def deleted(o: dict, ago: timedelta) -> dict:
    return {**o, "metadata": {**o["metadata"], "deletionTimestamp": format_time(NOW - ago)}}


@pytest.mark.parametrize("objects, bound, message", [
    ([], {}, 'serviceaccounts "robot" not found'),
    ([("serviceaccounts", obj("ServiceAccount", "robot", "sa-2"))], {},
     r"service account UID \(sa-2\) does not match claim \(sa-1\)"),
    ([("serviceaccounts", deleted(SA, timedelta(minutes=2)))], {},
     "service account ns/robot has been deleted"),
    ([("serviceaccounts", SA)], {"pod": POD}, "service account token has been invalidated"),
    ([("serviceaccounts", SA), ("pods", obj("Pod", "web", "pod-2"))], {"pod": POD},
     r"pod UID \(pod-2\) does not match service account pod ref claim \(pod-1\)"),
    ([("serviceaccounts", SA), ("pods", deleted(POD, timedelta(minutes=2)))], {"pod": POD},
     "service account token has been invalidated"),
    ([("serviceaccounts", SA)], {"secret": SECRET}, "service account token has been invalidated"),
    ([("serviceaccounts", SA), ("secrets", obj("Secret", "s", "secret-2"))], {"secret": SECRET},
     r"secret UID \(secret-2\) does not match service account secret ref claim \(secret-1\)"),
    ([("serviceaccounts", SA)], {"node": NODE}, "service account token has been invalidated"),
    ([("serviceaccounts", SA), ("nodes", obj("Node", "n1", "node-2", namespace=""))],
     {"node": NODE}, r"node UID \(node-2\) does not match service account node ref claim"),
], ids=["sa-gone", "sa-recreated", "sa-deleted", "pod-gone", "pod-recreated",
        "pod-deleted-past-leeway", "secret-gone", "secret-recreated", "node-gone",
        "node-recreated"])
async def test_what_revokes_a_token(objects: list, bound: dict, message: str) -> None:
    with pytest.raises(AuthenticationError, match=f"^{message}"):
        await validate(world(*objects), token(**bound))


async def test_a_pod_deleted_within_the_leeway_still_authenticates() -> None:
    getter = world(("serviceaccounts", SA), ("pods", deleted(POD, timedelta(seconds=30))))
    info = await validate(getter, token(pod=POD))
    assert info.pod_name == "web"  # type: ignore[attr-defined]
