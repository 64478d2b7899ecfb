"""The claims of a bound ServiceAccount token and their validation (cf.
pkg/serviceaccount/claims.go ``Claims`` and ``validator.Validate``).

A token names its ServiceAccount (``sub``, ``kubernetes.io.serviceaccount``) with the uid
it had, and optionally the Pod, Secret or Node it is bound to: it is valid while it has
not expired and all of those still exist with those uids (and are not deleted for longer
than the leeway).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from kubegc.api.auth import UserInfo, service_account_user, service_account_username
from kubegc.api.authenticator import AuthenticationError
from kubegc.api.clock import Clock, parse_time
from kubegc.api.errors import StatusError
from kubegc.api.types import Obj

#: a pod-bound token asked for this long (the kubelet's default) is extended to
#: ``EXPIRATION_EXTENSION_SECONDS`` and only warned about after it (upstream's
#: ``WarnOnlyBoundTokenExpirationSeconds``, ``--service-account-extend-token-expiration``)
WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS = 60 * 60 + 7
EXPIRATION_EXTENSION_SECONDS = 24 * 365 * 60 * 60
#: go-jose's ``jwt.DefaultLeeway``: clock skew allowed on exp, nbf, iat and deletions
LEEWAY = timedelta(minutes=1)

#: ``k8s.io/apiserver/pkg/authentication/serviceaccount``: the extra keys of a token's user
POD_NAME_KEY = "authentication.kubernetes.io/pod-name"
POD_UID_KEY = "authentication.kubernetes.io/pod-uid"
NODE_NAME_KEY = "authentication.kubernetes.io/node-name"
NODE_UID_KEY = "authentication.kubernetes.io/node-uid"
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"

INVALIDATED = "service account token has been invalidated"


def _ref(obj: Obj) -> dict[str, str]:
    meta = obj.get("metadata") or {}
    ref = {"name": str(meta.get("name") or "")}
    if meta.get("uid"):
        ref["uid"] = str(meta["uid"])
    return ref


def claims(service_account: Obj, *, expiration_seconds: int, audiences: Sequence[str],
           now: datetime, pod: Obj | None = None, secret: Obj | None = None,
           node: Obj | None = None, warn_after: int = 0, jti: str | None = None) -> dict[str, Any]:
    """``Claims``: the payload of a token for ``service_account`` (``iss`` is the
    generator's), bound to at most one of a pod (with its node, when the pod has one), a
    secret or a node."""
    if secret is not None and (pod is not None or node is not None):
        raise ValueError("internal error, token can only be bound to one object type")
    meta = service_account.get("metadata") or {}
    namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    issued = int(now.timestamp())
    private: dict[str, Any] = {"namespace": namespace,
                               "serviceaccount": _ref(service_account)}
    if pod is not None:
        private["pod"] = _ref(pod)
        if node is not None:
            private["node"] = _ref(node)
    elif secret is not None:
        private["secret"] = _ref(secret)
    elif node is not None:
        private["node"] = _ref(node)
    if warn_after:
        private["warnafter"] = issued + warn_after
    return {
        "aud": list(audiences), "exp": issued + expiration_seconds, "iat": issued,
        "jti": jti if jti is not None else str(uuid.uuid4()),
        "kubernetes.io": private, "nbf": issued,
        "sub": service_account_username(namespace, name),
    }


@dataclass(frozen=True)
class ServiceAccountInfo:
    """``serviceaccount.ServiceAccountInfo``: who a valid token stands for."""

    namespace: str
    name: str
    uid: str
    pod_name: str = ""
    pod_uid: str = ""
    node_name: str = ""
    node_uid: str = ""
    credential_id: str = ""

    def user_info(self) -> UserInfo:
        """``ServiceAccountInfo.UserInfo``: ``system:serviceaccount:NS:NAME`` in the
        ServiceAccount groups, with the pod, node and credential it was bound to."""
        extra: dict[str, tuple[str, ...]] = {}
        if self.pod_name and self.pod_uid:
            extra[POD_NAME_KEY], extra[POD_UID_KEY] = (self.pod_name,), (self.pod_uid,)
        if self.credential_id:
            extra[CREDENTIAL_ID_KEY] = (self.credential_id,)
        if self.node_name:
            extra[NODE_NAME_KEY] = (self.node_name,)
            if self.node_uid:
                extra[NODE_UID_KEY] = (self.node_uid,)
        user = service_account_user(self.namespace, self.name, self.uid)
        return UserInfo(user.name, uid=user.uid, groups=user.groups, extra=extra)


def credential_id_for_jti(jti: str) -> str:
    """``jwt.CredentialIDForJTI``."""
    return f"JTI={jti}" if jti else ""


class ServiceAccountTokenGetter(Protocol):
    """``ServiceAccountTokenGetter``: the live objects a token names; each raises the
    API's ``StatusError`` (404 NotFound) when the object is not there."""

    async def get_service_account(self, namespace: str, name: str) -> Obj: ...

    async def get_pod(self, namespace: str, name: str) -> Obj: ...

    async def get_secret(self, namespace: str, name: str) -> Obj: ...

    async def get_node(self, name: str) -> Obj: ...


class Validator(Protocol):
    """``Validator``: the checks after the signature, issuer and audiences; the token's
    ServiceAccount, or ``AuthenticationError`` with upstream's message."""

    async def validate(self, token: str, claims: Mapping[str, Any]) -> ServiceAccountInfo: ...


def _time(value: Any) -> datetime | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return datetime.fromtimestamp(value, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _check_times(claims: Mapping[str, Any], now: datetime) -> None:
    """go-jose's ``Claims.Validate`` with its default leeway."""
    not_before, expiry, issued = (_time(claims.get(k)) for k in ("nbf", "exp", "iat"))
    if not_before is not None and now + LEEWAY < not_before:
        raise AuthenticationError("service account token is not valid yet")
    if expiry is not None and now - LEEWAY > expiry:
        raise AuthenticationError("service account token has expired")
    if issued is not None and now + LEEWAY < issued:
        raise AuthenticationError("service account token is issued in the future")


def _deleted_before(obj: Obj, cutoff: datetime) -> bool:
    stamp = (obj.get("metadata") or {}).get("deletionTimestamp")
    if not isinstance(stamp, str):
        return False
    try:
        return parse_time(stamp) < cutoff
    except ValueError:
        return False


def _uid(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _refs(claims: Mapping[str, Any]) -> tuple[str, dict[str, dict[str, str]]]:
    """The namespace and the name/uid references of the ``kubernetes.io`` claim."""
    private = claims.get("kubernetes.io")
    if not isinstance(private, dict):
        private = {}
    refs: dict[str, dict[str, str]] = {}
    for kind in ("serviceaccount", "pod", "secret", "node"):
        ref = private.get(kind)
        if isinstance(ref, dict):
            refs[kind] = {k: str(ref.get(k) or "") for k in ("name", "uid")}
    return str(private.get("namespace") or ""), refs


@dataclass
class BoundValidator:
    """``validator``: the token is in time, and what it is bound to still exists with the
    uid it names, not deleted for longer than the leeway."""

    getter: ServiceAccountTokenGetter
    clock: Clock

    async def validate(self, token: str, claims: Mapping[str, Any]) -> ServiceAccountInfo:
        now = self.clock.now()
        _check_times(claims, now)
        cutoff = now - LEEWAY
        namespace, refs = _refs(claims)
        sa_ref = refs.get("serviceaccount", {"name": "", "uid": ""})
        try:
            service_account = await self.getter.get_service_account(namespace, sa_ref["name"])
        except StatusError as err:
            raise AuthenticationError(err.message) from None
        if _uid(service_account) != sa_ref["uid"]:
            raise AuthenticationError(f"service account UID ({_uid(service_account)}) does "
                                      f"not match claim ({sa_ref['uid']})")
        if _deleted_before(service_account, cutoff):
            raise AuthenticationError(
                f"service account {namespace}/{sa_ref['name']} has been deleted")
        if "secret" in refs:
            await self._check_bound(self.getter.get_secret(namespace, refs["secret"]["name"]),
                                    refs["secret"]["uid"], cutoff,
                                    "secret UID ({}) does not match service account secret "
                                    "ref claim ({})")
        info = ServiceAccountInfo(namespace, sa_ref["name"], sa_ref["uid"],
                                  credential_id=credential_id_for_jti(str(claims.get("jti")
                                                                          or "")))
        if "pod" in refs:
            pod = refs["pod"]
            await self._check_bound(self.getter.get_pod(namespace, pod["name"]), pod["uid"],
                                    cutoff, "pod UID ({}) does not match service account pod "
                                            "ref claim ({})")
            node = refs.get("node", {"name": "", "uid": ""})
            return ServiceAccountInfo(namespace, sa_ref["name"], sa_ref["uid"], pod["name"],
                                      pod["uid"], node["name"], node["uid"],
                                      info.credential_id)
        if "node" in refs:
            node = refs["node"]
            await self._check_bound(self.getter.get_node(node["name"]), node["uid"], cutoff,
                                    "node UID ({}) does not match service account node ref "
                                    "claim ({})")
            return ServiceAccountInfo(namespace, sa_ref["name"], sa_ref["uid"],
                                      node_name=node["name"], node_uid=node["uid"],
                                      credential_id=info.credential_id)
        return info

    @staticmethod
    async def _check_bound(lookup: Awaitable[Obj], uid: str, cutoff: datetime,
                           mismatch: str) -> None:
        """The bound object exists with ``uid`` and is not deleted since before
        ``cutoff``."""
        try:
            obj = await lookup
        except StatusError:
            raise AuthenticationError(INVALIDATED) from None
        if _uid(obj) != uid:
            raise AuthenticationError(mismatch.format(_uid(obj), uid))
        if _deleted_before(obj, cutoff):
            raise AuthenticationError(INVALIDATED)
