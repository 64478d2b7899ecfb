"""``kubegc.tools.ui`` in-process, on a dump: the sessions, the doctor's marks, the
read-only client and the routes (the browser tests drive the page itself, in
tests/e2e/ui)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from kubegc.api.auth import UserInfo
from kubegc.api.clock import ManualClock
from kubegc.api.errors import StatusError
from kubegc.api.resources import GroupVersionResource
from kubegc.client.dump import DumpClient
from kubegc.client.interface import ListOptions
from kubegc.tools.doctor import DoctorOptions, diagnose
from kubegc.tools.ui import ReadOnlyClient, Sessions, UIApp, UIRequest, UIResponse
from kubegc.tools.ui.views import doctor_marks

from .conftest import NOW, inventory_of

CM = GroupVersionResource("", "v1", "configmaps")


def cm(name: str, uid: str, *owners: dict[str, Any], deleting: bool = False,
       finalizers: tuple[str, ...] = ()) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "lab", "uid": uid,
                            "creationTimestamp": "2026-01-01T00:00:00Z",
                            "finalizers": list(finalizers)}
    if owners:
        meta["ownerReferences"] = list(owners)
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:05:00Z"
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def owner(name: str, uid: str, kind: str = "ConfigMap", api: str = "v1") -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "name": name, "uid": uid,
            "blockOwnerDeletion": True}


OBJECTS = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "lab", "uid": "ns"}},
    cm("top", "u-top", deleting=True, finalizers=("foregroundDeletion",)),
    cm("mid", "u-mid", owner("top", "u-top"), deleting=True, finalizers=("foregroundDeletion",)),
    cm("leaf", "u-leaf", owner("mid", "u-mid"), deleting=True, finalizers=("example.com/x",)),
    cm("lost", "u-lost", owner("nobody", "u-nobody")),
    cm("odd", "u-odd", owner("w", "u-w", "Widget", "example.com/v1")),
]


def test_a_login_token_works_once() -> None:
    sessions = Sessions(secure=True)
    token = sessions.new_login()
    session = sessions.redeem(token)
    assert session is not None and sessions.redeem(token) is None
    cookie = sessions.set_cookie(session)
    assert cookie.startswith(f"kubegc-ui={session};")
    assert all(a in cookie for a in ("HttpOnly", "SameSite=Strict", "Secure", "Path=/ui/"))
    assert sessions.check(f"other=1; kubegc-ui={session}")
    assert not sessions.check("kubegc-ui=forged") and not sessions.check("")
    assert not sessions.check(f"kubegc-ui={token}")  # a login token is no session


async def test_marks_follow_the_doctor_json() -> None:
    inv = await inventory_of(OBJECTS)
    marks = doctor_marks(diagnose(inv, DoctorOptions(stuck_after=0)).to_dict())
    chain = marks["chains"]["u-top"]
    assert chain["edges"] == [["u-top", "u-mid"], ["u-mid", "u-leaf"]]
    assert chain["leaves"] == ["u-leaf"]
    assert chain["text"] == ["ConfigMap/top ← ConfigMap/mid ← ConfigMap/leaf (holds it: its own "
                             "finalizer example.com/x is still there)"]
    assert marks["references"]["u-lost"] == {"u-nobody": "dangling"}
    assert marks["references"]["u-odd"] == {"u-w": "invalid"}
    assert "StuckDeletion" in marks["findings"]["u-top"]


@pytest.mark.parametrize("write", ["create", "update", "patch", "delete"])
async def test_the_page_client_never_writes(write: str) -> None:
    client = ReadOnlyClient(DumpClient(OBJECTS))
    calls = {"create": lambda: client.create(CM, OBJECTS[1], namespace="lab"),
             "update": lambda: client.update(CM, OBJECTS[1], namespace="lab"),
             "patch": lambda: client.patch(CM, "top", {}, namespace="lab"),
             "delete": lambda: client.delete(CM, "top", namespace="lab")}
    with pytest.raises(StatusError) as refused:
        await calls[write]()
    assert refused.value.code == 405
    assert (await client.get(CM, "top", namespace="lab"))["metadata"]["uid"] == "u-top"


def request(path: str, cookie: str = "", method: str = "GET", **query: str) -> UIRequest:
    return UIRequest(method, path, query, {"cookie": cookie} if cookie else {})


async def logged_in(app: UIApp) -> str:
    token = app.login_url().split("token=")[1]
    answer = await app.handle(request("/ui/login", token=token))
    assert answer.status == 303 and answer.headers["Location"] == "/ui/"
    return answer.headers["Set-Cookie"].split(";")[0]


async def first_event(answer: UIResponse) -> tuple[str, Any]:
    assert answer.stream is not None
    chunk = await anext(answer.stream)
    await answer.stream.aclose()  # type: ignore[attr-defined]
    head, data = chunk.decode().split("\n")[:2]
    return head.removeprefix("event: "), orjson.loads(data.removeprefix("data: "))


async def test_routes_need_the_session_and_only_read() -> None:
    app = UIApp(DumpClient(OBJECTS), clock=ManualClock(NOW), source="dump")
    try:
        for path in ("/ui/", "/ui/static/app.js", "/ui/api/stream"):
            assert (await app.handle(request(path))).status == 401
        cookie = await logged_in(app)
        page = await app.handle(request("/ui/", cookie))
        assert page.status == 200 and b'id="whatif-result"' in page.body
        assert "default-src 'self'" in page.headers["Content-Security-Policy"]
        assert (await app.handle(request("/ui/static/vendor/cytoscape.min.js", cookie))
                ).content_type.startswith("text/javascript")
        for path in ("/ui/static/../app.py", "/ui/static/nope.js"):
            assert (await app.handle(request(path, cookie))).status == 404
        assert (await app.handle(request("/ui/api/stream", cookie, "POST"))).status == 405
        event, snapshot = await first_event(await app.handle(
            request("/ui/api/stream", cookie, namespace="lab")))
        assert event == "snapshot"
        assert sorted(n["name"] for n in snapshot["nodes"]) == ["leaf", "lost", "mid", "odd",
                                                               "top"]
        assert snapshot["namespaces"] == ["lab"]
        assert snapshot["marks"]["chains"]["u-top"]["leaves"] == ["u-leaf"]
        found = await app.handle(request("/ui/api/find", cookie, q="cm/mid", namespace="lab"))
        assert orjson.loads(found.body)["id"] == "u-mid"
        missing = await app.handle(request("/ui/api/find", cookie, q="cm/none"))
        assert missing.status == 404 and b"ConfigMap/none not found" in missing.body
        unknown = await app.handle(request("/ui/api/find", cookie, q="nosuch/x"))
        assert unknown.status == 404 and b"doesn't have a resource type" in unknown.body
        answer = orjson.loads((await app.handle(request("/ui/api/details", cookie,
                                                        id="u-mid"))).body)
        assert answer["object"]["deleting"] == "2026-01-01T00:05:00Z"
        assert [f["kind"] for f in answer["doctor"]] == ["StuckDeletion"]
        assert answer["ancestors"]["root"]["children"][0]["object"]["name"] == "top"
        assert answer["descendants"]["root"]["children"][0]["object"]["name"] == "leaf"
        assert (await app.handle(request("/ui/api/whatif", cookie, id="u-mid"))).status == 501
    finally:
        await app.close()


# -- sessions of users ---------------------------------------------------------------------

JANE = UserInfo("jane", groups=("dev", "system:authenticated"))
PODS = GroupVersionResource("", "v1", "pods")
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {
    "name": "web", "namespace": "lab", "uid": "u-pod", "creationTimestamp": "2026-01-01T00:00:00Z"},
    "spec": {"containers": [{"name": "c", "image": "x"}]}}


class NoPods(ReadOnlyClient):
    """A user's client that may read everything but pods (403, as the authorizer says)."""

    async def list(self, gvr: GroupVersionResource, *, namespace: str = "",
                   options: ListOptions | None = None) -> Any:
        if gvr.resource == "pods":
            raise StatusError(403, "Forbidden", 'pods is forbidden: User "jane" cannot list '
                                                'resource "pods"')
        return await super().list(gvr, namespace=namespace, options=options)


