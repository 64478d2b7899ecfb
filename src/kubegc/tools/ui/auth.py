"""Who may see the page: one-time login tokens that become session cookies.

``Sessions.new_login(user)`` mints a token for a login URL (``/ui/login?token=...``),
printed by ``kubegc serve`` at start-up and as the first line of ``kubegc ui``. Redeeming
it once (``redeem``) creates a session, sent to the browser as an HttpOnly,
SameSite=Strict cookie scoped to ``/ui/``; the token is then spent. Every other request
under ``/ui/`` needs that cookie (``check``, ``user_of``). A session belongs to the user
its login was minted for (None: the page's own client, ``kubegc ui``), and the page reads
the cluster as that user. Tokens and sessions are kept as SHA-256 digests, so a lookup's
timing says nothing about a secret, and live only as long as the process.

Ownership: one ``Sessions`` per served page, used from the event loop only.
"""

from __future__ import annotations

import hashlib
import secrets
from http.cookies import CookieError, SimpleCookie

from kubegc.api.auth import UserInfo

COOKIE = "kubegc-ui"
#: Sessions at most (the oldest is forgotten first): a page is opened by a few people.
MAX_SESSIONS = 1000


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


class Sessions:
    def __init__(self, *, secure: bool = False) -> None:
        self.secure = secure  # add ``Secure`` to the cookie (the page is served over TLS)
        #: unspent login tokens and live sessions → the user they belong to
        self._logins: dict[bytes, UserInfo | None] = {}
        self._sessions: dict[bytes, UserInfo | None] = {}  # insertion-ordered: oldest first

    def new_login(self, user: UserInfo | None = None) -> str:
        """A fresh one-time login token, for a session of ``user``."""
        token = secrets.token_urlsafe(24)
        self._logins[_digest(token)] = user
        while len(self._logins) > MAX_SESSIONS:
            del self._logins[next(iter(self._logins))]
        return token

    def redeem(self, token: str) -> str | None:
        """A new session id for an unspent login token (which is then spent), else None."""
        digest = _digest(token)
        if digest not in self._logins:
            return None
        user = self._logins.pop(digest)
        session = secrets.token_urlsafe(32)
        self._sessions[_digest(session)] = user
        while len(self._sessions) > MAX_SESSIONS:
            del self._sessions[next(iter(self._sessions))]
        return session

    def check(self, cookie_header: str) -> bool:
        """Whether the request's ``Cookie`` header carries a live session."""
        return self._session(cookie_header) is not None

    def user_of(self, cookie_header: str) -> UserInfo | None:
        """The user of the live session the ``Cookie`` header carries (None: the page's
        own client's; call only after ``check``)."""
        digest = self._session(cookie_header)
        return self._sessions.get(digest) if digest is not None else None

    def _session(self, cookie_header: str) -> bytes | None:
        if not cookie_header:
            return None
        try:
            morsel = SimpleCookie(cookie_header).get(COOKIE)
        except CookieError:
            return None
        if morsel is None:
            return None
        digest = _digest(morsel.value)
        return digest if digest in self._sessions else None

    def set_cookie(self, session: str) -> str:
        """The ``Set-Cookie`` header value for ``session``."""
        cookie = f"{COOKIE}={session}; Path=/ui/; HttpOnly; SameSite=Strict"
        return cookie + "; Secure" if self.secure else cookie
