"""``UIApp``: the owner-graph page's HTTP surface, independent of any HTTP server.

A host (``kubegc serve`` mounts it at ``/ui/``; ``kubegc ui`` serves it alone on
loopback — both in the composition root) turns each request under ``/ui`` into a
``UIRequest`` and writes back the ``UIResponse``, streaming ``stream`` when it is set.

    GET /ui/login?token=T      a one-time token → session cookie, 303 to the page
    GET /ui/                   the page (static/index.html)
    GET /ui/static/FILE        its scripts, styles and vendored libraries
    GET /ui/api/stream?namespace=NS      server-sent events (``feed``)
    GET /ui/api/find?q=KIND/NAME&namespace=NS
    GET /ui/api/details?id=ID
    GET /ui/api/whatif?id=ID&policy=Background|Foreground|Orphan
    GET /ui/api/login          a fresh login URL for the requester
                               (``kubectl get --raw /ui/api/login``)

Everything but ``/ui/login`` needs the session cookie (401 without it); only GET and HEAD
are served (405 otherwise): the page is read-only.

A session is its user's: ``kubegc serve`` authenticates ``/ui/api/login`` as the API
authenticates any request (and impersonation: ``--as``) and hands the user in
``UIRequest.user``; the login URL it prints at start-up is the admin's (``owner``). The
page then reads the cluster through ``client_for(user)`` — the API's authorizer decides
what each user's page may list, so the page shows nobody more than kubectl would. One
live picture (informers) per user starts with that user's first data request and stops
``IDLE_STOP`` seconds after their last page closed. ``kubegc ui`` has no users: its one
picture reads through the client it was given (its kubeconfig's identity).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Hashable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import orjson

from kubegc.api.auth import ANONYMOUS, UserInfo
from kubegc.api.clock import Clock
from kubegc.api.errors import StatusError
from kubegc.client.interface import Client
from kubegc.tools.plan import SimulationFactory
from kubegc.tools.resolve import UnknownKind
from kubegc.tools.ui import answers
from kubegc.tools.ui.auth import Sessions
from kubegc.tools.ui.feed import Feed, external
from kubegc.tools.ui.live import LiveObjects, object_id
from kubegc.tools.ui.views import node_of

log = logging.getLogger(__name__)

PREFIX = "/ui"
#: Seconds the informers keep running after the last page closed.
IDLE_STOP = 600.0
_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
          ".css": "text/css; charset=utf-8", ".png": "image/png", ".svg": "image/svg+xml",
          ".txt": "text/plain; charset=utf-8", ".md": "text/plain; charset=utf-8"}
_SECURITY = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
             "X-Frame-Options": "DENY", "Cache-Control": "no-store",
             "Content-Security-Policy": "default-src 'self'; style-src 'self' 'unsafe-inline'; "
                                        "img-src 'self' data:; frame-ancestors 'none'"}
_NEEDS_LOGIN = ("This page needs a session. Open the login URL kubegc printed (kubegc serve "
                "prints one at start-up, kubegc ui as its first line); each works once. For "
                "another one: kubectl get --raw /ui/api/login")


@dataclass
class UIRequest:
    method: str
    path: str  # e.g. "/ui/api/stream"
    query: Mapping[str, str]
    headers: Mapping[str, str]  # looked up with lower-case names
    #: who sent it, when the host authenticated the request (``kubegc serve`` does for
    #: ``/ui/api/login``); None: not authenticated by the host
    user: UserInfo | None = None


@dataclass
class UIResponse:
    status: int = 200
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    stream: AsyncIterator[bytes] | None = None


def _json(data: Any, status: int = 200) -> UIResponse:
    return UIResponse(status, orjson.dumps(data), "application/json")


def _error(status: int, message: str) -> UIResponse:
    status_body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                   "message": message, "code": status}
    if status == 401:  # what clients read as "log in" (kubectl: You must be logged in)
        status_body["reason"] = "Unauthorized"
    return _json(status_body, status)


def _assets() -> dict[str, Any]:
    """Every file under static/, by its path there (nothing else is ever served)."""
    found: dict[str, Any] = {}

    def walk(node: Any, prefix: str) -> None:
        for child in node.iterdir():
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            else:
                found[prefix + child.name] = child

    walk(resources.files("kubegc.tools.ui") / "static", "")
    return found


@dataclass
class _View:
    """One user's live picture and the pages reading it."""

    live: LiveObjects
    feed: Feed
    pages: int = 0
    idle: asyncio.TimerHandle | None = None


def _user_key(user: UserInfo | None) -> Hashable:
    """Users with the same name, uid, groups and extra see the same picture."""
    if user is None:
        return None
    return (user.name, user.uid, user.groups,
            tuple(sorted((k, tuple(v)) for k, v in user.extra.items())))


