"""``TokensController`` (cf. pkg/controller/serviceaccount/tokens_controller.go): fills
legacy ServiceAccount token Secrets and removes those whose ServiceAccount is gone.

A Secret of type ``kubernetes.io/service-account-token`` annotated with
``kubernetes.io/service-account.name`` (and optionally ``.uid``) gets ``data.token`` (a
legacy JWT signed with the controller's key), ``data.ca.crt`` (the root CA) and
``data.namespace``, and the ServiceAccount's uid annotation. A token Secret whose
ServiceAccount does not exist (or has another uid) is deleted with a uid precondition;
when a ServiceAccount is deleted, its token Secrets are. A deleted token Secret is
removed from its ServiceAccount's ``secrets`` list.

Keys are upstream's two queue keys, encoded as JSON arrays on the one work queue:
``["serviceaccount", ns, name, uid]`` and ``["secret", ns, name, uid, saName, saUID]``.
Without a signing key (upstream: no ``--service-account-private-key-file``) the
controller watches nothing and does nothing, as upstream does not start it.
"""

from __future__ import annotations

import base64
import copy
import logging

import orjson

from kubegc.api.errors import StatusError, is_conflict, is_not_found
from kubegc.api.meta import ObjectReference, name_of, namespace_of
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.cache import DeletedFinalStateUnknown, FuncHandler
from kubegc.client.cache.store import NAMESPACE_INDEX, meta_namespace_index_func
from kubegc.client.interface import DeleteOptions
from kubegc.component.base_controller import BaseController, tombstone_object
from kubegc.component.config import ServiceAccountTokenControllerConfiguration
from kubegc.component.context import ControllerContext
from kubegc.component.deletions import (
    SERVICE_ACCOUNT_DELETED,
    Deletion,
    DeletionSink,
    NullDeletionSink,
)
from kubegc.controllers.controller_utils import ensure_indexers, raise_aggregate
from kubegc.tokens import LEGACY_ISSUER, JWTTokenGenerator, legacy_claims
from kubegc.tokens.legacy import (
    SECRET_TYPE_SERVICE_ACCOUNT_TOKEN,
    SERVICE_ACCOUNT_NAME_KEY,
    SERVICE_ACCOUNT_NAMESPACE_KEY,
    SERVICE_ACCOUNT_ROOT_CA_KEY,
    SERVICE_ACCOUNT_TOKEN_KEY,
    SERVICE_ACCOUNT_UID_KEY,
)

log = logging.getLogger(__name__)

SECRETS = GroupVersionResource("", "v1", "secrets")
SERVICEACCOUNTS = GroupVersionResource("", "v1", "serviceaccounts")


def _meta(obj: Obj) -> dict[str, object]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _uid(obj: Obj) -> str:
    return str(_meta(obj).get("uid") or "")


def _annotation(obj: Obj, key: str) -> str:
    annotations = _meta(obj).get("annotations")
    value = annotations.get(key) if isinstance(annotations, dict) else None
    return value if isinstance(value, str) else ""


