"""Legacy ServiceAccount tokens: the never-expiring tokens the tokens controller writes
into ``kubernetes.io/service-account-token`` Secrets (cf. pkg/serviceaccount/legacy.go
``LegacyClaims`` and ``legacyValidator.Validate``).

Such a token is valid while its Secret exists, is not being deleted and still holds that
very token, and while its ServiceAccount exists with the uid it names: deleting the Secret
revokes it. A Secret labelled ``kubernetes.io/legacy-token-invalid-since`` refuses its
token; a valid use labels the Secret ``kubernetes.io/legacy-token-last-used`` with the
day (at most once a day), as upstream since 1.29.
"""

from __future__ import annotations

import base64
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

from kubegc.api.auth import service_account_username, split_service_account_username
from kubegc.api.authenticator import AuthenticationError
from kubegc.api.clock import Clock
from kubegc.api.errors import StatusError
from kubegc.api.types import Obj
from kubegc.tokens.claims import (
    ServiceAccountInfo,
    ServiceAccountTokenGetter,
)

LEGACY_ISSUER = "kubernetes/serviceaccount"
LAST_USED_LABEL_KEY = "kubernetes.io/legacy-token-last-used"
INVALID_SINCE_LABEL_KEY = "kubernetes.io/legacy-token-invalid-since"

#: core/v1 constants of a ServiceAccount token Secret
SECRET_TYPE_SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"
SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name"
SERVICE_ACCOUNT_UID_KEY = "kubernetes.io/service-account.uid"
SERVICE_ACCOUNT_TOKEN_KEY = "token"
SERVICE_ACCOUNT_ROOT_CA_KEY = "ca.crt"
SERVICE_ACCOUNT_NAMESPACE_KEY = "namespace"

_NAMESPACE = "kubernetes.io/serviceaccount/namespace"
_SECRET_NAME = "kubernetes.io/serviceaccount/secret.name"
_SA_NAME = "kubernetes.io/serviceaccount/service-account.name"
_SA_UID = "kubernetes.io/serviceaccount/service-account.uid"


def legacy_claims(service_account: Obj, secret: Obj) -> dict[str, Any]:
    """``LegacyClaims``: a token for ``service_account`` kept in ``secret`` (``iss`` is
    the generator's; no audience and no expiry)."""
    meta = service_account.get("metadata") or {}
    namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    return {
        _NAMESPACE: namespace,
        _SECRET_NAME: str((secret.get("metadata") or {}).get("name") or ""),
        _SA_NAME: name,
        _SA_UID: str(meta.get("uid") or ""),
        "sub": service_account_username(namespace, name),
    }


class SecretsWriter(Protocol):
    """Labels a Secret (a merge patch with a uid precondition); failures are the
    writer's to log, never the request's."""

    async def label_secret(self, namespace: str, name: str, uid: str,
                           labels: Mapping[str, str]) -> None: ...


def _claim(claims: Mapping[str, Any], key: str) -> str:
    value = claims.get(key)
    return value if isinstance(value, str) else ""


def _required(claims: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """The namespace, secret name, ServiceAccount name and uid; the first missing one
    (or a ``sub`` that is not theirs) is refused with upstream's message."""
    subject = _claim(claims, "sub")
    if not subject:
        raise AuthenticationError("sub claim is missing")
    fields = [(_claim(claims, key), what) for key, what in (
        (_NAMESPACE, "namespace"), (_SECRET_NAME, "secretName"),
        (_SA_NAME, "serviceAccountName"), (_SA_UID, "serviceAccountUID"))]
    for value, what in fields:
        if not value:
            raise AuthenticationError(f"{what} claim is missing")
    namespace, secret_name, sa_name, sa_uid = (value for value, _ in fields)
    if split_service_account_username(subject) != (namespace, sa_name):
        raise AuthenticationError("sub claim is invalid")
    return namespace, secret_name, sa_name, sa_uid


@dataclass
class LegacyValidator:
    """``legacyValidator`` with lookup (kube-apiserver's ``--service-account-lookup``,
    on by default)."""

    getter: ServiceAccountTokenGetter
    clock: Clock
    secrets_writer: SecretsWriter | None = None

    async def validate(self, token: str, claims: Mapping[str, Any]) -> ServiceAccountInfo:
        namespace, secret_name, sa_name, sa_uid = _required(claims)
        secret = await self._secret_holding(token, namespace, secret_name)
        try:
            service_account = await self.getter.get_service_account(namespace, sa_name)
        except StatusError as err:
            raise AuthenticationError(err.message) from None
        sa_meta = service_account.get("metadata") or {}
        if sa_meta.get("deletionTimestamp"):
            raise AuthenticationError(f"ServiceAccount {namespace}/{sa_name} has been deleted")
        if str(sa_meta.get("uid") or "") != sa_uid:
            raise AuthenticationError(f"ServiceAccount UID ({sa_meta.get('uid') or ''}) does "
                                      f"not match claim ({sa_uid})")
        labels = (secret.get("metadata") or {}).get("labels") or {}
        if labels.get(INVALID_SINCE_LABEL_KEY):
            await self._mark_used(secret)
            raise AuthenticationError(
                f"the token in secret {namespace}/{secret_name} for service account "
                f"{namespace}/{sa_name} has been marked invalid. Use tokens from the "
                "TokenRequest API or manually created secret-based tokens, or remove the "
                f"'{INVALID_SINCE_LABEL_KEY}' label from the secret to temporarily allow use "
                "of this token")
        await self._mark_used(secret)
        return ServiceAccountInfo(namespace, sa_name, sa_uid)

    async def _secret_holding(self, token: str, namespace: str, name: str) -> Obj:
        """The Secret, still there, not being deleted, and holding ``token``."""
        try:
            secret = await self.getter.get_secret(namespace, name)
        except StatusError:
            raise AuthenticationError("Token has been invalidated") from None
        if (secret.get("metadata") or {}).get("deletionTimestamp"):
            raise AuthenticationError("Token has been invalidated")
        stored = ((secret.get("data") or {}).get(SERVICE_ACCOUNT_TOKEN_KEY) or "")
        if not isinstance(stored, str) or not hmac.compare_digest(
                stored.encode(), _b64(token).encode()):
            raise AuthenticationError("Token does not match server's copy")
        return secret

    async def _mark_used(self, secret: Obj) -> None:
        """``patchSecretWithLastUsedDate``: today's date, unless today's or tomorrow's
        (a clock running behind another server's) is already there."""
        if self.secrets_writer is None:
            return
        now = self.clock.now()
        today = now.strftime("%Y-%m-%d")
        tomorrow = (now + timedelta(days=1)).strftime("%Y-%m-%d")
        meta = secret.get("metadata") or {}
        if (meta.get("labels") or {}).get(LAST_USED_LABEL_KEY) in (today, tomorrow):
            return
        await self.secrets_writer.label_secret(str(meta.get("namespace") or ""),
                                               str(meta.get("name") or ""),
                                               str(meta.get("uid") or ""),
                                               {LAST_USED_LABEL_KEY: today})


def _b64(token: str) -> str:
    """The token as a Secret's ``data`` holds it (base64 of its bytes)."""
    return base64.b64encode(token.encode()).decode("ascii")
