"""WATCH: a chunked stream of newline-delimited ``{"type","object"}`` events.

Events queued for a watcher are coalesced into one write (per-write overhead, not
bandwidth, limits fan-out: docs/architecture.md, "A watch cache"); each event's JSON is
encoded once and shared by every watcher serving the same version. With the Table Accept
header every event object is a one-row Table, as kubectl's ``get -w`` expects.
"""

from __future__ import annotations

import asyncio
import contextlib

import orjson

from kubegc.api import errors
from kubegc.api.goformat import html_escape
from kubegc.api.meta import BOOKMARK, ERROR
from kubegc.registry import Change, Target, WatchRequest
from kubegc.registry.generic.rest import Storage, Watcher
from kubegc.server.context import JSON, ServerContext
from kubegc.server.faults.stream import guarded
from kubegc.server.http import Request, StreamResponse
from kubegc.server.negotiation import Shape, partial_metadata, response_shape
from kubegc.server.tables import to_table
from kubegc.server.verbs.params import flag, int_param

#: Upstream's default when the client sets no timeout: a random 30–60 minutes; we keep one
#: hour so that clients (kubectl get -w) never see the stream end early.
DEFAULT_TIMEOUT_SECONDS = 3600


async def watch(ctx: ServerContext, request: Request, storage: Storage, t: Target,
                name: str = "") -> StreamResponse:
    if not isinstance(storage, Watcher):
        raise errors.method_not_supported(t.gr, "watch")
    q = request.query
    field_selector = q.get("fieldSelector", "")
    if name:
        field_selector = ",".join(filter(None, [field_selector, f"metadata.name={name}"]))
    send_initial = q.get("sendInitialEvents")
    req = WatchRequest(
        label_selector=q.get("labelSelector", ""), field_selector=field_selector,
        resource_version=q.get("resourceVersion", ""),
        allow_bookmarks=flag(request, "allowWatchBookmarks"),
        send_initial_events=None if send_initial is None else send_initial.lower() == "true",
        timeout_seconds=float(int_param(request, "timeoutSeconds", DEFAULT_TIMEOUT_SECONDS)),
    )
    registry_watch = storage.watch(t, req)
    shape = response_shape(request.headers.get("Accept", ""))
    handler = ctx.registry.table(t) if shape is Shape.TABLE else None
    include = q.get("includeObject", "Metadata")
    first_table = [True]

    def encode(change: Change) -> bytes:
        if change.type in (ERROR, BOOKMARK):
            obj = change.object
        elif handler is not None:
            obj = to_table(handler, [change.object], now=ctx.clock.now(), include_object=include,
                           with_column_definitions=first_table[0])
            first_table[0] = False
        elif shape is Shape.METADATA:
            obj = partial_metadata(change.object)
        else:
            line = change.line()
            if line is not None:
                return line
            obj = change.object
        return html_escape(orjson.dumps({"type": change.type, "object": obj})) + b"\n"

    response = StreamResponse(status=200, headers={"Content-Type": JSON})
    await registry_watch.start()  # bad requests fail here, before the headers
    batches = guarded(aiter(registry_watch.batches()), registry_watch.close)
    try:
        await response.prepare(request)
        async for batch in batches:
            await response.write(b"".join(encode(c) for c in batch))
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        registry_watch.close()
        with contextlib.suppress(Exception):
            await batches.aclose()  # type: ignore[attr-defined]
    with contextlib.suppress(ConnectionResetError, RuntimeError):
        await response.write_eof()
    return response
