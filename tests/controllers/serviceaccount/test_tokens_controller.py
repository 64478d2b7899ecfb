"""The tokens controller against ``FakeClient`` (cf. upstream's tokens_controller_test.go):
which token Secrets it fills, which it deletes, and what it leaves alone.
tests/e2e/test_serviceaccount_tokens.py drives it through kubectl and uses its tokens."""

from __future__ import annotations

import base64

from kubegc.api.clock import ManualClock
from kubegc.client.fake import FakeClient
from kubegc.component.config import ServiceAccountTokenControllerConfiguration
from kubegc.controllers.serviceaccount import TokensController
from kubegc.controllers.serviceaccount.tokens_controller import SECRETS, SERVICEACCOUNTS
from kubegc.tokens import (
    LEGACY_ISSUER,
    JWTTokenAuthenticator,
    LegacyValidator,
    ServiceAccountKey,
)

from ..workload_harness import eventually, quiet, running

KEY = ServiceAccountKey()
OPTIONS = ServiceAccountTokenControllerConfiguration(key=KEY, root_ca="--CA--")


def token_secret(name: str, account: str, **extra: object) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
            "metadata": {"name": name, "namespace": "ns",
                         "annotations": {"kubernetes.io/service-account.name": account}},
            **extra}


def account(name: str = "robot", **extra: object) -> dict:
    return {"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": name, "namespace": "ns"}, **extra}


def data(client: FakeClient, name: str) -> dict[str, str]:
    secret = client.stored(SECRETS, name, namespace="ns") or {}
    return {k: base64.b64decode(v).decode() for k, v in (secret.get("data") or {}).items()}


class Getter:
    def __init__(self, client: FakeClient) -> None:
        self.client = client

    async def get_service_account(self, namespace: str, name: str) -> dict:
        return await self.client.get(SERVICEACCOUNTS, name, namespace=namespace)

    async def get_secret(self, namespace: str, name: str) -> dict:
        return await self.client.get(SECRETS, name, namespace=namespace)

    async def get_pod(self, namespace: str, name: str) -> dict:
        raise AssertionError("not asked")

    async def get_node(self, name: str) -> dict:
        raise AssertionError("not asked")


async def test_a_token_secret_is_filled_with_a_token_that_authenticates() -> None:
    client = FakeClient()
    sa = client.add_object(SERVICEACCOUNTS, account())
    client.add_object(SECRETS, token_secret("robot-token", "robot"))
    async with running(TokensController, client, options=OPTIONS) as controller:
        await eventually(lambda: "token" in data(client, "robot-token"))
        await quiet(controller)
    filled = data(client, "robot-token")
    assert filled["ca.crt"] == "--CA--" and filled["namespace"] == "ns"
    stored = client.stored(SECRETS, "robot-token", namespace="ns")
    assert stored is not None
    assert stored["metadata"]["annotations"]["kubernetes.io/service-account.uid"] == (
        sa["metadata"]["uid"])
    authenticator = JWTTokenAuthenticator([LEGACY_ISSUER], [KEY], ("api",), LegacyValidator(
        Getter(client), ManualClock()))
    answer = await authenticator.authenticate_token(filled["token"])
    assert answer is not None and answer.user.name == "system:serviceaccount:ns:robot"


async def test_a_token_secret_of_a_missing_or_other_account_is_deleted() -> None:
    client = FakeClient()
    client.add_object(SERVICEACCOUNTS, account())
    client.add_object(SECRETS, token_secret("nobodys", "nobody"))
    other_uid = token_secret("stale", "robot")
    other_uid["metadata"]["annotations"]["kubernetes.io/service-account.uid"] = "old-uid"
    client.add_object(SECRETS, other_uid)
    client.add_object(SECRETS, {"metadata": {"name": "plain", "namespace": "ns"},
                                "type": "Opaque"})
    async with running(TokensController, client, options=OPTIONS) as controller:
        await eventually(lambda: client.stored(SECRETS, "nobodys", namespace="ns") is None
                         and client.stored(SECRETS, "stale", namespace="ns") is None)
        await quiet(controller)
    assert client.stored(SECRETS, "plain", namespace="ns") is not None


async def test_deleting_the_account_deletes_its_tokens_and_a_deleted_token_is_unlisted(
) -> None:
    client = FakeClient()
    client.add_object(SERVICEACCOUNTS, account(secrets=[{"name": "a"}, {"name": "keep"}]))
    client.add_object(SECRETS, token_secret("a", "robot"))
    client.add_object(SECRETS, token_secret("b", "robot"))
    async with running(TokensController, client, options=OPTIONS) as controller:
        await eventually(lambda: "token" in data(client, "a") and "token" in data(client, "b"))
        client.remove_object(SECRETS, "a", namespace="ns")
        await eventually(lambda: (client.stored(SERVICEACCOUNTS, "robot", namespace="ns")
                                  or {}).get("secrets") == [{"name": "keep"}])
        client.remove_object(SERVICEACCOUNTS, "robot", namespace="ns")
        await eventually(lambda: client.stored(SECRETS, "b", namespace="ns") is None)
        await quiet(controller)


async def test_without_a_key_nothing_is_done() -> None:
    client = FakeClient()
    client.add_object(SECRETS, token_secret("nobodys", "nobody"))
    async with running(TokensController, client,
                       options=ServiceAccountTokenControllerConfiguration()) as controller:
        await quiet(controller)
    assert client.stored(SECRETS, "nobodys", namespace="ns") is not None
    assert not [a for a in client.actions if not a.startswith(("list", "watch"))]