def is_service_account_token(secret: Obj, service_account: Obj) -> bool:
    """``serviceaccount.IsServiceAccountToken``: a token Secret naming this ServiceAccount
    (and its uid, when the Secret names one)."""
    if secret.get("type") != SECRET_TYPE_SERVICE_ACCOUNT_TOKEN:
        return False
    if _annotation(secret, SERVICE_ACCOUNT_NAME_KEY) != name_of(service_account):
        return False
    uid = _annotation(secret, SERVICE_ACCOUNT_UID_KEY)
    return not uid or uid == _uid(service_account)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class TokensController(BaseController):
    """Ownership: one queue of ServiceAccount and Secret keys, drained by one worker (as
    upstream's start function runs one of each)."""

    name = "serviceaccount-token"
    component = "serviceaccount-token-controller"

    def __init__(self, ctx: ControllerContext[ServiceAccountTokenControllerConfiguration],
                 *, deletions: DeletionSink | None = None) -> None:
        super().__init__(ctx, workers=1)
        #: where each token it deleted is recorded (``kubegc why``)
        self.deletions = deletions if deletions is not None else NullDeletionSink()
        key = ctx.options.key
        self.token = None if key is None else JWTTokenGenerator(LEGACY_ISSUER, key)
        self.root_ca = ctx.options.root_ca.encode()
        self.service_accounts = self.informer_factory.for_resource(SERVICEACCOUNTS)
        self.secrets = self.informer_factory.for_resource(SECRETS)
        self.synced_informers = [self.service_accounts, self.secrets] if self.token else []

    def register_handlers(self) -> None:
        if self.token is None:
            return
        ensure_indexers(self.secrets, {NAMESPACE_INDEX: meta_namespace_index_func})
        self.service_accounts.add_event_handler(FuncHandler(
            add=lambda obj, _: self.queue_service_account_sync(obj),
            update=lambda _, new: self.queue_service_account_sync(new),
            delete=self.queue_service_account_sync))
        self.secrets.add_event_handler(FuncHandler(
            add=lambda obj, _: self.queue_secret_sync(obj),
            update=lambda _, new: self.queue_secret_sync(new),
            delete=self.queue_secret_sync))

    # -- queueing ------------------------------------------------------------------------

    def queue_service_account_sync(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        sa = tombstone_object(obj)
        self.enqueue_key(orjson.dumps(["serviceaccount", namespace_of(sa), name_of(sa),
                                       _uid(sa)]).decode())

    def queue_secret_sync(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        secret = tombstone_object(obj)
        if secret.get("type") != SECRET_TYPE_SERVICE_ACCOUNT_TOKEN:
            return
        self.enqueue_key(orjson.dumps([
            "secret", namespace_of(secret), name_of(secret), _uid(secret),
            _annotation(secret, SERVICE_ACCOUNT_NAME_KEY),
            _annotation(secret, SERVICE_ACCOUNT_UID_KEY)]).decode())

    async def sync(self, key: str) -> float | None:
        parts = orjson.loads(key)
        if parts[0] == "serviceaccount" and all(parts[1:4]):
            await self.sync_service_account(*parts[1:4])
        elif parts[0] == "secret" and all(parts[1:5]):
            await self.sync_secret(*parts[1:6])
        return None  # upstream's parse*QueueKey refuse keys missing a part

    # -- service accounts ----------------------------------------------------------------

    async def sync_service_account(self, namespace: str, name: str, uid: str) -> None:
        """A ServiceAccount that no longer exists (with that uid): delete its tokens."""
        if await self.get_service_account(namespace, name, uid, fetch_on_cache_miss=False):
            return
        service_account: Obj = {"metadata": {"namespace": namespace, "name": name,
                                             "uid": uid}}
        failures: list[StatusError] = []
        for secret in self.secrets.indexer.by_index(NAMESPACE_INDEX, namespace):
            if is_service_account_token(secret, service_account):
                try:
                    await self.delete_token(namespace, name_of(secret), _uid(secret))
                except StatusError as err:
                    failures.append(err)
        raise_aggregate(failures)

    # -- secrets -------------------------------------------------------------------------

    async def sync_secret(self, namespace: str, name: str, uid: str, sa_name: str,
                          sa_uid: str) -> None:
        secret = self._cached_secret(namespace, name, uid)
        if secret is None:  # deleted: drop it from its ServiceAccount's secrets
            if await self.get_service_account(namespace, sa_name, sa_uid,
                                              fetch_on_cache_miss=False):
                await self.remove_secret_reference(namespace, sa_name, sa_uid, name)
            return
        service_account = await self.get_service_account(namespace, sa_name, sa_uid,
                                                         fetch_on_cache_miss=True)
        if service_account is None:
            log.info("Service account does not exist, deleting token secret %s/%s",
                     namespace, name)
            await self.delete_token(namespace, name, uid)
            return
        await self.generate_token_if_needed(service_account, secret)

    def _cached_secret(self, namespace: str, name: str, uid: str) -> Obj | None:
        secret = self.secrets.indexer.get_by_key(f"{namespace}/{name}")
        return secret if secret is not None and (not uid or _uid(secret) == uid) else None

    async def get_service_account(self, namespace: str, name: str, uid: str, *,
                                  fetch_on_cache_miss: bool) -> Obj | None:
        """``getServiceAccount``: the cached ServiceAccount with that uid (any when ``uid``
        is empty), else a live lookup when asked for; None when there is none."""
        cached = self.service_accounts.indexer.get_by_key(f"{namespace}/{name}")
        if cached is not None and (not uid or _uid(cached) == uid):
            return cached
        if not fetch_on_cache_miss:
            return None
        try:
            live = await self.client.get(SERVICEACCOUNTS, name, namespace=namespace)
        except StatusError as err:
            if is_not_found(err):
                return None
            raise
        return live if not uid or _uid(live) == uid else None

    async def delete_token(self, namespace: str, name: str, uid: str) -> None:
        """``deleteToken``: with the Secret's uid as precondition; gone or replaced is
        done."""
        try:
            await self.client.delete(SECRETS, name, namespace=namespace, options=DeleteOptions(
                preconditions_uid=uid or None))
        except StatusError as err:
            if not is_not_found(err) and not is_conflict(err):
                raise
            return
        self.deletions.record_deletion(Deletion(
            self.clock.now(), self.component, ObjectReference("v1", "Secret", name, uid,
                                                              namespace),
            SERVICE_ACCOUNT_DELETED, f"the ServiceAccount of token Secret {namespace}/{name} "
            "is gone"))

    def secret_update_needed(self, secret: Obj) -> tuple[bool, bool, bool]:
        """``secretUpdateNeeded``: (ca, namespace, token) missing or out of date."""
        data = secret.get("data")
        if not isinstance(data, dict):
            data = {}
        needs_ca = bool(self.root_ca) and data.get(SERVICE_ACCOUNT_ROOT_CA_KEY) != _b64(
            self.root_ca)
        return (needs_ca, not data.get(SERVICE_ACCOUNT_NAMESPACE_KEY),
                not data.get(SERVICE_ACCOUNT_TOKEN_KEY))

    async def generate_token_if_needed(self, service_account: Obj, cached: Obj) -> None:
        """``generateTokenIfNeeded``: fill what is missing into a fresh copy of the Secret,
        unless the cache is behind it (its update event comes, and another sync)."""
        if not any(self.secret_update_needed(cached)):
            return
        namespace, name = namespace_of(cached), name_of(cached)
        try:
            live = await self.client.get(SECRETS, name, namespace=namespace)
        except StatusError as err:
            if is_not_found(err):
                return
            raise
        if _meta(live).get("resourceVersion") != _meta(cached).get("resourceVersion"):
            return
        needs_ca, needs_namespace, needs_token = self.secret_update_needed(live)
        if not (needs_ca or needs_namespace or needs_token) or self.token is None:
            return
        secret = copy.deepcopy(live)
        data = secret.get("data")
        if not isinstance(data, dict):
            data = secret["data"] = {}
        if needs_ca:
            data[SERVICE_ACCOUNT_ROOT_CA_KEY] = _b64(self.root_ca)
        if needs_namespace:
            data[SERVICE_ACCOUNT_NAMESPACE_KEY] = _b64(namespace.encode())
        if needs_token:
            token = self.token.generate_token(legacy_claims(service_account, secret))
            data[SERVICE_ACCOUNT_TOKEN_KEY] = _b64(token.encode())
        annotations = secret["metadata"].setdefault("annotations", {})
        annotations[SERVICE_ACCOUNT_NAME_KEY] = name_of(service_account)
        annotations[SERVICE_ACCOUNT_UID_KEY] = _uid(service_account)
        try:
            await self.client.update(SECRETS, secret, namespace=namespace)
        except StatusError as err:
            # changed since (an update event follows) or gone: nothing to do
            if not is_conflict(err) and not is_not_found(err):
                raise

    async def remove_secret_reference(self, namespace: str, sa_name: str, sa_uid: str,
                                      secret_name: str) -> None:
        """``removeSecretReference``: drop ``secret_name`` from the live ServiceAccount's
        ``secrets`` (a conflict is retried by the queue)."""
        try:
            live = await self.client.get(SERVICEACCOUNTS, sa_name, namespace=namespace)
        except StatusError as err:
            if is_not_found(err):
                return
            raise
        refs = live.get("secrets")
        if not isinstance(refs, list):
            refs = []
        if (sa_uid and _uid(live) != sa_uid) or not any(
                isinstance(r, dict) and r.get("name") == secret_name for r in refs):
            return
        service_account = copy.deepcopy(live)
        service_account["secrets"] = [
            r for r in refs if not (isinstance(r, dict) and r.get("name") == secret_name)]
        try:
            await self.client.update(SERVICEACCOUNTS, service_account, namespace=namespace)
        except StatusError as err:
            if not is_not_found(err):
                raise
