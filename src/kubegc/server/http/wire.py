"""The bytes the HTTP/1.1 protocol writes itself (its ``Date`` line, the plain-text
answers it refuses with) and what it reads off a connection (the client certificate),
as Go's net/http writes and reads them."""

from __future__ import annotations

import asyncio
import time
from email.utils import formatdate

_date_cache: tuple[int, bytes] = (0, b"")


def date_line() -> bytes:
    """The ``Date`` header and the blank line that ends a head, cached per second."""
    global _date_cache
    now = int(time.time())
    if _date_cache[0] != now:
        _date_cache = (now, f"Date: {formatdate(now, usegmt=True)}\r\n\r\n".encode())
    return _date_cache[1]


def peer_certificate(transport: asyncio.BaseTransport) -> bytes | None:
    """The client certificate a TLS connection's handshake verified (DER), or None. The
    SSL protocol (asyncio's or uvloop's) calls ``connection_made`` once the handshake is
    done, so the certificate is known by then; a plain connection has no ``ssl_object``."""
    ssl_object = transport.get_extra_info("ssl_object")
    if ssl_object is None:
        return None
    try:
        der: bytes | None = ssl_object.getpeercert(binary_form=True)
    except ValueError:  # the handshake has not completed (never, once connected)
        return None
    return der or None


def plain(status: int, reason: str, text: str) -> bytes:
    body = text.encode()
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n").encode() + date_line() + body


class HeadRefused(Exception):
    """Stops the parser at a head that is refused (431, or 400 without Host)."""


class BodyRefused(Exception):
    """Stops the parser after a head whose body is refused unread (``_refuse_body``)."""
