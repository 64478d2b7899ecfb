"""A parsed HTTP request, as the handlers see it: method, path, query, headers, body.

The body is read completely before the handler runs (kube-apiserver reads whole bodies
too, up to its 3 MiB limit), so ``read()`` never waits on the network.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import overload
from urllib.parse import parse_qsl, unquote


class RequestEntityTooLarge(Exception):
    """The body was larger than the server's limit; it was discarded unread."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"Request entity too large: limit is {limit}")
        self.limit = limit


class Headers(Mapping[str, str]):
    """Case-insensitive, read-only request headers. A header sent more than once is one
    value joined with ", " (RFC 9110 §5.3); ``getall`` gives each line's value apart, as
    Go's ``http.Header`` keeps them (``Impersonate-Group`` is repeated once per group, and a
    group's name may hold a comma)."""

    __slots__ = ("_items", "_repeated")

    def __init__(self, items: dict[str, str],
                 repeated: dict[str, list[str]] | None = None) -> None:
        self._items = items  # lower-case names
        self._repeated = repeated  # lower-case names of headers sent more than once

    def getall(self, key: str) -> list[str]:
        """Every value of header ``key``, one per header line, in the order sent."""
        name = key.lower()
        if self._repeated is not None and name in self._repeated:
            return list(self._repeated[name])
        value = self._items.get(name)
        return [] if value is None else [value]

    @overload  # type: ignore[override]
    def get(self, key: str) -> str | None: ...
    @overload
    def get(self, key: str, default: str) -> str: ...
    def get(self, key: str, default: str | None = None) -> str | None:
        return self._items.get(key.lower(), default)

    def __getitem__(self, key: str) -> str:
        return self._items[key.lower()]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


class Query(Mapping[str, str]):
    """Query parameters: ``q[name]`` and ``get`` give the first value, ``getall`` every one."""

    __slots__ = ("_items",)

    def __init__(self, query_string: str) -> None:
        items: dict[str, list[str]] = {}
        if query_string:
            for name, value in parse_qsl(query_string, keep_blank_values=True):
                items.setdefault(name, []).append(value)
        self._items = items

    def __getitem__(self, key: str) -> str:
        return self._items[key][0]

    @overload  # type: ignore[override]
    def get(self, key: str) -> str | None: ...
    @overload
    def get(self, key: str, default: str) -> str: ...
    def get(self, key: str, default: str | None = None) -> str | None:
        # Mapping.get raises and catches a KeyError for a parameter not sent: the usual
        # case, on every request (bench/bench_faults.py)
        values = self._items.get(key)
        return default if values is None else values[0]

    def getall(self, key: str, default: list[str] | None = None) -> list[str]:
        values = self._items.get(key)
        if values is None:
            if default is None:
                raise KeyError(key)
            return default
        return list(values)

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


_EMPTY_QUERY = Query("")


class Request:
    """One request. ``path`` is percent-decoded; ``path_qs`` is the raw target."""

    __slots__ = (
        "_body",
        "_path",
        "_query",
        "_query_string",
        "_too_large",
        "connection",
        "headers",
        "keep_alive",
        "method",
        "named",
        "on_stream",
        "path_qs",
        "peer_certificate",
        "version",
    )

    def __init__(self, method: str, target: str, headers: Headers, *, version: str = "1.1",
                 keep_alive: bool = True, body: bytes = b"", too_large: int = 0,
                 connection: object = None, peer_certificate: bytes | None = None) -> None:
        self.method = method
        self.path_qs = target
        self.headers = headers
        self.version = version
        self.keep_alive = keep_alive
        self._body = body
        self._too_large = too_large  # the body limit that was exceeded, or 0
        raw_path, _, self._query_string = target.partition("?")
        self._path = unquote(raw_path) if "%" in raw_path else raw_path
        self._query: Query | None = None if self._query_string else _EMPTY_QUERY
        #: the connection it arrived on (``http.protocol.HttpProtocol``); streaming
        #: responses write through it.
        self.connection = connection
        #: the client certificate the TLS handshake verified (DER), or None: the
        #: connection is plain, or its client sent no certificate (Go's
        #: ``req.TLS.PeerCertificates[0]``; a certificate that fails verification fails
        #: the handshake, see ``tls_sniff``)
        self.peer_certificate = peer_certificate
        #: the name a create's body gives, noted by the create verb (which decodes the
        #: body anyway) for the request log (``server/faults/requestlog.py``)
        self.named = ""
        #: called with the status when a streaming response sends its head (the audit
        #: filter's ``ResponseStarted``), or None
        self.on_stream: Callable[[int], None] | None = None

    @property
    def path(self) -> str:
        return self._path

    @property
    def query(self) -> Query:
        if self._query is None:
            self._query = Query(self._query_string)
        return self._query

    @property
    def body(self) -> bytes:
        """The body as received (empty when it was over the limit)."""
        return b"" if self._too_large else self._body

    async def read(self) -> bytes:
        """The whole body; raises ``RequestEntityTooLarge`` when it was over the limit."""
        if self._too_large:
            raise RequestEntityTooLarge(self._too_large)
        return self._body


__all__ = ["Headers", "Query", "Request", "RequestEntityTooLarge"]