def test_a_session_belongs_to_the_user_its_login_was_minted_for() -> None:
    sessions = Sessions()
    session = sessions.redeem(sessions.new_login(JANE))
    other = sessions.redeem(sessions.new_login())
    assert session is not None and other is not None
    assert sessions.user_of(f"kubegc-ui={session}") == JANE
    assert sessions.user_of(f"kubegc-ui={other}") is None
    assert sessions.user_of("kubegc-ui=forged") is None


async def test_each_user_sees_what_its_client_may_list() -> None:
    objects = [*OBJECTS, POD]
    asked: list[UserInfo] = []

    def client_for(user: UserInfo) -> Any:
        asked.append(user)
        return NoPods(DumpClient(objects)) if user == JANE else DumpClient(objects)

    admin = UserInfo("admin", groups=("system:masters",))
    app = UIApp(DumpClient(objects), clock=ManualClock(NOW), source="dump",
                client_for=client_for, owner=admin)
    try:
        login = await app.handle(UIRequest("GET", "/ui/api/login", {}, {}, JANE))
        assert login.status == 200
        token = login.body.decode().strip().split("token=")[1]
        answer = await app.handle(request("/ui/login", token=token))
        jane = answer.headers["Set-Cookie"].split(";")[0]
        _, seen = await first_event(await app.handle(request("/ui/api/stream", jane,
                                                             namespace="lab")))
        assert "web" not in {n["name"] for n in seen["nodes"]}  # jane may not list pods
        assert "top" in {n["name"] for n in seen["nodes"]}
        cookie = await logged_in(app)  # the owner's URL, as printed at start-up
        _, seen = await first_event(await app.handle(request("/ui/api/stream", cookie,
                                                             namespace="lab")))
        assert "web" in {n["name"] for n in seen["nodes"]}
        assert asked == [JANE, admin]  # one picture per user, each through its own client
        refused = await app.handle(UIRequest("GET", "/ui/api/login", {}, {},
                                             UserInfo("system:anonymous")))
        assert refused.status == 401
    finally:
        await app.close()
