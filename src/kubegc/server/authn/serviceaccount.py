"""The ServiceAccount token authenticators (cf. pkg/kubeapiserver/authenticator/config.go
``newLegacyServiceAccountAuthenticator`` and ``newServiceAccountAuthenticator``, and the
``ServiceAccountTokenGetter`` kube-apiserver builds over its storage).

Two JWT authenticators on the one ServiceAccount key, in upstream's order: legacy tokens
(issuer ``kubernetes/serviceaccount``, kept in Secrets) and bound tokens (the
``--service-account-issuer``). Their lookups read the registry as it is now, so that
deleting a ServiceAccount, a bound Pod or a token Secret revokes its tokens at once
(upstream caches a successful authentication for up to 10 s).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import orjson

from kubegc.api.authenticator import Audiences, Response
from kubegc.api.clock import Clock
from kubegc.api.errors import StatusError
from kubegc.api.types import Obj
from kubegc.registry import Registry
from kubegc.server.authn import TokenAuthenticator
from kubegc.tokens import (
    LEGACY_ISSUER,
    BoundValidator,
    JWTTokenAuthenticator,
    LegacyValidator,
    ServiceAccountKey,
)

log = logging.getLogger(__name__)

MERGE_PATCH = "application/merge-patch+json"


class RegistryTokenGetter:
    """``ServiceAccountTokenGetter`` and ``SecretsWriter`` over the registry (the
    apiserver's own, unchecked access)."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def get_service_account(self, namespace: str, name: str) -> Obj:
        return await self.registry.get_core("serviceaccounts", namespace, name)

    async def get_pod(self, namespace: str, name: str) -> Obj:
        return await self.registry.get_core("pods", namespace, name)

    async def get_secret(self, namespace: str, name: str) -> Obj:
        return await self.registry.get_core("secrets", namespace, name)

    async def get_node(self, name: str) -> Obj:
        return await self.registry.get_core("nodes", "", name)

    async def label_secret(self, namespace: str, name: str, uid: str,
                           labels: Mapping[str, str]) -> None:
        """A merge patch of ``labels`` onto the Secret with uid ``uid``; a failure is
        logged, never the request's."""
        body = orjson.dumps({"metadata": {"uid": uid, "labels": dict(labels)}})
        try:
            await self.registry.patch(self.registry.target("", "v1", "secrets", namespace),
                                      name, MERGE_PATCH, body)
        except StatusError as err:
            log.warning("Failed to label legacy service account token %s/%s with last-used "
                        "date, err: %s", namespace, name, err.message)


def _token_authenticator(authenticator: JWTTokenAuthenticator) -> TokenAuthenticator:
    async def authenticate(token: str) -> Response | None:
        return await authenticator.authenticate_token(token)

    return authenticate


def service_account_authenticators(registry: Registry, key: ServiceAccountKey, *,
                                   issuer: str, api_audiences: Audiences,
                                   clock: Clock) -> list[TokenAuthenticator]:
    """The legacy and the bound ServiceAccount token authenticators, in that order."""
    getter = RegistryTokenGetter(registry)
    legacy = JWTTokenAuthenticator([LEGACY_ISSUER], [key], api_audiences,
                                   LegacyValidator(getter, clock, getter))
    bound = JWTTokenAuthenticator([issuer], [key], api_audiences,
                                  BoundValidator(getter, clock))
    return [_token_authenticator(legacy), _token_authenticator(bound)]
