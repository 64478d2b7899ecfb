"""Who may see the page: the login URL ``kubegc serve`` prints works once and becomes a
session cookie; without it the page and its data answer 401. And ``kubegc ui``, which
serves the same page for any cluster or dump, read-only, on loopback."""

from __future__ import annotations

import json
import re
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..conftest import Server, eventually, start_server, stop_server
from .conftest import find, new_page, open_page, summary, wait_text
from .test_page import EVERY_NAMESPACE, cluster_objects, counts

pytestmark = pytest.mark.kubectl


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def fetch(url: str, ca: Path | None = None, **headers: str) -> tuple[int, dict[str, str], str]:
    context = ssl.create_default_context(cafile=str(ca)) if ca else None
    opener = urllib.request.build_opener(_NoRedirect(), urllib.request.HTTPSHandler(
        context=context))
    request = urllib.request.Request(url, headers=headers)
    try:
        with opener.open(request, timeout=30) as resp:
            return resp.status, dict(resp.headers), resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[Server]:
    """A server of its own, whose start-up login URL nobody used yet."""
    server = start_server(tmp_path / "kubegc")
    yield server
    stop_server(server)


def startup_login_url(server: Server) -> str:
    found = re.search(r"owner-graph page \(login works once\): (\S+)", server.log.read_text())
    assert found is not None, server.log_tail()
    return found.group(1)


def test_the_printed_login_url_works_once(fresh_server: Server, browser: Any) -> None:
    server = fresh_server
    url = startup_login_url(server)
    assert url.startswith(f"{server.url}/ui/login?token=")
    for path in ("/ui/", "/ui/static/app.js", "/ui/api/stream", "/ui/api/details?id=x"):
        status, _, _ = fetch(server.url + path, server.ca_file)
        assert status == 401, path  # neither cookie nor token
        status, _, _ = fetch(server.url + path, server.ca_file,
                             Authorization=f"Bearer {server.token}")
        assert status == 401, path  # the API's token is not the page's session
    status, headers, _ = fetch(url, server.ca_file)
    assert status == 303 and headers["Location"] == "/ui/"
    cookie = headers["Set-Cookie"]
    for attribute in ("HttpOnly", "SameSite=Strict", "Secure", "Path=/ui/"):
        assert attribute in cookie
    session = cookie.split(";")[0]
    status, _, body = fetch(server.url + "/ui/", server.ca_file, Cookie=session)
    assert status == 200 and 'id="summary"' in body
    status, _, _ = fetch(url, server.ca_file)
    assert status == 401  # spent
    status, _, _ = fetch(server.url + "/ui/", server.ca_file, Cookie="kubegc-ui=forged")
    assert status == 401
    status, _, body = fetch(server.url + "/ui/api/login", server.ca_file)
    assert status == 401
    # a fresh URL, for the API token's holder; in a browser it opens the page, under the
    # page's own Content-Security-Policy
    status, _, fresh = fetch(server.url + "/ui/api/login", server.ca_file,
                             Authorization=f"Bearer {server.token}")
    assert status == 200
    page = new_page(browser, bypass_csp=False)
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    try:
        page.goto(fresh.strip())
        assert page.url == f"{server.url}/ui/"
        wait_text(page, "#summary", lambda t: "objects" in t and "(live)" in t)
        assert page.js_errors == []
        # everything it loads comes from kubegc itself: no CDN, no network needed
        assert requested and all(u.startswith(server.url + "/ui/") for u in requested), requested
        other = new_page(browser)  # another browser, the same (spent) URL
        try:
            other.goto(fresh.strip())
            assert "already used" in other.inner_text("body")
        finally:
            other.context.close()
    finally:
        page.context.close()


def test_the_page_is_read_only(server: Server) -> None:
    _, headers, _ = fetch(login(server), server.ca_file)
    session = headers["Set-Cookie"].split(";")[0]
    request = urllib.request.Request(server.url + "/ui/api/details?id=x", method="POST",
                                     data=b"{}", headers={"Cookie": session})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, context=ssl.create_default_context(
            cafile=str(server.ca_file)), timeout=30)
    assert refused.value.code == 405


def login(server: Server) -> str:
    status, body = server.http("GET", "/ui/api/login")
    assert status == 200
    return body.decode().strip()


class UI:
    """A ``kubegc ui`` process; ``url`` is the first line it printed."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "kubegc.cli", "ui", *args],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()

    def stop(self) -> str:
        self.process.terminate()
        _, err = self.process.communicate(timeout=20)
        return err


def test_kubegc_ui_for_a_cluster(server: Server, ns: str, browser: Any) -> None:
    server.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2", "-n", ns)
    ui = UI("--kubeconfig", str(server.kubeconfig), "--port", "0")
    page = new_page(browser)
    try:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/ui/login\?token=\S+", ui.url), ui.url
        open_page(page, ui.url, ns)
        eventually(lambda: summary(page) == counts(cluster_objects(server, ns)))
        server.kubectl("scale", "deployment", "web", "--replicas=3", "-n", ns)
        eventually(lambda: summary(page) == counts(cluster_objects(server, ns)) == (
            5 + EVERY_NAMESPACE, 0))
        find(page, "deploy/web")
        wait_text(page, "#details", lambda t: "Descendants" in t and "ReplicaSet/web-" in t)
        assert page.js_errors == []
    finally:
        page.context.close()
        assert "Traceback" not in ui.stop()


def test_kubegc_ui_for_a_dump(server: Server, ns: str, browser: Any, tmp_path: Path) -> None:
    server.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=2", "-n", ns)
    eventually(lambda: len(cluster_objects(server, ns)) == 4 + EVERY_NAMESPACE)
    dump = tmp_path / "dump.json"
    dump.write_text(server.kubectl("get", "deployments,replicasets,pods,namespaces", "-A",
                                   "-o", "json").stdout)
    expected = sum(1 for i in json.loads(dump.read_text())["items"]
                   if i["metadata"].get("namespace") == ns)
    ui = UI("--from", str(dump))
    page = new_page(browser)
    try:
        open_page(page, ui.url, ns)
        eventually(lambda: summary(page) == (expected, 0))
        find(page, "deployment/web")
        wait_text(page, "#details", lambda t: "Descendants" in t)
        assert page.js_errors == []
    finally:
        page.context.close()
        ui.stop()


def test_kubegc_ui_says_what_is_wrong_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "kubegc.cli", "ui", "--kubeconfig",
                           str(tmp_path / "missing")], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith("kubegc ui: cannot load kubeconfig:")
    assert len(done.stderr.strip().splitlines()) == 1


def test_serve_without_the_page(tmp_path: Path) -> None:
    server = start_server(tmp_path / "kubegc", "--no-ui")
    try:
        assert "owner-graph page" not in server.log.read_text()
        status, _, _ = fetch(server.url + "/ui/", server.ca_file,
                             Authorization=f"Bearer {server.token}")
        assert status == 404
    finally:
        stop_server(server)