class UIApp:
    def __init__(self, client: Client, *, clock: Clock, source: str,
                 plan_factory: SimulationFactory | None = None, secure: bool = False,
                 follow_cluster_clock: bool = True,
                 client_for: Callable[[UserInfo], Client] | None = None,
                 owner: UserInfo | None = None) -> None:
        """``client_for(user)``: the client a session of ``user`` reads through (None:
        every session reads through ``client``); ``owner``: whose session a login URL
        minted without a user opens (the URL ``kubegc serve`` prints: the admin's)."""
        self.sessions = Sessions(secure=secure)
        self.base_url = ""  # where the page is served, for login URLs (set by the host)
        self._client = client
        self._client_for = client_for
        self.owner = owner
        self._clock = clock
        self._source = source
        self._follow = follow_cluster_clock
        self._factory = plan_factory
        self._assets = _assets()
        self._views: dict[Hashable, _View] = {}
        self._starting = asyncio.Lock()
        self._planning = asyncio.Lock()  # one what-if at a time: each runs a whole kubegc

    def login_url(self, user: UserInfo | None = None) -> str:
        """A one-time login URL for a session of ``user`` (default: ``owner``)."""
        token = self.sessions.new_login(user if user is not None else self.owner)
        return f"{self.base_url}{PREFIX}/login?token={token}"

    async def close(self) -> None:
        for key in list(self._views):
            view = self._views.get(key)
            if view is not None and view.idle is not None:
                view.idle.cancel()
            await self._stop_live(key, force=True)

    # -- requests --------------------------------------------------------------------

    async def handle(self, request: UIRequest) -> UIResponse:
        response = await self._dispatch(request)
        for name, value in _SECURITY.items():
            response.headers.setdefault(name, value)
        return response

    async def _dispatch(self, request: UIRequest) -> UIResponse:
        if request.method not in ("GET", "HEAD"):
            return _error(405, f"{request.method} is not allowed: the page is read-only")
        path = request.path
        if path == f"{PREFIX}/login":
            return self._login(request.query.get("token", ""))
        if path == f"{PREFIX}/api/login":
            return self._new_login(request)
        cookie = request.headers.get("cookie", "")
        if not self.sessions.check(cookie):
            if path.startswith(f"{PREFIX}/api/"):
                return _error(401, _NEEDS_LOGIN)
            return UIResponse(401, _NEEDS_LOGIN.encode() + b"\n")
        if path == PREFIX:
            return UIResponse(303, headers={"Location": f"{PREFIX}/"})
        if path == f"{PREFIX}/":
            return self._asset("index.html")
        if path.startswith(f"{PREFIX}/static/"):
            return self._asset(path[len(f"{PREFIX}/static/"):])
        try:
            return await self._api(path, request.query, self.sessions.user_of(cookie))
        except (answers.NotFound, UnknownKind) as e:
            return _error(404, str(e).strip("'\""))
        except ValueError as e:
            return _error(400, str(e))
        except StatusError as e:
            return _error(e.code, e.message)

    def _login(self, token: str) -> UIResponse:
        session = self.sessions.redeem(token) if token else None
        if session is None:
            return UIResponse(401, b"This login URL is not valid or was already used. "
                              + _NEEDS_LOGIN.encode() + b"\n")
        return UIResponse(303, headers={"Location": f"{PREFIX}/",
                                        "Set-Cookie": self.sessions.set_cookie(session)})

    def _new_login(self, request: UIRequest) -> UIResponse:
        """A login URL for the user the host authenticated (``kubegc serve``); a host that
        authenticates nobody (``kubegc ui``) mints none: its URL is the one it printed."""
        user = request.user
        if user is None or user.name == ANONYMOUS:
            return _error(401, "a login URL is for an authenticated user: send a "
                               "credential (a bearer token or a client certificate)")
        return UIResponse(body=(self.login_url(user) + "\n").encode())

    def _asset(self, name: str) -> UIResponse:
        asset = self._assets.get(name)
        if asset is None:
            return _error(404, f"no such file: {name}")
        suffix = name[name.rfind("."):]
        return UIResponse(body=asset.read_bytes(),
                          content_type=_TYPES.get(suffix, "application/octet-stream"))

    async def _api(self, path: str, query: Mapping[str, str],
                   user: UserInfo | None) -> UIResponse:
        key = _user_key(user)
        view = await self._ensure_live(key, user)
        live = view.live
        await live.show_namespace(query.get("namespace", ""))
        what = path[len(f"{PREFIX}/api/"):]
        if what == "stream":
            return UIResponse(content_type="text/event-stream",
                              stream=self._stream(key, view, query.get("namespace", "")))
        if what == "find":
            namespace = query.get("namespace", "")
            obj = answers.find(live, query.get("q", ""), namespace)
            node = node_of(obj, live.clock.now())
            # a cluster-scoped object found from a namespace's page: the page draws it
            return _json({"id": object_id(obj), "node": external(node) if namespace and
                          node["namespace"] != namespace else node})
        if what == "details":
            return _json(await answers.details(live, query.get("id", "")))
        if what == "whatif":
            if self._factory is None:
                return _error(501, "the what-if needs kubegc's planner, which this host "
                                   "does not provide")
            async with self._planning:
                return _json(await answers.what_if(live, query.get("id", ""),
                                                   query.get("policy", "Background"),
                                                   self._factory))
        return _error(404, f"no such endpoint: {path}")

    # -- the live pictures -----------------------------------------------------------

    def _client_of(self, user: UserInfo | None) -> Client:
        if user is None or self._client_for is None:
            return self._client
        return self._client_for(user)

    async def _ensure_live(self, key: Hashable, user: UserInfo | None) -> _View:
        async with self._starting:
            view = self._views.get(key)
            if view is None:
                live = LiveObjects(self._client_of(user), clock=self._clock,
                                   source=self._source, follow_cluster_clock=self._follow)
                await live.start()
                view = self._views[key] = _View(live, Feed(live))
            return view

    async def _stream(self, key: Hashable, view: _View, namespace: str
                      ) -> AsyncIterator[bytes]:
        view.pages += 1
        if view.idle is not None:
            view.idle.cancel()
            view.idle = None
        try:
            async for message in view.feed.events(namespace):
                yield message
        finally:
            view.pages -= 1
            if not view.pages:
                view.idle = asyncio.get_running_loop().call_later(
                    IDLE_STOP, lambda: asyncio.ensure_future(self._stop_live(key)))

    async def _stop_live(self, key: Hashable, *, force: bool = False) -> None:
        async with self._starting:
            view = self._views.get(key)
            if view is None or (view.pages and not force):
                return
            del self._views[key]
            await view.feed.close()
            with contextlib.suppress(Exception):
                await view.live.stop()
