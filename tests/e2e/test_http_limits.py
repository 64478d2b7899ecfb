"""HTTP limits of a real ``kubegc serve``, as Go's net/http has them: an unauthenticated
32 MiB request header is refused (431) without the server's memory growing with it; a
request without ``Host`` is refused; plain HTTP on the TLS port gets Go's answer."""

from __future__ import annotations

import contextlib
import select
import socket
import ssl
from pathlib import Path
from urllib.parse import urlsplit

from tests.e2e.conftest import Server


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def tls_socket(server: Server) -> ssl.SSLSocket:
    parts = urlsplit(server.url)
    raw = socket.create_connection((parts.hostname, parts.port), timeout=30)
    context = ssl.create_default_context(cafile=str(server.ca_file))
    return context.wrap_socket(raw, server_hostname=parts.hostname)


def read_answer(sock: ssl.SSLSocket) -> bytes:
    answer = b""
    with contextlib.suppress(OSError):
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def try_read(sock: ssl.SSLSocket) -> bytes:
    """What application data has arrived, without waiting for more."""
    sock.setblocking(False)
    try:
        return sock.recv(65536)
    except (ssl.SSLWantReadError, BlockingIOError):
        return b""
    finally:
        sock.settimeout(30)


def test_a_32_mib_header_is_refused_without_growing_memory(server: Server) -> None:
    """Sent piecewise, the client watching for the answer between pieces (one thread: an
    SSL socket is not to be read and written at once)."""
    before = rss_bytes(server.process.pid)
    sock = tls_socket(server)
    answer = b""
    with contextlib.suppress(OSError):
        sock.sendall(b"GET /api/v1/namespaces HTTP/1.1\r\nHost: kubegc\r\nX-Big: ")
        chunk = b"a" * (1 << 16)
        for _ in range(32 * 16):
            if select.select([sock], [], [], 0)[0]:
                answer = try_read(sock)  # readable may only be TLS session tickets
                if answer:
                    break
            sock.sendall(chunk)
    answer += read_answer(sock)
    sock.close()
    grown = rss_bytes(server.process.pid) - before
    assert answer.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), answer
    assert grown < 8 * 1024 * 1024, f"the server grew {grown / 2 ** 20:.1f} MiB"


def test_http_1_1_without_host_is_refused(server: Server) -> None:
    sock = tls_socket(server)
    sock.sendall(b"GET /healthz HTTP/1.1\r\n\r\n")
    answer = read_answer(sock)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 400 Bad Request: missing required Host header\r\n")
    assert answer.endswith(b"\r\n\r\n400 Bad Request: missing required Host header")


def test_plain_http_on_the_tls_port(server: Server) -> None:
    parts = urlsplit(server.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(b"GET /api HTTP/1.1\r\nHost: kubegc\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer == (b"HTTP/1.0 400 Bad Request\r\n\r\n"
                      b"Client sent an HTTP request to an HTTPS server.\n")
