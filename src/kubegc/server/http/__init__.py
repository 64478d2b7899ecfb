"""kubegc's HTTP/1.1 server: an ``asyncio.Protocol`` with the httptools parser, and the
small request/response surface the verb handlers use (modelled on aiohttp's names:
``Request.query/headers/read()``, ``Response``, ``StreamResponse.prepare/write/write_eof``).

May import: nothing else of kubegc (it knows HTTP, not Kubernetes).
"""

from kubegc.server.http.protocol import Handler, HttpProtocol
from kubegc.server.http.request import Headers, Query, Request, RequestEntityTooLarge
from kubegc.server.http.response import (
    AnyResponse,
    BodyNotAllowed,
    Response,
    ResponseHeaders,
    StreamResponse,
)
from kubegc.server.http.server import HTTPServer

__all__ = ["AnyResponse", "BodyNotAllowed", "HTTPServer", "Handler", "Headers", "HttpProtocol",
           "Query", "Request", "RequestEntityTooLarge", "Response", "ResponseHeaders",
           "StreamResponse"]
