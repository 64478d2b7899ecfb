"""The ``extension-apiserver-authentication`` ConfigMap in kube-system (cf. kube-apiserver's
pkg/controlplane/controller/clusterauthenticationtrust ``Controller.syncConfigMap``): how an
aggregated API server may authenticate the requests this server sends it.

``client-ca-file`` is the CA of the client certificates this server accepts;
``requestheader-client-ca-file`` the CA of the front proxy's certificate, with
``requestheader-allowed-names``, ``requestheader-username-headers``,
``requestheader-group-headers`` and ``requestheader-extra-headers-prefix`` (JSON lists). A
real aggregated server (``k8s.io/apiserver``'s ``DelegatingAuthenticationOptions``) reads it
to trust the requestheader headers of a verified front-proxy certificate.

As upstream, what is published is combined with what the ConfigMap already holds (several
servers on one store share it: each one's CAs and names stay), and written only when it
changes; ``run`` syncs at start and every minute.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import orjson
from cryptography import x509

from kubegc.api import errors
from kubegc.api.auth import APISERVER, as_user
from kubegc.api.types import Obj
from kubegc.registry import Registry
from kubegc.server.frontproxy import FrontProxy
from kubegc.server.wait import until

NAMESPACE, NAME = "kube-system", "extension-apiserver-authentication"
RESYNC_SECONDS = 60.0
_LISTS = ("requestheader-username-headers", "requestheader-group-headers",
          "requestheader-extra-headers-prefix", "requestheader-allowed-names")
_CAS = ("client-ca-file", "requestheader-client-ca-file")
_PEM = re.compile(rb"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", re.S)


def required_data(client_ca_pem: bytes | None, front_proxy: FrontProxy | None
                  ) -> dict[str, str]:
    """``getConfigMapDataFor``: the client CA, and the requestheader keys when there is a
    requestheader CA."""
    data: dict[str, str] = {}
    if client_ca_pem:
        data["client-ca-file"] = client_ca_pem.decode()
    if front_proxy is None or not front_proxy.client_ca_pem:
        return data
    data["requestheader-username-headers"] = _json(front_proxy.username_headers)
    data["requestheader-group-headers"] = _json(front_proxy.group_headers)
    data["requestheader-extra-headers-prefix"] = _json(front_proxy.extra_headers_prefix)
    data["requestheader-client-ca-file"] = front_proxy.client_ca_pem.decode()
    data["requestheader-allowed-names"] = _json(front_proxy.allowed_names)
    return data


def _json(values: tuple[str, ...] | list[str]) -> str:
    return orjson.dumps(list(values)).decode()


def _strings(text: str) -> list[str]:
    try:
        value = orjson.loads(text) if text else []
    except orjson.JSONDecodeError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def _unexpired(pem: bytes) -> bool:
    """``filterExpiredCerts``: five minutes of slack."""
    try:
        cert = x509.load_pem_x509_certificate(pem)
    except ValueError:
        return False
    return cert.not_valid_after_utc > datetime.now(UTC) - timedelta(minutes=5)


def _combined_cas(existing: str, required: str) -> str:
    """``combineCertLists``: each certificate once, expired ones dropped."""
    seen: list[bytes] = []
    for pem in _PEM.findall(existing.encode()) + _PEM.findall(required.encode()):
        if pem not in seen and _unexpired(pem):
            seen.append(pem)
    return "".join(pem.decode() + "\n" for pem in seen)


def combined(existing: dict[str, str], required: dict[str, str]) -> dict[str, str]:
    """``combinedClusterAuthenticationInfo`` then ``getConfigMapDataFor``."""
    data: dict[str, str] = {}
    for key in _CAS:
        cas = _combined_cas(existing.get(key, ""), required.get(key, ""))
        if cas:
            data[key] = cas
    if "requestheader-client-ca-file" not in data:
        return data
    for key in _LISTS:
        values = _strings(existing.get(key, ""))
        values += [v for v in _strings(required.get(key, "")) if v not in values]
        data[key] = _json(values)
    return data


class AuthenticationTrust:
    """Ownership: one task of the server writes the ConfigMap (so may another server's)."""

    def __init__(self, registry: Registry, required: dict[str, str]) -> None:
        self.registry = registry
        self.required = required

    async def sync(self) -> None:
        target = self.registry.target("", "v1", "configmaps", NAMESPACE)
        with as_user(APISERVER):
            try:
                current: Obj | None = await self.registry.get(target, NAME)
            except errors.StatusError as e:
                if not errors.is_not_found(e):
                    raise
                current = None
            existing = {str(k): str(v) for k, v in ((current or {}).get("data") or {}).items()}
            data = combined(existing, self.required)
            if current is None:
                await self.registry.create(target, {
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": NAME, "namespace": NAMESPACE}, "data": data})
            elif data != existing:
                await self.registry.update(target, NAME, {**current, "data": data})

    async def run(self) -> None:
        await until(self.sync, RESYNC_SECONDS, f"writing {NAMESPACE}/{NAME}")
