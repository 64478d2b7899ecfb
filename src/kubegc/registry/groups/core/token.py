"""The TokenRequest API: ``POST .../serviceaccounts/<name>/token`` (cf.
pkg/registry/core/serviceaccount/storage/token.go ``TokenREST.Create``,
pkg/apis/authentication/validation ``ValidateTokenRequest`` and the v1 defaults).

Nothing is stored: the answer is the request with ``status.token``, a JWT for the
ServiceAccount signed by the issuer's key, and ``status.expirationTimestamp``. The token
is for ``spec.audiences`` (default: the API audiences), lives ``spec.expirationSeconds``
(default 3600, at least 600) and may be bound to a Pod, a Secret or a Node, which must
exist with the uid given; it is then valid only as long as that object is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar

from kubegc.api import errors
from kubegc.api.clock import Clock, format_time
from kubegc.api.errors import GroupResource, StatusError, field_error
from kubegc.api.resources import GroupVersionKind
from kubegc.api.types import Obj
from kubegc.registry.generic.rest import NamedCreater, WriteOptions
from kubegc.registry.generic.target import Target
from kubegc.registry.typed import decode_typed, definition_type
from kubegc.registry.typed.messages import cannot_be_handled
from kubegc.tokens.claims import (
    EXPIRATION_EXTENSION_SECONDS,
    WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS,
    claims,
)
from kubegc.tokens.jwt import JWTTokenGenerator

GROUP = "authentication.k8s.io"
KIND = "TokenRequest"
#: ``SetDefaults_TokenRequestSpec``
DEFAULT_EXPIRATION_SECONDS = 60 * 60
#: ``MinTokenAgeSec`` and the 2^32 s ceiling of ``ValidateTokenRequest``
MIN_EXPIRATION_SECONDS = 10 * 60
MAX_EXPIRATION_SECONDS = 1 << 32

#: (resource, namespace, name) -> the core/v1 object, or the API's StatusError
CoreGetter = Callable[[str, str, str], Awaitable[Obj]]


@dataclass
class TokenIssuer:
    """What ``TokenREST`` is built with: the generator (its key and issuer), the API
    audiences (kube-apiserver's ``--api-audiences``, by default the issuer), and
    ``--service-account-extend-token-expiration`` / ``--service-account-max-token-
    expiration`` (0: none)."""

    generator: JWTTokenGenerator
    api_audiences: tuple[str, ...]
    clock: Clock
    extend_expiration: bool = True
    max_expiration_seconds: int = 0


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _decoded(request: Obj) -> Obj:
    """The body as a ``TokenRequest`` (400 ``... cannot be handled as a TokenRequest``),
    defaulted."""
    failure = decode_typed(request, definition_type(f"io.k8s.api.authentication.v1.{KIND}"))
    if failure is not None:
        raise cannot_be_handled(KIND, "v1", failure.message)
    spec = request.setdefault("spec", {})
    if spec.get("expirationSeconds") is None:
        spec["expirationSeconds"] = DEFAULT_EXPIRATION_SECONDS
    return request


def _invalid(name: str, path: str, value: Any, detail: str) -> StatusError:
    return errors.invalid(KIND, GROUP, name, [field_error("FieldValueInvalid", path, detail,
                                                          value)])


def validate_token_request(request: Obj) -> None:
    """``ValidateTokenRequest``: 10 minutes ≤ ``spec.expirationSeconds`` ≤ 2^32 s."""
    seconds = request["spec"]["expirationSeconds"]
    causes = []
    if seconds < MIN_EXPIRATION_SECONDS:
        causes.append(field_error("FieldValueInvalid", "spec.expirationSeconds",
                                  "may not specify a duration less than 10 minutes", seconds))
    if seconds > MAX_EXPIRATION_SECONDS:
        causes.append(field_error("FieldValueInvalid", "spec.expirationSeconds",
                                  "may not specify a duration larger than 2^32 seconds",
                                  seconds))
    if causes:
        raise errors.invalid(KIND, GROUP, "", causes)


def _gvk_string(api_version: str, kind: str) -> str:
    """``schema.FromAPIVersionAndKind(...).String()``: ``group/version, Kind=kind``."""
    group, _, version = api_version.rpartition("/") if "/" in api_version else (
        "", "", api_version)
    return f"{group}/{version}, Kind={kind}"


@dataclass
class _Bound:
    pod: Obj | None = None
    secret: Obj | None = None
    node: Obj | None = None


async def _bound_objects(get: CoreGetter, namespace: str, name: str, ref: dict[str, Any]
                         ) -> _Bound:
    """The object ``spec.boundObjectRef`` names (and a pod's node), checked as
    ``TokenREST.Create`` checks it."""
    api_version, kind = str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")
    group = api_version.rpartition("/")[0] if "/" in api_version else ""
    ref_name = str(ref.get("name") or "")
    bound = _Bound()
    if group == "" and kind == "Pod":
        bound.pod = await get("pods", namespace, ref_name)
        if _map(bound.pod.get("spec")).get("serviceAccountName") != name:
            raise errors.bad_request(f'cannot bind token for serviceaccount "{name}" to pod '
                                     "running with different serviceaccount name.")
        uid = _uid(bound.pod)
        bound.node = await _pod_node(get, _map(bound.pod.get("spec")).get("nodeName"))
    elif group == "" and kind == "Node":
        bound.node = await get("nodes", "", ref_name)
        uid = _uid(bound.node)
    elif group == "" and kind == "Secret":
        bound.secret = await get("secrets", namespace, ref_name)
        uid = _uid(bound.secret)
    else:
        raise errors.bad_request(
            f"cannot bind token to object of type {_gvk_string(api_version, kind)}")
    if ref.get("uid") and ref["uid"] != uid:
        raise errors.conflict(GroupResource(group, kind), ref_name,
                              f"the UID in the bound object reference ({ref['uid']}) does "
                              "not match the UID in record. The object might have been "
                              "deleted and then recreated")
    return bound


async def _pod_node(get: CoreGetter, node_name: Any) -> Obj | None:
    """A pod's node for the token's ``node`` claim (``ServiceAccountTokenPodNodeInfo``):
    a node that is gone is named without a uid."""
    if not isinstance(node_name, str) or not node_name:
        return None
    try:
        return await get("nodes", "", node_name)
    except StatusError as err:
        if err.code == 404:
            return {"metadata": {"name": node_name}}
        raise errors.internal_error(err.message) from None


def _uid(obj: Obj) -> str:
    return str(_map(obj.get("metadata")).get("uid") or "")


async def create_token(issuer: TokenIssuer, get: CoreGetter, namespace: str, name: str,
                       request: Obj, warnings: list[str] | None = None) -> Obj:
    """``TokenREST.Create``: the TokenRequest ``request`` for ServiceAccount
    ``namespace/name``, answered."""
    request = _decoded(request)
    meta = _map(request.get("metadata"))
    if meta.get("name") and meta["name"] != name:
        raise _invalid(name, "metadata.name", meta["name"],
                       "must match the service account name if specified")
    if meta.get("namespace") and meta["namespace"] != namespace:
        raise _invalid(name, "metadata.namespace", meta["namespace"],
                       "must match the service account namespace if specified")
    service_account = await get("serviceaccounts", namespace, name)
    sa_uid = _uid(service_account)
    if meta.get("uid") and meta["uid"] != sa_uid:
        raise errors.conflict(GroupResource(GROUP, KIND), name,
                              f"the UID in the token request ({meta['uid']}) does not match "
                              f"the UID of the service account ({sa_uid})")
    spec = request["spec"]
    if not spec.get("audiences"):
        spec["audiences"] = list(issuer.api_audiences)
    now = issuer.clock.now().replace(microsecond=0)
    validate_token_request(request)
    ref = spec.get("boundObjectRef")
    bound = await _bound_objects(get, namespace, name, ref) if isinstance(ref, dict) else _Bound()
    expiration = _capped(issuer, spec, warnings)
    exp, warn_after = expiration, 0
    if (issuer.extend_expiration and bound.pod is not None
            and expiration == WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS
            and set(spec["audiences"]) <= set(issuer.api_audiences)):
        exp, warn_after = max(EXPIRATION_EXTENSION_SECONDS, issuer.max_expiration_seconds), (
            expiration)
    token = issuer.generator.generate_token(claims(
        service_account, expiration_seconds=exp, audiences=spec["audiences"], now=now,
        pod=bound.pod, secret=bound.secret, node=bound.node, warn_after=warn_after))
    return _answer(request, meta, namespace, name, sa_uid, now, token)


def _capped(issuer: TokenIssuer, spec: dict[str, Any], warnings: list[str] | None) -> int:
    """``--service-account-max-token-expiration``: a longer request is shortened, with a
    warning."""
    seconds = int(spec["expirationSeconds"])
    if issuer.max_expiration_seconds > 0 and seconds > issuer.max_expiration_seconds:
        if warnings is not None:
            warnings.append(f"requested expiration of {seconds} seconds shortened to "
                            f"{issuer.max_expiration_seconds} seconds")
        seconds = spec["expirationSeconds"] = issuer.max_expiration_seconds
    return seconds


def _answer(request: Obj, meta: dict[str, Any], namespace: str, name: str, uid: str,
            now: datetime, token: str) -> Obj:
    """The TokenRequest answered, fields in the Go types' order."""
    spec = request["spec"]
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "uid": uid,
                                "creationTimestamp": format_time(now)}
    for key in ("labels", "annotations"):
        if meta.get(key):
            metadata[key] = meta[key]
    return {
        "kind": KIND, "apiVersion": f"{GROUP}/v1", "metadata": metadata,
        "spec": {"audiences": spec["audiences"],
                 "expirationSeconds": spec["expirationSeconds"],
                 "boundObjectRef": spec.get("boundObjectRef")},
        "status": {"token": token, "expirationTimestamp": format_time(
            now + timedelta(seconds=int(spec["expirationSeconds"])))},
    }


class TokenREST(NamedCreater):
    """``serviceaccounts/<name>/token`` (upstream's ``TokenREST``); 404 when the registry
    has no issuer (no ServiceAccount key was configured)."""

    kind: ClassVar[GroupVersionKind | None] = GroupVersionKind(GROUP, "v1", KIND)

    def __init__(self, issuer: Callable[[], TokenIssuer | None], get: CoreGetter) -> None:
        self.issuer = issuer
        self.get = get

    async def create_named(self, t: Target, name: str, obj: Obj, options: WriteOptions) -> Obj:
        issuer = self.issuer()
        if issuer is None:
            raise errors.route_not_found()
        if not isinstance(obj, dict):
            raise errors.bad_request("the body of the request must be an object")
        return await create_token(issuer, self.get, t.namespace, name, obj, options.warnings)
