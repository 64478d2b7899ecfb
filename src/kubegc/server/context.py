"""What every handler needs: the registry, the clock, and response helpers."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from kubegc.api.clock import Clock
from kubegc.api.errors import StatusError
from kubegc.api.goformat import html_escape
from kubegc.api.version import EffectiveVersion
from kubegc.registry import Registry
from kubegc.server.audit import Auditor
from kubegc.server.authn import Authentication
from kubegc.server.faults import FaultRegistry
from kubegc.server.http import AnyResponse, Request, Response, StreamResponse

if TYPE_CHECKING:
    from kubegc.server.aggregator import Aggregator

DebugHandler = Callable[[Request], Awaitable[AnyResponse]]

JSON = "application/json"

log = logging.getLogger(__name__)


@dataclass
class ServerContext:
    registry: Registry
    clock: Clock
    #: who sent a request; what they may do is ``registry.authorizer``'s to say
    authentication: Authentication = field(default_factory=Authentication)
    debug_handlers: dict[str, DebugHandler] = field(default_factory=dict)
    #: handlers of whole path prefixes that authenticate their own requests (the
    #: composition root mounts the owner-graph page at /ui); checked before authentication
    mounts: dict[str, DebugHandler] = field(default_factory=dict)
    readiness_checks: list[Callable[[], bool]] = field(default_factory=list)
    server_address: str = "127.0.0.1:6443"
    #: --audit-policy-file and --audit-log-*: None, as upstream by default, audits nothing
    auditor: Auditor | None = None
    #: the APIServices' availability and the remote groups' proxy (kube-aggregator)
    aggregator: Aggregator | None = None
    #: the version served and emulated (``kube-apiserver --emulated-version``)
    version: EffectiveVersion = field(default_factory=EffectiveVersion)
    #: injected faults and the request log (``/debug/kubegc/faults``, docs/faults.md)
    faults: FaultRegistry = field(init=False)

    def __post_init__(self) -> None:
        self.faults = FaultRegistry(now=self.clock.now, monotonic=self.clock.monotonic,
                                    revision=lambda: self.registry.kv.current_revision)

    def ready(self) -> bool:
        return all(check() for check in self.readiness_checks)


def json_response(obj: Any, status: int = 200) -> Response:
    """An API object, list, Status, Table or discovery document as kube-apiserver's
    serializer writes it (``json.NewEncoder(w).Encode(obj)``): HTML characters escaped,
    and a newline after the body."""
    return encoded_response(orjson.dumps(obj), status)


def encoded_response(encoded: bytes, status: int = 200) -> Response:
    """``json_response`` of an object already encoded (the stored bytes)."""
    return Response(body=html_escape(encoded) + b"\n", status=status, content_type=JSON)


def can_stream(request: Request) -> bool:
    """Whether a whole answer may instead be written in chunks as it is made: not to HTTP/1.0
    (no chunked encoding) nor HEAD, and not when the request is audited (an audit event
    records the whole answer's status and, at RequestResponse, its object)."""
    return request.version != "1.0" and request.method != "HEAD" and request.on_stream is None


async def encoded_stream_response(request: Request, pieces: AsyncIterator[bytes]
                                  ) -> StreamResponse:
    """``encoded_response`` of the concatenation of ``pieces``, each escaped and written
    (chunked, with back-pressure) as it comes: the same bytes, never held whole. A piece
    that fails after the head was sent (compaction overtook the list) cuts the answer short:
    the connection is closed, and one line is logged."""
    response = StreamResponse(status=200, content_type=JSON)
    await response.prepare(request)
    try:
        async for piece in pieces:
            await response.write(html_escape(piece))
        await response.write(b"\n")
    except ConnectionResetError:
        return response  # the client went away
    except StatusError as e:
        log.warning("%s %s cut short after its head was sent: %s", request.method,
                    request.path_qs, e.message)
        response.abort()
        return response
    await response.write_eof()
    return response


def status_response(err: StatusError) -> Response:
    """A failure Status; one that suggests a delay (``details.retryAfterSeconds``: a 429 of
    the eviction subresource, a 504 of a too new resourceVersion) says it in a
    ``Retry-After`` header too, as upstream's ``responsewriters.ErrorNegotiated``."""
    response = json_response(err.to_status(), err.code)
    if err.details.retry_after_seconds > 0:
        response.headers["Retry-After"] = str(err.details.retry_after_seconds)
    return response
