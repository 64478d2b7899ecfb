"""Who may see the page: one-time login tokens that become session cookies.

``Sessions.new_login()`` mints a token for a login URL (``/ui/login?token=...``), printed
by ``kubegc serve`` at start-up and as the first line of ``kubegc ui``. Redeeming it once
(``redeem``) creates a session, sent to the browser as an HttpOnly, SameSite=Strict
cookie scoped to ``/ui/``; the token is then spent. Every other request under ``/ui/``
needs that cookie (``check``). Tokens and sessions are kept as SHA-256 digests, so a
lookup's timing says nothing about a secret, and live only as long as the process.

Ownership: one ``Sessions`` per served page, used from the event loop only.
"""

from __future__ import annotations

import hashlib
import secrets
from http.cookies import CookieError, SimpleCookie

COOKIE = "kubegc-ui"
#: Sessions at most (the oldest is forgotten first): a page is opened by a few people.
MAX_SESSIONS = 1000


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


class Sessions:
    def __init__(self, *, secure: bool = False) -> None:
        self.secure = secure  # add ``Secure`` to the cookie (the page is served over TLS)
        self._logins: set[bytes] = set()
        self._sessions: dict[bytes, None] = {}  # insertion-ordered: the oldest first

    def new_login(self) -> str:
        """A fresh one-time login token."""
        token = secrets.token_urlsafe(24)
        self._logins.add(_digest(token))
        return token

    def redeem(self, token: str) -> str | None:
        """A new session id for an unspent login token (which is then spent), else None."""
        digest = _digest(token)
        if digest not in self._logins:
            return None
        self._logins.discard(digest)
        session = secrets.token_urlsafe(32)
        self._sessions[_digest(session)] = None
        while len(self._sessions) > MAX_SESSIONS:
            del self._sessions[next(iter(self._sessions))]
        return session

    def check(self, cookie_header: str) -> bool:
        """Whether the request's ``Cookie`` header carries a live session."""
        if not cookie_header:
            return False
        try:
            morsel = SimpleCookie(cookie_header).get(COOKIE)
        except CookieError:
            return False
        return morsel is not None and _digest(morsel.value) in self._sessions

    def set_cookie(self, session: str) -> str:
        """The ``Set-Cookie`` header value for ``session``."""
        cookie = f"{COOKIE}={session}; Path=/ui/; HttpOnly; SameSite=Strict"
        return cookie + "; Secure" if self.secure else cookie
