"""``RestClient``: the ``Client`` protocol over HTTP(S), for kubegc or any real cluster.

Built from a ``RestConfig`` (see ``kubeconfig.py``): bearer/basic auth headers, custom CA,
client certificates, ``insecure-skip-tls-verify``. One ``aiohttp.ClientSession`` is created
on first use and reused (keep-alive, gzip responses decoded); ``await close()`` ends it.

Contract:
  * Paths follow Kubernetes' layout (``/api/v1/...``, ``/apis/<group>/<version>/...``,
    ``/namespaces/<ns>/`` only for namespaced resources). Whether a resource is namespaced
    comes from legacy discovery of its group-version, fetched once and cached; an unknown
    resource raises 404 NotFound "the server could not find the requested resource", as a
    request to a path the server does not serve would.
  * Every non-2xx reply raises ``StatusError``: from the ``Status`` body when there is one,
    else synthesized as apimachinery's ``NewGenericServerResponse`` does (reason from the
    HTTP code, the body kept as an ``UnexpectedServerResponse`` cause). Transport failures
    raise aiohttp's exceptions (``aiohttp.ClientError``, ``asyncio.TimeoutError``).
  * ``watch`` streams newline-delimited JSON events (lines may span chunks). An ERROR event
    (e.g. 410 Expired) is yielded as-is; the stream ends when the server closes it.
  * ``patch`` sends the PatchType as Content-Type, JSON bodies (apply bodies are JSON,
    which is YAML), and ``fieldManager``/``force`` query parameters.
  * ``delete`` sends ``DeleteOptions`` as a JSON body.
  * ``discover`` does legacy discovery (``/api``, ``/api/v1``, ``/apis``, ``/apis/<g>/<v>``
    for every version of every group, preferred first) and skips group-versions that fail
    (a real cluster's metrics.k8s.io may answer 503); ``failed_group_versions`` lists them.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import aiohttp
import orjson

from kubegc.api.errors import GroupResource, StatusCause, StatusError, route_not_found
from kubegc.api.goformat import go_quote
from kubegc.api.meta import EventType
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import (
    APIResource,
    Client,
    DeleteOptions,
    ListOptions,
    PatchType,
    ServerResources,
    WatchEvent,
    WatchOptions,
)
from kubegc.client.kubeconfig import RestConfig

logger = logging.getLogger(__name__)

DEFAULT_USER_AGENT = "kubegc/0.1.0"
REQUEST_TIMEOUT = 60.0  # seconds for one non-watch request
WATCH_GRACE = 30.0  # seconds past timeoutSeconds before a silent watch counts as dead
_JSON = "application/json"

# apimachinery NewGenericServerResponse: (reason, message) by HTTP code; None keeps the
# server's own text.
_GENERIC: dict[int, tuple[str, str | None]] = {
    400: ("BadRequest", "the server rejected our request for an unknown reason"),
    401: ("Unauthorized", "the server has asked for the client to provide credentials"),
    403: ("Forbidden", None),
    404: ("NotFound", "the server could not find the requested resource"),
    405: ("MethodNotAllowed", "the server does not allow this method on the requested resource"),
    406: ("NotAcceptable", None),
    409: ("Conflict", "the server reported a conflict"),
    415: ("UnsupportedMediaType", None),
    422: ("Invalid", "the server rejected our request due to an error in our request"),
    429: ("TooManyRequests",
          "the server has received too many requests and has asked us to try again later"),
    503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
    504: ("Timeout", "the server was unable to return a response in the time allotted, but may "
          "still be processing the request"),
}


def generic_server_error(
    code: int, method: str, server_message: str, *, gr: GroupResource | None = None,
    name: str = "",
) -> StatusError:
    """A ``StatusError`` for a reply that carried no ``Status`` (cf. NewGenericServerResponse)."""
    reason = ""  # metav1.StatusReasonUnknown
    message = (f"the server responded with the status code {code} but did not return more "
               "information")
    if code in _GENERIC:
        reason, fixed = _GENERIC[code]
        message = fixed if fixed is not None else server_message
        if code == 409 and method == "POST":
            reason = "AlreadyExists"
        if code == 406 and server_message in ("", "unknown"):
            message = ("the server was unable to respond with a content type that the client "
                       "supports")
    elif code >= 500:
        reason = "InternalError"
        message = (f"an error on the server ({go_quote(server_message)}) has prevented the "
                   "request from succeeding")
    if gr is not None and (gr.group or gr.resource):
        message += f" ({method.lower()} {gr}{' ' + name if name else ''})"
    return StatusError(
        code, reason, message, name=name, group=gr.group if gr else "",
        kind=gr.resource if gr else "",
        causes=[StatusCause("UnexpectedServerResponse", server_message)],
    )


class RestClient(Client):
    """``Client`` over HTTP (see the module docstring).

    Ownership: one event loop. The session and the discovery caches are created and
    filled lazily by whichever call needs them first; concurrent first calls may fetch
    the same group-version twice, which is harmless.
    """

    def __init__(
        self, config: RestConfig, *, user_agent: str = DEFAULT_USER_AGENT,
        request_timeout: float = REQUEST_TIMEOUT,
    ) -> None:
        self.config = config
        self.user_agent = user_agent
        self.request_timeout = request_timeout
        self.failed_group_versions: builtins.list[str] = []
        #: group-version -> why its discovery failed, from the last ``discover``
        self.failed_groups: dict[str, str] = {}
        self._session_: aiohttp.ClientSession | None = None
        self._namespaced: dict[GroupVersionResource, bool] = {}

    async def close(self) -> None:
        session, self._session_ = self._session_, None
        if session is not None:
            await session.close()

    async def __aenter__(self) -> RestClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- Client ----------------------------------------------------------------------

    async def get(self, gvr: GroupVersionResource, name: str, *, namespace: str = "") -> Obj:
        return await self._call("GET", gvr, namespace, name)

    async def list(
        self, gvr: GroupVersionResource, *, namespace: str = "", options: ListOptions | None = None,
    ) -> Obj:
        o = options or ListOptions()
        params = _params(labelSelector=o.label_selector, fieldSelector=o.field_selector,
                         limit=str(o.limit) if o.limit else "", resourceVersion=o.resource_version)
        params.update(_params(**{"continue": o.continue_}))
        return await self._call("GET", gvr, namespace, params=params)

    async def watch(
        self, gvr: GroupVersionResource, *, namespace: str = "",
        options: WatchOptions | None = None,
    ) -> AsyncIterator[WatchEvent]:
        o = options or WatchOptions()
        params = {"watch": "true", **_params(
            labelSelector=o.label_selector, fieldSelector=o.field_selector,
            resourceVersion=o.resource_version,
            allowWatchBookmarks="true" if o.allow_bookmarks else "",
            timeoutSeconds=str(o.timeout_seconds) if o.timeout_seconds else ""), **o.extra}
        path = await self._path(gvr, namespace)
        timeout = aiohttp.ClientTimeout(
            total=o.timeout_seconds + WATCH_GRACE if o.timeout_seconds else None,
            sock_connect=self.request_timeout)
        async with self._session().get(self.config.server + path, params=params,
                                       timeout=timeout, **self._tls()) as resp:
            if resp.status >= 300:
                raise self._error(resp.status, "GET", await resp.read(), gvr, "")
            buffer = bytearray()
            async for chunk in resp.content.iter_any():
                scan_from = len(buffer)
                buffer += chunk
                while (end := buffer.find(b"\n", scan_from)) >= 0:
                    line, scan_from = bytes(buffer[:end]), 0
                    del buffer[:end + 1]
                    if line.strip() and (event := _decode_event(line, path)) is not None:
                        yield event
            if buffer.strip() and (event := _decode_event(bytes(buffer), path)) is not None:
                yield event

    async def create(self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "") -> Obj:
        ns = namespace or str((obj.get("metadata") or {}).get("namespace") or "")
        return await self._call("POST", gvr, ns, body=orjson.dumps(obj))

    async def update(
        self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "", subresource: str = "",
    ) -> Obj:
        meta = obj.get("metadata") or {}
        ns = namespace or str(meta.get("namespace") or "")
        return await self._call("PUT", gvr, ns, str(meta.get("name") or ""), subresource,
                                body=orjson.dumps(obj))

    async def patch(
        self, gvr: GroupVersionResource, name: str, patch: Any, *, namespace: str = "",
        patch_type: PatchType = PatchType.MERGE, subresource: str = "", field_manager: str = "",
        force: bool = False,
    ) -> Obj:
        params = _params(fieldManager=field_manager, force="true" if force else "")
        body = patch if isinstance(patch, bytes) else orjson.dumps(patch)
        return await self._call("PATCH", gvr, namespace, name, subresource, params=params,
                                body=body, content_type=patch_type.value)

    async def delete(
        self, gvr: GroupVersionResource, name: str, *, namespace: str = "",
        options: DeleteOptions | None = None,
    ) -> Obj:
        body = orjson.dumps((options or DeleteOptions()).to_body())
        return await self._call("DELETE", gvr, namespace, name, body=body)

    async def delete_collection(
        self, gvr: GroupVersionResource, *, namespace: str = "",
        options: DeleteOptions | None = None, list_options: ListOptions | None = None,
    ) -> Obj:
        lo = list_options or ListOptions()
        body = orjson.dumps((options or DeleteOptions()).to_body())
        return await self._call("DELETE", gvr, namespace, body=body, params=_params(
            labelSelector=lo.label_selector, fieldSelector=lo.field_selector))

    async def discover(self) -> builtins.list[APIResource]:
        core = await self.request("GET", "/api")
        groups = await self.request("GET", "/apis")
        group_versions = [("", str(v)) for v in core.get("versions") or []]
        for group in groups.get("groups") or []:
            preferred = str((group.get("preferredVersion") or {}).get("version") or "")
            versions = [str(v.get("version")) for v in group.get("versions") or []]
            versions.sort(key=lambda v: v != preferred)
            group_versions += [(str(group.get("name")), v) for v in versions]
        results = await asyncio.gather(
            *(self._group_version_resources(g, v) for g, v in group_versions),
            return_exceptions=True)
        found: builtins.list[APIResource] = []
        self.failed_group_versions = []
        self.failed_groups = {}
        for (group, version), result in zip(group_versions, results):
            if isinstance(result, builtins.list):
                found.extend(result)
            elif isinstance(result, Exception):
                gv = f"{group}/{version}" if group else version
                logger.warning("unable to retrieve the complete list of server APIs: %s: %s",
                               gv, result)
                self.failed_group_versions.append(gv)
                self.failed_groups[gv] = (result.message if isinstance(result, StatusError)
                                          else str(result))
            else:
                raise result
        return found

    async def server_resources(self) -> ServerResources:
        found = await self.discover()
        return ServerResources(found, dict(self.failed_groups))

    async def version(self) -> Obj:
        """``GET /version`` (the server's build information)."""
        return await self.request("GET", "/version")

    # -- plumbing --------------------------------------------------------------------

    async def request(
        self, method: str, path: str, *, params: dict[str, str] | None = None,
        body: bytes | None = None, content_type: str = _JSON,
        gvr: GroupVersionResource | None = None, name: str = "",
    ) -> Obj:
        """One non-streaming request; returns the decoded JSON reply."""
        headers = {"Content-Type": content_type} if body is not None else {}
        timeout = aiohttp.ClientTimeout(total=self.request_timeout)
        async with self._session().request(
            method, self.config.server + path, params=params, data=body, headers=headers,
            timeout=timeout, **self._tls(),
        ) as resp:
            payload = await resp.read()
            if resp.status >= 300:
                raise self._error(resp.status, method, payload, gvr, name)
        decoded = orjson.loads(payload) if payload else {}
        return decoded if isinstance(decoded, dict) else {"items": decoded}

    async def _call(
        self, method: str, gvr: GroupVersionResource, namespace: str, name: str = "",
        subresource: str = "", *, params: dict[str, str] | None = None, body: bytes | None = None,
        content_type: str = _JSON,
    ) -> Obj:
        path = await self._path(gvr, namespace, name, subresource)
        return await self.request(method, path, params=params, body=body,
                                  content_type=content_type, gvr=gvr, name=name)

    async def _path(
        self, gvr: GroupVersionResource, namespace: str, name: str = "", subresource: str = "",
    ) -> str:
        path = f"/apis/{gvr.group}/{gvr.version}" if gvr.group else f"/api/{gvr.version}"
        if namespace and await self._is_namespaced(gvr):
            path += f"/namespaces/{quote(namespace, safe='')}"
        path += f"/{gvr.resource}"
        if name:
            path += f"/{quote(name, safe='')}"
        return f"{path}/{subresource}" if subresource else path

    async def _is_namespaced(self, gvr: GroupVersionResource) -> bool:
        if gvr not in self._namespaced:
            await self._group_version_resources(gvr.group, gvr.version)
        if gvr not in self._namespaced:
            raise route_not_found()
        return self._namespaced[gvr]

    async def _group_version_resources(
        self, group: str, version: str,
    ) -> builtins.list[APIResource]:
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        doc = await self.request("GET", path)
        out: builtins.list[APIResource] = []
        for r in doc.get("resources") or []:
            name = str(r.get("name") or "")
            if not name or "/" in name:  # subresources are not resources of their own
                continue
            resource = APIResource(
                group, version, name, str(r.get("kind") or ""), bool(r.get("namespaced")),
                tuple(r.get("verbs") or ()), tuple(r.get("shortNames") or ()),
                tuple(r.get("categories") or ()), str(r.get("singularName") or ""))
            self._namespaced[resource.gvr] = resource.namespaced
            out.append(resource)
        return out

    def _session(self) -> aiohttp.ClientSession:
        if self._session_ is None or self._session_.closed:
            headers = {"User-Agent": self.user_agent, "Accept": _JSON, **self.config.headers}
            connector = aiohttp.TCPConnector(ssl=self.config.ssl_context or True)
            self._session_ = aiohttp.ClientSession(headers=headers, connector=connector)
        return self._session_

    def _tls(self) -> dict[str, Any]:
        name = self.config.tls_server_name
        return {"server_hostname": name} if name else {}

    def _error(
        self, code: int, method: str, payload: bytes, gvr: GroupVersionResource | None,
        name: str,
    ) -> StatusError:
        try:
            doc = orjson.loads(payload)
        except orjson.JSONDecodeError:
            doc = None
        if isinstance(doc, dict) and doc.get("kind") == "Status":
            return StatusError.from_status(doc, code=code)
        gr = GroupResource(gvr.group, gvr.resource) if gvr else None
        text = payload.decode("utf-8", errors="replace").strip()
        return generic_server_error(code, method, text, gr=gr, name=name)


def _params(**values: str) -> dict[str, str]:
    return {k: v for k, v in values.items() if v}


def _decode_event(line: bytes, path: str) -> WatchEvent | None:
    """One watch line; None for an event type this client does not know, logged and
    skipped as client-go's reflector does ("unable to understand watch event")."""
    doc = orjson.loads(line)
    type_ = str(doc.get("type") or "")
    try:
        event_type = EventType(type_)
    except ValueError:
        logger.warning("%s: unable to understand watch event %r", path, type_)
        return None
    return WatchEvent(event_type, doc.get("object") or {})
