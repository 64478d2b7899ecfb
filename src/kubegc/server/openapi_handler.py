"""Serving the OpenAPI documents (cf. kube-openapi ``handler`` and ``handler3``).

``/openapi/v2`` answers JSON or gnostic protobuf by the Accept header (goautoneg's order:
quality, then specificity; ``application/com.github.proto-openapi.spec.v2@v1.0+protobuf``
and its ``.v1.0`` spelling both get the latter back as Content-Type; nothing acceptable:
406). ``/openapi/v3`` and ``/openapi/v3/<api|apis/g>/<v>`` answer JSON. Every document
carries ``Etag`` (uppercase hex sha512 of its JSON, quoted; the protobuf form shares it,
since ``Vary: Accept`` keeps the two apart in caches) and ``Last-Modified``, and a
matching ``If-None-Match`` (or, without one, an ``If-Modified-Since`` not older than the
document) gets 304, as ``http.ServeContent`` answers. A v3 group-version document's JSON
is key-sorted, so its ETag is the ``?hash=`` its index entry links.

Documents are built when first asked for and kept until the catalog, a CRD or a remote
group's downloaded OpenAPI changes (the CRDs' resourceVersions and the aggregation's
``openapi_generation`` are part of the key), so a CRD's kinds appear in, and leave, both
versions at once. The remote groups' documents are merged in (``openapi_aggregated``).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from email.utils import formatdate, parsedate_to_datetime
from typing import Any

import orjson

from kubegc.api import errors
from kubegc.registry.groups.apiextensions.crd import resource_info_for, schema_for
from kubegc.server import openapi
from kubegc.server.context import ServerContext
from kubegc.server.http import Request, Response
from kubegc.server.openapi_aggregated import merge_v2, merge_v3_index, remote_v3
from kubegc.server.openapi_v2 import openapi_v2
from kubegc.server.openapi_v2_proto import encode_document

JSON = "application/json"
PROTOBUF_V2 = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
#: (subtype kubectl may ask for, what is served) of ``/openapi/v2``, in kube-openapi's order.
_V2_FORMATS = (("json", JSON),
               ("com.github.proto-openapi.spec.v2@v1.0+protobuf", PROTOBUF_V2),
               ("com.github.proto-openapi.spec.v2.v1.0+protobuf", PROTOBUF_V2))


@dataclass
class _Document:
    """One served document: its JSON, built once, and its protobuf form on demand."""

    json: bytes
    source: Any  # the document, for the protobuf encoding
    etag: str = ""
    last_modified: float = field(default_factory=time.time)
    _proto: bytes | None = None

    def __post_init__(self) -> None:
        self.etag = '"' + hashlib.sha512(self.json).hexdigest().upper() + '"'

    def body(self, content_type: str) -> bytes:
        if content_type == JSON:
            return self.json
        if self._proto is None:
            self._proto = encode_document(self.source)
        return self._proto


_cache: dict[tuple[Any, ...], _Document | None] = {}


def serve_openapi(ctx: ServerContext, request: Request, path: str) -> Response:
    """``GET /openapi/v2``, ``/openapi/v3`` or a v3 group-version document (404 else)."""
    if path == "/openapi/v2":
        content_type = _negotiate_v2(request.headers.get("Accept") or "*/*")
        document = _document(ctx, path)
        if document is None:
            raise errors.route_not_found()
        if content_type is None:
            return Response(status=406, headers={"Vary": "Accept"})
        return _serve(request, document, content_type)
    document = _document(ctx, path)
    if document is None:
        raise errors.route_not_found()
    return _serve(request, document, JSON)


def _document(ctx: ServerContext, path: str) -> _Document | None:
    registry = ctx.registry
    key = (id(ctx), registry.catalog.generation, tuple(sorted(
        (n, c["metadata"].get("resourceVersion", "")) for n, c in registry.crds.items())),
        registry.aggregation.openapi_generation, path)
    if key not in _cache:
        if len(_cache) > 256:
            _cache.clear()
        doc = _build(ctx, path)
        _cache[key] = None if doc is None else _Document(
            orjson.dumps(doc, option=orjson.OPT_SORT_KEYS if path != "/openapi/v2" else 0), doc)
    return _cache[key]


def _build(ctx: ServerContext, path: str) -> Any:
    catalog, aggregation = ctx.registry.catalog, ctx.registry.aggregation
    version = ctx.version.openapi_info_version
    if path == "/openapi/v2":
        return merge_v2(openapi_v2(catalog, crd_schemas(ctx), kubernetes_version=version),
                        aggregation)
    if path == "/openapi/v3":
        return merge_v3_index(openapi.openapi_v3_index(catalog, crd_schemas(ctx),
                                                       kubernetes_version=version),
                              aggregation)
    if path.startswith("/openapi/v3/"):
        gv = openapi.parse_group_version_path(path[len("/openapi/v3/"):])
        if gv is not None:
            return (openapi.openapi_v3_group_version(catalog, gv[0], gv[1], crd_schemas(ctx),
                                                     kubernetes_version=version)
                    or remote_v3(aggregation, *gv))
    return None


def crd_schemas(ctx: ServerContext) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Each established CRD version's ``openAPIV3Schema``, by (group, version, kind)."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for crd in ctx.registry.crds.values():
        info = resource_info_for(crd)
        if info is None:
            continue
        for version in info.versions:
            found = schema_for(crd, version)
            if found is not None:
                out[(info.group, version, info.kind)] = found
    return out


def _negotiate_v2(accept: str) -> str | None:
    """goautoneg: clauses by quality, then concrete types before wildcards; the first one
    a format matches wins."""
    clauses = []
    for position, raw in enumerate(accept.split(",")):
        mime, *params = [p.strip() for p in raw.split(";")]
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        type_, _, subtype = mime.partition("/")
        if type_:
            clauses.append((-q, type_ == "*", subtype == "*", position, type_, subtype or "*"))
    for _, _, _, _, type_, subtype in sorted(clauses):
        for accepted, served in _V2_FORMATS:
            if type_ in ("application", "*") and subtype in (accepted, "*"):
                return served
    return None


def _serve(request: Request, document: _Document, content_type: str) -> Response:
    headers = {"Vary": "Accept", "Etag": document.etag,
               "Last-Modified": formatdate(document.last_modified, usegmt=True)}
    if _not_modified(request, document):
        del headers["Last-Modified"]  # writeNotModified: the Etag says it
        return Response(status=304, headers=headers)
    return Response(body=document.body(content_type), content_type=content_type,
                    headers=headers)


def _not_modified(request: Request, document: _Document) -> bool:
    if request.method not in ("GET", "HEAD"):
        return False
    if_none_match = request.headers.get("If-None-Match")
    if if_none_match is not None:
        tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
        return "*" in tags or document.etag in tags
    since = request.headers.get("If-Modified-Since")
    if since:
        try:
            return int(document.last_modified) <= parsedate_to_datetime(since).timestamp()
        except (TypeError, ValueError):
            return False
    return False
